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

/// The local event inspector: an HTTP/1.1 server (POSIX sockets, one thread per connection)
/// serving the page, the JSON API, the app's trail entries and the vendor endpoints.
///
/// Safety: binds to 127.0.0.1 unless told otherwise; refuses a request whose `Host` is not an
/// address it serves (DNS rebinding) and a cross-site `Origin`; POSTs must be
/// `application/json` (a cross-site form cannot send it without a CORS preflight, which the
/// inspector never answers); no CORS header is sent. Limits: header size, body size, a
/// deadline per request (a slow client is cut off), connections at once; every refusal is
/// answered 4xx (or the connection is closed) and counted in ``InspectorStore/Counts/refusedRequests``.
package final class InspectorServer: @unchecked Sendable {
    // @unchecked: mutable state is behind `lock`; each client socket is used and closed by its own thread.

    /// How the server listens and what it accepts.
    package struct Configuration: Sendable {
        /// The address to bind: `127.0.0.1` unless the developer asks for another interface.
        package var host = "127.0.0.1"
        /// The port; 0 picks a free one.
        package var port: UInt16 = 9_400
        /// How many events are kept.
        package var capacity = 10_000
        /// The largest request body, compressed or not, in bytes.
        package var maximumBodyBytes = 8 * 1024 * 1024
        /// The largest request head, in bytes.
        package var maximumHeaderBytes = 32 * 1024
        /// Seconds a request may take to arrive; a slower client is cut off.
        package var requestDeadline: TimeInterval = 10
        /// Connections served at once; more are closed at once (counted).
        package var maximumConnections = 64
        /// Extra names the `Host` header may carry (besides the bound address, `localhost`, `127.0.0.1` and `[::1]`).
        package var allowedHostNames: [String] = []

        package init() {}
    }

    package struct StartError: Error, CustomStringConvertible {
        package var description: String
    }

    package let configuration: Configuration
    package let store: InspectorStore
    private let catalog: InspectorCatalog?
    private let lock = NSLock()
    private var listener: Int32 = -1
    private var clients: Set<Int32> = []
    private var boundPort: UInt16 = 0

    /// A server; call ``start()``.
    ///
    /// - Parameters:
    ///   - configuration: where to listen and the limits.
    ///   - catalog: descriptions and rules to show beside events, read from a package's catalogs.
    package init(configuration: Configuration = Configuration(), catalog: InspectorCatalog? = nil) {
        self.configuration = configuration
        self.catalog = catalog
        store = InspectorStore(capacity: configuration.capacity)
    }

    deinit { stop() }

    /// The port it listens on (after ``start()``).
    package var port: UInt16 {
        lock.lock()
        defer { lock.unlock() }
        return boundPort
    }

    /// The page's address.
    package var baseURL: URL {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return URL(string: "http://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(port)")!
    }

    /// Binds and starts accepting on a thread of its own.
    package func start() throws(StartError) {
        let opened: (socket: Int32, port: UInt16)
        do {
            opened = try TCPListener.open(host: configuration.host, port: configuration.port)
        } catch .notIPv4(let host) {
            throw StartError(description: "--host \(host) is not an IPv4 address (such as 127.0.0.1 or 0.0.0.0)")
        } catch {
            throw StartError(
                description:
                    "cannot listen on \(configuration.host):\(configuration.port): \(error.systemMessage ?? "\(error)") (another inspector running? try --port)"
            )
        }
        lock.lock()
        listener = opened.socket
        boundPort = opened.port
        lock.unlock()
        let thread = Thread { [self] in
            TCPListener.acceptLoop(
                opened.socket, isListening: { isListening(opened.socket) }, admit: { admit($0, on: opened.socket) },
                serve: { [self] in serve($0) })
        }
        thread.name = "InspectorServer.accept"
        thread.start()
    }

    /// Stops accepting and closes every connection (each by the thread that uses it).
    package func stop() {
        lock.lock()
        for client in clients { shutdown(client, Int32(SHUT_RDWR)) }  // fits: a shutdown constant
        if listener >= 0 { shutdown(listener, Int32(SHUT_RDWR)) }  // fits: a shutdown constant
        listener = -1
        lock.unlock()
    }

    private func isListening(_ socketFD: Int32) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return listener == socketFD
    }

    /// Takes a connection unless the server stopped or serves as many as it may (counted).
    private func admit(_ client: Int32, on socketFD: Int32) -> Bool {
        // A slow client: each receive waits at most a second, and the request's deadline ends it.
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        lock.lock()
        let stopped = listener != socketFD
        let admitted = !stopped && clients.count < configuration.maximumConnections
        if admitted { clients.insert(client) }
        lock.unlock()
        if !admitted && !stopped { store.refuse("too many connections") }
        return admitted
    }

    // MARK: Requests

    /// One parsed request.
    package struct Request: Sendable {
        package var method: String
        package var path: String
        package var query: [String: String]
        /// Lowercased names.
        package var headers: [String: String]
        /// Decompressed when it came in gzip.
        package var body: [UInt8]
    }

    /// One reply.
    package struct Reply: Sendable {
        package var status: Int
        package var contentType = "application/json; charset=utf-8"
        package var body: [UInt8]
        package var extraHeaders: [String: String] = [:]
        package var closes = false

        static func json(_ status: Int, _ value: some Encodable) -> Reply {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return Reply(status: status, body: Array((try? encoder.encode(value)) ?? Data("{}".utf8)))
        }

        static func error(_ status: Int, _ message: String, closes: Bool = false) -> Reply {
            var reply = json(status, ["error": message])
            reply.closes = closes
            return reply
        }
    }

    private enum ReadResult {
        case request(Request)
        case refused(Reply, reason: String)
        case closed
    }

    private func serve(_ client: Int32) {
        var buffer: [UInt8] = []
        defer {
            lock.lock()
            clients.remove(client)
            lock.unlock()
            close(client)
        }
        while true {
            let reply: Reply
            switch readRequest(client, buffer: &buffer) {
            case .closed: return
            case .refused(let refusal, let reason):
                store.refuse(reason)
                _ = send(refusal, to: client, closing: true)
                return
            case .request(let request):
                reply = handle(request)
                let closes = reply.closes || request.headers["connection"]?.lowercased() == "close"
                guard send(reply, to: client, closing: closes), !closes else { return }
            }
        }
    }

    private func readRequest(_ client: Int32, buffer: inout [UInt8]) -> ReadResult {
        let deadline = Date().addingTimeInterval(configuration.requestDeadline)
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = Self.find(separator, in: buffer)
            if headerEnd != nil { break }
            if buffer.count > configuration.maximumHeaderBytes {
                return .refused(
                    .error(431, "the request head is over \(configuration.maximumHeaderBytes) bytes", closes: true),
                    reason: "head too large")
            }
            switch receive(client, into: &buffer, deadline: deadline) {
            case .some(true): continue
            case .some(false): return .closed
            case nil:
                return buffer.isEmpty
                    ? .closed
                    : .refused(
                        .error(
                            408, "the request took longer than \(configuration.requestDeadline) s", closes: true),
                        reason: "slow client")
            }
        }
        let end = headerEnd!
        let head = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeSubrange(..<(end + 4))
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3 else {
            return .refused(.error(400, "malformed request line", closes: true), reason: "malformed request")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        if headers["transfer-encoding"] != nil {
            return .refused(
                .error(411, "send a Content-Length (chunked bodies are not taken)", closes: true),
                reason: "chunked body")
        }
        let lengthField = headers["content-length"] ?? "0"
        guard let length = Int(lengthField), length >= 0 else {  // checked: nil
            return .refused(
                .error(400, "Content-Length \"\(lengthField)\" is not a number", closes: true),
                reason: "malformed request")
        }
        guard length <= configuration.maximumBodyBytes else {
            return .refused(
                .error(
                    413, "the body is \(length) bytes; the inspector takes at most \(configuration.maximumBodyBytes)",
                    closes: true), reason: "body too large")
        }
        while buffer.count < length {
            switch receive(client, into: &buffer, deadline: deadline) {
            case .some(true): continue
            case .some(false): return .closed
            case nil:
                return .refused(
                    .error(408, "the body took longer than \(configuration.requestDeadline) s", closes: true),
                    reason: "slow client")
            }
        }
        var body = Array(buffer[..<length])
        buffer.removeSubrange(..<length)
        if headers["content-encoding"]?.lowercased() == "gzip" {
            guard let inflated = GzipBody.decompress(body, limit: configuration.maximumBodyBytes) else {
                return .refused(
                    .error(
                        400,
                        "the body says gzip and is not a whole gzip stream (truncated, corrupt, or over \(configuration.maximumBodyBytes) bytes inflated)"
                    ), reason: "bad gzip")
            }
            body = inflated
        }
        let target = String(requestLine[1])
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(keyValue[0]).removingPercentEncoding ?? String(keyValue[0])
                let value = keyValue.count > 1 ? String(keyValue[1]).replacingOccurrences(of: "+", with: " ") : ""
                query[key] = value.removingPercentEncoding ?? value
            }
        }
        return .request(
            Request(method: String(requestLine[0]), path: String(parts[0]), query: query, headers: headers, body: body))
    }

    // MARK: Routing

    /// Whether `host` (a `Host` header) names this server: the bound address, a loopback name,
    /// or a name given with ``Configuration/allowedHostNames``; anything else is DNS rebinding.
    package func acceptsHost(_ host: String?) -> Bool {
        guard let host, !host.isEmpty else { return false }
        var name = host.lowercased()
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let port = name[name.index(after: close)...]
            guard port.isEmpty || port == ":\(self.port)" else { return false }
            name = String(name[...close])
        } else if let colon = name.lastIndex(of: ":") {
            guard name[name.index(after: colon)...] == "\(self.port)" else { return false }
            name = String(name[..<colon])
        }
        var allowed: Set<String> = ["127.0.0.1", "localhost", "[::1]"]
        allowed.formUnion(configuration.allowedHostNames.map { $0.lowercased() })
        if configuration.host != "0.0.0.0" { allowed.insert(configuration.host) }
        return allowed.contains(name)
    }

    /// Answers one request (in-process: the tests call it directly too).
    package func handle(_ request: Request) -> Reply {
        guard acceptsHost(request.headers["host"]) else {
            store.refuse("wrong Host")
            return .error(
                421,
                "Host \"\(request.headers["host"] ?? "")\" is not this inspector's address (DNS rebinding is refused); to reach it from a device, start it with --host 0.0.0.0 --allow-host <this machine's name or address>",
                closes: true)
        }
        if let origin = request.headers["origin"], !acceptsHost(Self.hostOfOrigin(origin)) {
            store.refuse("cross-site Origin")
            return .error(403, "requests from \(origin) are refused")
        }
        switch (request.method, request.path) {
        case ("GET", "/"), ("GET", "/index.html"):
            let nonce = UUID().uuidString.replacingOccurrences(of: "-", with: "")
            return Reply(
                status: 200, contentType: "text/html; charset=utf-8",
                body: Array(InspectorPage.html(nonce: nonce).utf8),
                extraHeaders: [
                    "Content-Security-Policy": InspectorPage.contentSecurityPolicy(nonce: nonce),
                    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
                ])
        case ("GET", "/api/events"):
            let since = Int(request.query["since"] ?? "0") ?? 0  // checked: nil
            let limit = Int(request.query["limit"] ?? "") ?? configuration.capacity  // checked: nil
            let events = store.events(
                since: since, name: request.query["name"], status: request.query["status"], limit: max(1, limit))
            let counts = store.currentCounts
            return .json(200, EventsPage(cursor: counts.cursor, evicted: counts.evicted, events: events))
        case ("GET", "/api/counts"):
            return .json(200, store.currentCounts)
        case ("POST", "/api/reset"):
            if let refusal = requireJSON(request) { return refusal }
            store.reset()
            return .json(200, ["reset": true])
        case ("POST", "/inspector/v1/entries"):
            if let refusal = requireJSON(request) { return refusal }
            return ingest(request) { (body) throws(VendorRequestReader.Refusal) in
                try VendorRequestReader.appEntries(body)
            }
        case ("POST", let path) where VendorRequestReader.vendorPaths[path] != nil:
            if let refusal = requireJSON(request) { return refusal }
            return ingest(request) { (body) throws(VendorRequestReader.Refusal) in
                try VendorRequestReader.vendorEvents(path: path, body: body)
            }
        case (_, "/"), (_, "/api/events"), (_, "/api/counts"), (_, "/api/reset"), (_, "/inspector/v1/entries"):
            store.refuse("wrong method")
            return .error(405, "\(request.method) is not allowed on \(request.path)")
        default:
            store.refuse("unknown path")
            return .error(404, "no such endpoint: \(request.path)")
        }
    }

    struct EventsPage: Encodable {
        var cursor: Int
        var evicted: Int
        var events: [InspectedEvent]
    }

    private func requireJSON(_ request: Request) -> Reply? {
        let type = request.headers["content-type"]?.lowercased() ?? ""
        guard type.hasPrefix("application/json") else {
            store.refuse("wrong content type")
            return .error(415, "send Content-Type: application/json (got \"\(type)\")")
        }
        return nil
    }

    private func ingest(_ request: Request, read: ([UInt8]) throws(VendorRequestReader.Refusal) -> [InspectedEvent])
        -> Reply
    {
        do {
            var events = try read(request.body)
            if let catalog {
                for index in events.indices { events[index].catalog = catalog.info(for: events[index].name) }
            }
            store.add(events)
            if request.path == "/debug/mp/collect" {
                // GA4's validation server answers {"validationMessages": [...]} (developers.google.com/
                // analytics/devguides/collection/protocol/ga4/validating-events).
                let messages = events.flatMap { event in
                    event.findings.map { ["description": $0, "validationCode": "VALUE_INVALID"] }
                }
                return .json(200, ["validationMessages": messages])
            }
            return .json(200, ["accepted": events.count])
        } catch {
            store.refuse(error.reason)
            return .error(400, "\(error.reason): \(error.detail)")
        }
    }

    static func hostOfOrigin(_ origin: String) -> String? {
        guard let url = URL(string: origin), let host = url.host else { return nil }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return url.port.map { "\(bracketed):\($0)" } ?? bracketed
    }

    // MARK: Bytes

    /// `true` on data, `false` when the peer closed, `nil` past the deadline.
    private func receive(_ client: Int32, into buffer: inout [UInt8], deadline: Date) -> Bool? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(client, &chunk, chunk.count, 0)
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
                return true
            }
            if count < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
                if Date() >= deadline { return nil }
                continue
            }
            return false
        }
    }

    private func send(_ reply: Reply, to client: Int32, closing: Bool) -> Bool {
        var head = "HTTP/1.1 \(reply.status) \(Self.reason(reply.status))\r\n"
        head += "Content-Type: \(reply.contentType)\r\nContent-Length: \(reply.body.count)\r\n"
        for (name, value) in reply.extraHeaders.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += closing ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n"
        let bytes = Array(head.utf8) + reply.body
        var offset = 0
        while offset < bytes.count {
            #if canImport(Darwin)
                let sent = bytes[offset...].withUnsafeBytes { Darwin.send(client, $0.baseAddress, $0.count, 0) }
            #else
                let sent = bytes[offset...].withUnsafeBytes {
                    Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))  // fits: a flag constant
                }
            #endif
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return start }
        }
        return nil
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 411: return "Length Required"
        case 413: return "Payload Too Large"
        case 415: return "Unsupported Media Type"
        case 421: return "Misdirected Request"
        case 431: return "Request Header Fields Too Large"
        default: return "Status"
        }
    }
}
