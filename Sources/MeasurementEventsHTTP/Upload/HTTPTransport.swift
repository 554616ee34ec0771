import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one request. A tracker given none sends through a ``URLSessionTransport``, except
/// `http://` requests on Linux, which go through the package's own HTTP/1.1 client (see
/// <doc:DeliveringToVendors#Plain-http-on-Linux>); the tests use both against a real server on
/// loopback.
public protocol HTTPTransport: Sendable {
    /// Calls `completion` once, on any thread, with the response or the network error.
    ///
    /// - Parameters:
    ///   - request: the request to send.
    ///   - timeout: how long the request may take, in seconds.
    ///   - completion: called once with the response or the error.
    func send(
        _ request: HTTPRequest, timeout: TimeInterval,
        completion: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void)
}

/// A server's answer. Header names are lowercased.
public struct HTTPResponse: Sendable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// Header names (lowercased) and values.
    public var headers: [String: String]
    /// The response body.
    public var body: [UInt8]

    /// A response.
    ///
    /// - Parameters:
    ///   - status: the HTTP status code.
    ///   - headers: header names (lowercased) and values.
    ///   - body: the response body.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends requests with an ephemeral `URLSession` (no cookies, no cache).
public final class URLSessionTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked: URLSession is thread-safe; it is not marked Sendable on Linux.
    private let session: URLSession

    /// `requestTimeout` is also set on the session: swift-corelibs-foundation ignores a
    /// request's own `timeoutInterval`. It is rounded up by ``honouredTimeout(_:)``.
    ///
    /// - Parameters:
    ///   - configuration: the session configuration; cookies and cache are turned off.
    ///   - requestTimeout: how long a request may take, in seconds.
    public init(configuration: URLSessionConfiguration = .ephemeral, requestTimeout: TimeInterval = 30) {
        configuration.timeoutIntervalForRequest = Self.honouredTimeout(requestTimeout)
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// The timeout URL loading really applies for `timeout`: at least 1 second, and on Linux
    /// rounded up to whole seconds, because FoundationNetworking passes whole seconds to curl
    /// (0.5 s became 0: every request expired at once and delivery never progressed).
    ///
    /// ```swift
    /// URLSessionTransport.honouredTimeout(0.5)   // 1 (on every platform)
    /// URLSessionTransport.honouredTimeout(2.5)   // 3 on Linux, 2.5 on Apple platforms
    /// ```
    ///
    /// - Parameter timeout: the timeout asked for, in seconds.
    /// - Returns: the timeout applied.
    public static func honouredTimeout(_ timeout: TimeInterval) -> TimeInterval {
        guard timeout.isFinite, timeout > 1 else { return 1 }
        #if canImport(FoundationNetworking)
            return timeout.rounded(.up)
        #else
            return timeout
        #endif
    }

    /// Sends `request` with the session and reports the response or error.
    ///
    /// - Parameters:
    ///   - request: the request to send.
    ///   - timeout: how long the request may take, in seconds.
    ///   - completion: called once, on any thread, with the response or the network error.
    public func send(
        _ request: HTTPRequest, timeout: TimeInterval,
        completion: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void
    ) {
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: Self.honouredTimeout(timeout)
        )
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        #if canImport(FoundationNetworking)
            // On Linux, when a server has dropped an idle keep-alive connection, curl retries on a
            // fresh one but FoundationNetworking cannot rewind the body: the headers go out, no
            // body follows, and the request hangs for the whole timeout. A connection per request
            // costs a handshake per batch and never hangs. Apple's URLSession resends correctly.
            urlRequest.setValue("close", forHTTPHeaderField: "Connection")
        #endif
        urlRequest.httpBody = Data(request.body)
        session.dataTask(with: urlRequest) { data, response, error in
            if let error { return completion(.failure(error)) }
            guard let http = response as? HTTPURLResponse else {
                return completion(.failure(URLError(.badServerResponse)))
            }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                headers[String(describing: name).lowercased()] = String(describing: value)
            }
            completion(.success(HTTPResponse(status: http.statusCode, headers: headers, body: [UInt8](data ?? Data()))))
        }.resume()
    }
}

/// A tracker's transport when the app gives none.
///
/// - `http://` URLs, on Linux: ``HTTP1Transport``, the package's own HTTP/1.1 client, because
///   FoundationNetworking's `URLSession` can crash the process when a connection fails
///   (SIGSEGV in libdispatch; see ``HTTP1Transport``). Plain http is allowed to loopback only
///   (``HTTPTracker/isAllowedEndpoint(_:)``): the collector beside a server.
/// - Everything else (`https://` everywhere, every URL on Apple platforms): a
///   ``URLSessionTransport`` made at the first request that needs it, not with the tracker.
///   Making one (an ephemeral configuration and its session, and on Linux curl and its TLS
///   library) takes about 7 M instructions, which the app's launch does not pay for a session
///   the tracker may not use for a while (issue 34).
final class DefaultTransport: HTTPTransport {
    /// Whether `http://` requests go through ``HTTP1Transport`` by default: on Linux (and every
    /// platform without Darwin), not on Apple platforms, whose `URLSession` has no such crash.
    static var routesPlainHTTPToOwnClient: Bool {
        #if canImport(Darwin)
            false
        #else
            true
        #endif
    }

    private let requestTimeout: TimeInterval
    /// `nil` until the first request that needs it; made once, under the lock.
    private let urlSession = LockedValue<URLSessionTransport?>(nil)
    /// `nil` where plain http goes through `URLSession`.
    private let plainHTTP: HTTP1Transport?

    /// - Parameters:
    ///   - requestTimeout: the timeout the session is made with.
    ///   - routesPlainHTTP: whether `http://` requests go through ``HTTP1Transport``.
    init(requestTimeout: TimeInterval, routesPlainHTTP: Bool = DefaultTransport.routesPlainHTTPToOwnClient) {
        self.requestTimeout = requestTimeout
        plainHTTP = routesPlainHTTP ? HTTP1Transport() : nil
    }

    func send(
        _ request: HTTPRequest, timeout: TimeInterval,
        completion: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void
    ) {
        route(request.url).send(request, timeout: timeout, completion: completion)
    }

    /// The transport that sends to `url`.
    func route(_ url: URL) -> any HTTPTransport {
        if let plainHTTP, url.scheme?.lowercased() == "http" { return plainHTTP }
        return urlSession.withLock { transport in
            if let transport { return transport }
            let made = URLSessionTransport(requestTimeout: requestTimeout)
            transport = made
            return made
        }
    }
}
