import Foundation
import MeasurementEventsHTTP
import MeasurementEventsSockets

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A small HTTP/1.1 server on 127.0.0.1 (BSD sockets, one thread per connection) that records
/// every request and answers from a script: for tests of the HTTP trackers, and as the local
/// collector of the demo.
///
/// ```swift
/// let collector = LoopbackCollector()
/// collector.script([.status(500), .ok])       // then `defaultReply` (200) for the rest
/// try collector.start()
/// // … point an encoder at collector.baseURL …
/// collector.waitForRequests(2, timeout: 10)
/// ```
public final class LoopbackCollector: @unchecked Sendable {
    // @unchecked: mutable state is in `state`, behind `lock`; each socket is closed by the one
    // thread that uses it.

    public struct Request: Sendable {
        public var method: String
        /// Path and query, as sent: `/v1/batch`, `/mp/collect?measurement_id=…`.
        public var target: String
        /// Lowercased names.
        public var headers: [String: String]
        /// The body, decompressed when it came with `Content-Encoding: gzip`.
        public var body: [UInt8]
        /// The body's bytes as they came over the connection.
        public var wireBody: [UInt8]
        public var bodyText: String { String(decoding: body, as: UTF8.self) }
        /// Whether the body came in gzip.
        public var isGzip: Bool { headers["content-encoding"]?.lowercased() == "gzip" }
    }

    public struct Reply: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: String
        /// Seconds to wait before answering (to make the client time out).
        public var delay: TimeInterval
        /// How the reply goes on the wire.
        public var shape = Shape.contentLength

        /// How a reply goes on the wire: as a well-formed HTTP/1.1 reply or as one of the faults
        /// a client must survive.
        public enum Shape: Sendable {
            /// `Content-Length` and the body; the connection stays open.
            case contentLength
            /// `Transfer-Encoding: chunked`, in chunks of this many bytes; the connection stays open.
            case chunked(Int)
            /// These bytes as they are, then the connection closes (no bytes: dropped unanswered).
            case raw([UInt8])
            /// The reply's first bytes (`Content-Length` announces the whole body), then a reset
            /// (`RST`, with `SO_LINGER` 0).
            case resetAfter(bytes: Int)
            /// No answer at all: the connection stays open until the client closes it.
            case silent
            /// A chunked reply that never ends: chunks of 64 KB until the client closes.
            case endless
        }

        public init(status: Int, headers: [String: String] = [:], body: String = "", delay: TimeInterval = 0) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
        }

        private init(shape: Shape, status: Int = 200, body: String = "") {
            self.init(status: status, body: body)
            self.shape = shape
        }

        public static let ok = Reply(status: 200, body: "{\"code\":200}")
        public static func status(_ status: Int, body: String = "") -> Reply { Reply(status: status, body: body) }
        public static func tooManyRequests(retryAfter seconds: Int) -> Reply {
            Reply(status: 429, headers: ["Retry-After": String(seconds)], body: "slow down")
        }
        public static func slow(_ delay: TimeInterval) -> Reply { Reply(status: 200, delay: delay) }
        /// `body` in chunks of `chunkSize` bytes.
        public static func chunked(_ status: Int = 200, body: String, chunkSize: Int) -> Reply {
            Reply(shape: .chunked(max(1, chunkSize)), status: status, body: body)
        }
        /// Bytes that are not HTTP, then the connection closes.
        public static func garbage(_ text: String = "NOT HTTP AT ALL\r\n\r\n") -> Reply {
            Reply(shape: .raw(Array(text.utf8)))
        }
        /// The connection closes without a reply.
        public static let dropConnection = Reply(shape: .raw([]))
        /// A reset after the first `bytes` bytes of a 200 with `body`.
        public static func reset(afterBytes bytes: Int, body: String) -> Reply {
            Reply(shape: .resetAfter(bytes: bytes), body: body)
        }
        /// No answer, ever.
        public static let silent = Reply(shape: .silent)
        /// A chunked 200 whose body never ends.
        public static let endless = Reply(shape: .endless)
    }

    private struct State {
        var listener: Int32 = -1
        var clients: Set<Int32> = []
        var requests: [Request] = []
        var script: [Reply] = []
        var defaultReply = Reply.ok
        var responder: (@Sendable (Request) -> Reply?)?
        var refusalMarker: String?
        var dropsConnectionsAfter: TimeInterval?
        var connectionsDropped = 0
        var connectionsAccepted = 0
        var keepsRequests = true
        var requestsReceived = 0
        var port: UInt16
    }

    private let lock = NSCondition()
    private var state: State

    /// The address listened on: `127.0.0.1`, or `::1` for IPv6.
    public let host: String

    /// `port` 0 picks a free port at ``start()``; `host` is `127.0.0.1` or `::1`.
    public init(port: UInt16 = 0, host: String = "127.0.0.1") {
        state = State(port: port)
        self.host = host
    }

    deinit { stop() }

    private func withState<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    public var port: UInt16 { withState { $0.port } }
    public var baseURL: URL { URL(string: "http://\(host.contains(":") ? "[\(host)]" : host):\(port)")! }
    public var requests: [Request] { withState { $0.requests } }

    /// Requests received so far, kept or not.
    public var requestsReceived: Int { withState { $0.requestsReceived } }

    /// Whether each request is kept in ``requests`` (the default). A long run at tens of
    /// thousands of events a second turns it off: the requests it kept grew its memory by about
    /// 13 MB a second, which a run that watches the process's memory would blame on the tracker.
    public func keepRequests(_ keeps: Bool) { withState { $0.keepsRequests = keeps } }

    /// Replies used, in order, for the next requests; afterwards ``setDefaultReply(_:)``'s.
    public func script(_ replies: [Reply]) { withState { $0.script.append(contentsOf: replies) } }
    public func setDefaultReply(_ reply: Reply) { withState { $0.defaultReply = reply } }

    /// Answers from `responder` whenever it returns a reply (before the script): for a server
    /// whose answer depends on the request, such as one that refuses more than 10 events.
    public func respond(with responder: @escaping @Sendable (Request) -> Reply?) {
        withState { $0.responder = responder }
    }

    /// Answers 400 to every request whose (decompressed) body contains `marker`, as Segment's
    /// and PostHog's APIs refuse a whole batch for one invalid event. `nil` stops refusing.
    public func refuseRequests(containing marker: String?) { withState { $0.refusalMarker = marker } }

    /// Closes each connection `seconds` after answering on it, without saying so
    /// (`Connection: keep-alive` is still sent): a server or proxy dropping idle keep-alive
    /// connections. `nil` keeps connections open.
    public func dropConnections(after seconds: TimeInterval?) { withState { $0.dropsConnectionsAfter = seconds } }

    /// Connections accepted so far: each request on a kept-alive connection adds none.
    public var connectionsAccepted: Int { withState { $0.connectionsAccepted } }

    /// Connections closed by ``dropConnections(after:)`` so far.
    public var connectionsDropped: Int { withState { $0.connectionsDropped } }

    /// Blocks until at least `count` requests arrived or `timeout` seconds passed.
    @discardableResult
    public func waitForRequests(_ count: Int, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while state.requests.count < count {
            if !lock.wait(until: deadline) { return state.requests.count >= count }
        }
        return true
    }

    /// A port that was free a moment ago: for "refused until the server comes up".
    public static func unusedPort() throws -> UInt16 {
        let probe = LoopbackCollector()
        try probe.start()
        let port = probe.port
        probe.stop()
        return port
    }

    public struct SocketError: Error, CustomStringConvertible {
        public let call: String
        public let code: Int32
        public var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    public func start() throws {
        let opened: (socket: Int32, port: UInt16)
        do {
            opened = try TCPListener.open(host: host, port: port)
        } catch .system(let call, let code) {
            throw SocketError(call: "\(call) on port \(port)", code: code)
        } catch {
            throw SocketError(call: "\(error)", code: EINVAL)
        }
        withState {
            $0.listener = opened.socket
            $0.port = opened.port
        }
        let thread = Thread { [self] in
            TCPListener.acceptLoop(
                opened.socket, isListening: { withState { $0.listener == opened.socket } },
                admit: { client in
                    withState { state in
                        guard state.listener == opened.socket else { return false }
                        state.clients.insert(client)
                        state.connectionsAccepted += 1
                        return true
                    }
                }, serve: { [self] in serve($0) })
        }
        thread.name = "LoopbackCollector.accept"
        thread.start()
    }

    /// Closes the listener and every connection. Requests already recorded stay readable.
    ///
    /// Each socket is closed by the thread that uses it, never from here: a number closed under
    /// a thread still blocked on it could be handed to the next collector's socket, and that
    /// thread would then accept or read the next test's connections.
    public func stop() {
        // Under the lock: a serve thread removes its socket before closing it, so every number
        // here is still ours. Shutting down wakes `recv` and (on Linux) `accept`; the accept loop
        // also polls for the stop.
        withState { state in
            for client in state.clients { shutdown(client, Int32(SHUT_RDWR)) }  // fits: a shutdown constant
            if state.listener >= 0 { shutdown(state.listener, Int32(SHUT_RDWR)) }  // fits: a shutdown constant
            state.listener = -1
        }
    }

    private func serve(_ client: Int32) {
        var buffer: [UInt8] = []
        defer {
            withState { _ = $0.clients.remove(client) }
            close(client)
        }
        while true {
            guard let request = readRequest(client, buffer: &buffer) else { return }
            let (responder, dropAfter, marker) = withState { state in
                state.requestsReceived += 1
                if state.keepsRequests { state.requests.append(request) }
                return (state.responder, state.dropsConnectionsAfter, state.refusalMarker)
            }
            let reply =
                Self.undecodable(request)
                ?? marker.flatMap {
                    request.bodyText.contains($0) ? Reply.status(400, body: "{\"error\":\"invalid event\"}") : nil
                }
                ?? responder?(request)
                ?? withState { state -> Reply in
                    state.script.isEmpty ? state.defaultReply : state.script.removeFirst()
                }
            lock.broadcast()
            if reply.delay > 0 { Thread.sleep(forTimeInterval: reply.delay) }
            // As HTTP/1.1 servers must: a client that asks for `Connection: close` gets it.
            let closes = request.headers["connection"]?.lowercased() == "close"
            switch reply.shape {
            case .contentLength:
                guard write(reply, to: client, closing: closes), !closes else { return }
            case .chunked(let size):
                guard writeChunked(reply, chunkSize: size, to: client, closing: closes), !closes else { return }
            case .raw(let bytes):
                _ = sendAll(bytes, to: client)
                return
            case .resetAfter(let count):
                _ = sendAll(Array(message(reply, closing: false).prefix(count)), to: client)
                var linger = linger(l_onoff: 1, l_linger: 0)
                setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
                return
            case .silent:
                // Until the client closes (or `stop` shuts the socket down): recv returns 0 or fails.
                var ignored: [UInt8] = []
                while receive(client, into: &ignored) { ignored.removeAll() }
                return
            case .endless:
                let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                let chunk =
                    Array("10000\r\n".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 65_536) + Array("\r\n".utf8)
                guard sendAll(Array(head.utf8), to: client) else { return }
                while sendAll(chunk, to: client) {}
                return
            }
            if let dropAfter {
                if dropAfter > 0 { Thread.sleep(forTimeInterval: dropAfter) }
                withState { $0.connectionsDropped += 1 }
                return
            }
        }
    }

    private func readRequest(_ client: Int32, buffer: inout [UInt8]) -> Request? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        while true {
            if let end = find(separator, in: buffer) {
                headerEnd = end
                break
            }
            guard receive(client, into: &buffer) else { return nil }
        }
        let head = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
        buffer.removeSubrange(..<(headerEnd! + 4))
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        if headers["expect"]?.lowercased() == "100-continue" {
            _ = sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), to: client)
        }
        var body: [UInt8] = []
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            while true {
                while find(Array("\r\n".utf8), in: buffer) == nil {
                    guard receive(client, into: &buffer) else { return nil }
                }
                let lineEnd = find(Array("\r\n".utf8), in: buffer)!
                let sizeField = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
                let size = max(0, Int(sizeField, radix: 16) ?? 0)  // checked: parsing gives nil out of range
                buffer.removeSubrange(..<(lineEnd + 2))
                while buffer.count < size + 2 {
                    guard receive(client, into: &buffer) else { return nil }
                }
                body.append(contentsOf: buffer[..<size])
                buffer.removeSubrange(..<(size + 2))
                if size == 0 { break }
            }
        } else {
            let length = max(0, Int(headers["content-length"] ?? "0") ?? 0)  // checked: parsing gives nil out of range
            while buffer.count < length {
                guard receive(client, into: &buffer) else { return nil }
            }
            body = Array(buffer[..<length])
            buffer.removeSubrange(..<length)
        }
        var decoded = body
        if headers["content-encoding"]?.lowercased() == "gzip" { decoded = Self.gunzip(body) ?? [] }
        return Request(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: decoded,
            wireBody: body)
    }

    /// A 400 for a body that says it is gzip and is not, as a real server answers.
    private static func undecodable(_ request: Request) -> Reply? {
        guard request.isGzip, !request.wireBody.isEmpty, gunzip(request.wireBody) == nil else { return nil }
        return .status(400, body: "{\"error\":\"malformed gzip body\"}")
    }

    /// `bytes` decompressed from gzip, or `nil` when they are not a whole gzip stream (or grow past 64 MB).
    public static func gunzip(_ bytes: [UInt8]) -> [UInt8]? {
        GzipBody.decompress(bytes, limit: 64 * 1024 * 1024)
    }

    private func receive(_ client: Int32, into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(client, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
    }

    private func write(_ reply: Reply, to client: Int32, closing: Bool) -> Bool {
        sendAll(message(reply, closing: closing), to: client)
    }

    private func message(_ reply: Reply, closing: Bool) -> [UInt8] {
        let body = Array(reply.body.utf8)
        return head(reply, closing: closing, framing: "Content-Length: \(body.count)") + body
    }

    private func head(_ reply: Reply, closing: Bool, framing: String) -> [UInt8] {
        var head = "HTTP/1.1 \(reply.status) \(Self.reason(reply.status))\r\n"
        head += "\(framing)\r\nContent-Type: application/json\r\n"
        head += closing ? "Connection: close\r\n" : "Connection: keep-alive\r\n"
        for (name, value) in reply.headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8)
    }

    private func writeChunked(_ reply: Reply, chunkSize: Int, to client: Int32, closing: Bool) -> Bool {
        let body = Array(reply.body.utf8)
        var bytes = head(reply, closing: closing, framing: "Transfer-Encoding: chunked")
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + chunkSize)
            bytes +=
                Array("\(String(end - offset, radix: 16));ext=1\r\n".utf8) + body[offset..<end] + Array("\r\n".utf8)
            offset = end
        }
        bytes += Array("0\r\nX-Trailer: done\r\n\r\n".utf8)
        return sendAll(bytes, to: client)
    }

    private func sendAll(_ bytes: [UInt8], to client: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Darwin)
                let sent = bytes[offset...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
            #else
                let sent = bytes[offset...].withUnsafeBytes {
                    send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))  // fits: a flag constant
                }
            #endif
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    private func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return start }
        }
        return nil
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 408: return "Request Timeout"
        case 413: return "Payload Too Large"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }
}
