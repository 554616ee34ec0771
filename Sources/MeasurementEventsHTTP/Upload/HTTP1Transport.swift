import Dispatch
import Foundation
import MeasurementEvents

/// A small HTTP/1.1 client for plain-`http` endpoints, on the package's own sockets: what a
/// tracker sends through on Linux to `http://` URLs (the collector beside the service, on
/// loopback or in the pod), so that FoundationNetworking is used only where TLS needs it.
///
/// FoundationNetworking's `URLSession` on Linux watches curl's sockets with dispatch sources, and
/// their teardown racing a failed connection can crash the process (SIGSEGV in
/// `_dispatch_unote_unregister_muxed`; swift-corelibs-foundation issue 4791 and its follow-ups).
/// This client has no dispatch source and no run loop: each request runs on the transport's own
/// serial queue, on a non-blocking socket that every wait `poll`s with the request's deadline
/// (``HTTP1Connection``).
///
/// - Keep-alive: up to ``maximumIdlePerHost`` idle connections per `host:port` are kept and
///   reused (a server's tracker has two requests on the wire at once). A reused connection
///   the server closed meanwhile (found closed before sending, or closed before any byte of the
///   reply) is replaced once by a new one and the request sent again.
/// - Timeouts: connecting may take `connectTimeout` seconds, and the whole exchange the
///   request's `timeout`; past it the connection is closed and the request fails.
/// - Replies: `Content-Length`, chunked, or until the connection closes; status and headers
///   (names lowercased) come back as ``HTTPResponse``, so `Retry-After` works as with
///   `URLSession`. A reply over ``HTTP1ResponseParser/Limits`` or not HTTP/1.x is an
///   ``HTTP1Failure``, never a crash or unbounded memory.
/// - Bodies go as given: the uploader has already gzipped them and set `Content-Encoding`.
///
/// Requests run at the same time, each on a connection of its own
/// (``HTTPTracker/Configuration/maximumRequestsInFlight``; an app's tracker sends one at a
/// time); the completion is called on the transport's queue, never under a lock.
final class HTTP1Transport: HTTPTransport, @unchecked Sendable {
    // @unchecked: `idle` is behind its lock; a connection is used by the one request holding it.

    /// Concurrent: each request blocks its thread in `poll` until its reply.
    private let queue = DispatchQueue(label: "MeasurementEventsHTTP.HTTP1Transport", attributes: .concurrent)
    /// The idle connections of each `host:port`, ready for the next requests, the most recently
    /// used last.
    private let idle = LockedValue<[String: [HTTP1Connection]]>([:])
    /// The most idle connections kept for one `host:port`; a connection coming back to a full
    /// set closes the oldest.
    static let maximumIdlePerHost = 4
    private let connectTimeout: TimeInterval
    private let limits: HTTP1ResponseParser.Limits

    /// - Parameters:
    ///   - connectTimeout: how long connecting may take, in seconds (the request's timeout when
    ///     that is shorter).
    ///   - limits: how much of a reply is kept.
    init(connectTimeout: TimeInterval = 10, limits: HTTP1ResponseParser.Limits = .init()) {
        self.connectTimeout = connectTimeout
        self.limits = limits
    }

    deinit {
        for connection in idle.withLock({ $0.values.joined() }) { connection.close() }
    }

    func send(
        _ request: HTTPRequest, timeout: TimeInterval,
        completion: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void
    ) {
        queue.async {
            let result: Result<HTTPResponse, any Error>
            do {
                result = .success(try self.exchange(request, timeout: timeout))
            } catch {
                result = .failure(error)
            }
            completion(result)
        }
    }

    /// Sends `request` and reads its reply, on a reused connection when there is one (once more
    /// on a new one when the server had closed it), otherwise on a new one.
    func exchange(_ request: HTTPRequest, timeout: TimeInterval) throws(HTTP1Failure) -> HTTPResponse {
        let deadline = HTTP1Connection.Deadline(after: timeout)
        let target = try Target(request.url, method: request.method)
        let message = try Self.message(request, target: target)
        if let reused = idle.withLock({ $0[target.key]?.popLast() }) {
            if reused.isStale {
                reused.close()
            } else {
                do {
                    return try exchange(message, on: reused, target: target, deadline: deadline, timeout: timeout)
                } catch let error where error.isClosedBeforeReply {
                    // Closed by the server between requests: sent once more, on a new connection.
                }
            }
        }
        let connection = try HTTP1Connection.open(
            host: target.host, port: target.port,
            deadline: HTTP1Connection.Deadline(after: connectTimeout).capped(at: deadline),
            timeout: min(connectTimeout, timeout))
        return try exchange(message, on: connection, target: target, deadline: deadline, timeout: timeout)
    }

    /// One request and its reply on `connection`, which is kept for the next request when the
    /// reply allows it and closed otherwise (on any failure too).
    private func exchange(
        _ message: [UInt8], on connection: HTTP1Connection, target: Target, deadline: HTTP1Connection.Deadline,
        timeout: TimeInterval
    ) throws(HTTP1Failure) -> HTTPResponse {
        var keep = false
        defer {
            if keep {
                let displaced = idle.withLock { idle -> HTTP1Connection? in
                    idle[target.key, default: []].append(connection)
                    guard idle[target.key]!.count > Self.maximumIdlePerHost else { return nil }  // just appended
                    return idle[target.key]!.removeFirst()
                }
                displaced?.close()
            } else {
                connection.close()
            }
        }
        try connection.send(message, deadline: deadline, timeout: timeout)
        var parser = HTTP1ResponseParser(limits: limits, isHeadRequest: target.method == "HEAD")
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count: Int
            do {
                count = try connection.receive(into: &chunk, deadline: deadline, timeout: timeout)
            } catch .system(_, _, let host, let port) where parser.bytesReceived > 0 {
                // A reset once the reply had started: the server acted on the request, so it
                // must not count as closed before the reply (which would send it again).
                throw .closedMidReply(host: host, port: port, bytesReceived: parser.bytesReceived)
            }
            let complete: Bool
            do {
                complete = count == 0 ? parser.consumeEnd() : try parser.consume(chunk[..<count])
            } catch {
                switch error {
                case .malformed(let what, let found):
                    throw .malformedReply(
                        host: target.host, port: target.port, what: what, found: HTTP1Failure.excerpt(found))
                case .tooLarge(let part, let limit):
                    throw .replyTooLarge(host: target.host, port: target.port, part: part, limit: limit)
                }
            }
            if complete, let response = parser.response {
                keep = count > 0 && parser.keepsConnection
                return response
            }
            if count == 0 {
                throw .closedMidReply(host: target.host, port: target.port, bytesReceived: parser.bytesReceived)
            }
        }
    }

    /// Where a request goes, read from its URL.
    struct Target {
        let host: String
        let port: UInt16
        /// Path and query, as the request line carries them: `/v1/logs`.
        let path: String
        /// `Host:`'s value: IPv6 literals in brackets, the port when it is not 80.
        let hostField: String
        let method: String
        /// The idle slot's key.
        var key: String { "\(host):\(port)" }

        init(_ url: URL, method: String) throws(HTTP1Failure) {
            guard url.scheme?.lowercased() == "http" else {
                throw .unsupportedURL(url.absoluteString, reason: "this client speaks plain http only")
            }
            guard var host = url.host, !host.isEmpty else {
                throw .unsupportedURL(url.absoluteString, reason: "no host")
            }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            let portNumber = url.port ?? 80
            guard let port = UInt16(exactly: portNumber), port > 0 else {
                throw .unsupportedURL(url.absoluteString, reason: "port \(portNumber) is not between 1 and 65535")
            }
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            var path = components?.percentEncodedPath ?? ""
            if path.isEmpty { path = "/" }
            if let query = components?.percentEncodedQuery { path += "?" + query }
            self.host = host
            self.port = port
            self.path = path
            let bracketed = host.contains(":") ? "[\(host)]" : host
            hostField = port == 80 ? bracketed : "\(bracketed):\(port)"
            self.method = method
        }
    }

    /// The request's head and body as they go on the wire. `Host`, `Content-Length` and
    /// `Connection` are this client's; the request's own values for them are left out.
    static func message(_ request: HTTPRequest, target: Target) throws(HTTP1Failure) -> [UInt8] {
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(HTTP1ResponseParser.isTokenCharacter) else {
            throw .invalidRequest("the method \"\(request.method)\" is not an HTTP token")
        }
        var head = "\(request.method) \(target.path) HTTP/1.1\r\nHost: \(target.hostField)\r\n"
        head += "Content-Length: \(request.body.count)\r\n"
        let ours: Set<String> = ["host", "content-length", "connection", "transfer-encoding"]
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) where !ours.contains(name.lowercased()) {
            guard !name.isEmpty, name.utf8.allSatisfy(HTTP1ResponseParser.isTokenCharacter) else {
                throw .invalidRequest("the header name \"\(name)\" is not an HTTP token")
            }
            guard !value.utf8.contains(where: { $0 == 0x0d || $0 == 0x0a || $0 == 0 }) else {
                throw .invalidRequest("the value of the header \(name) contains a line break or NUL")
            }
            head += "\(name): \(value)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + request.body
    }
}
