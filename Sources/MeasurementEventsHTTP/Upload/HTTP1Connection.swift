import Dispatch
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// One TCP connection of ``HTTP1Transport``: a non-blocking socket on which every wait is a
/// `poll` bounded by the request's deadline, so that no call blocks past the request's timeout,
/// and no dispatch source or run loop watches it (FoundationNetworking's teardown of such sources
/// under a failing connection is the crash this client exists to avoid).
///
/// Used by one request at a time: the transport takes it from its idle slot under its lock, or
/// opens it, and gives it back or closes it when the exchange ends. The socket is closed once,
/// by ``close()`` or `deinit`.
final class HTTP1Connection: @unchecked Sendable {
    // @unchecked: only the one request that holds the connection touches `descriptor`.

    /// A point in time on the monotonic clock (never moved by a change of the wall clock).
    struct Deadline {
        let nanoseconds: UInt64

        init(after seconds: TimeInterval) {
            let now = DispatchTime.now().uptimeNanoseconds
            let span = seconds.isFinite && seconds > 0 ? min(seconds, 86_400) * 1e9 : 0
            nanoseconds = now + UInt64(span)  // fits: at most a day of nanoseconds
        }

        private init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

        /// The earlier of the two.
        func capped(at other: Deadline) -> Deadline { Deadline(nanoseconds: min(nanoseconds, other.nanoseconds)) }

        /// Milliseconds left for `poll`, rounded up, 0 once passed.
        var pollMilliseconds: Int32 {
            let now = DispatchTime.now().uptimeNanoseconds
            guard nanoseconds > now else { return 0 }
            let left = (nanoseconds - now + 999_999) / 1_000_000
            return Int32(clamping: left)
        }
    }

    /// Where the connection goes, as the URL named it: for the errors it reports.
    let host: String
    let port: UInt16
    private var descriptor: Int32

    private init(host: String, port: UInt16, descriptor: Int32) {
        self.host = host
        self.port = port
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Resolves `host` (`getaddrinfo`: IPv4 and IPv6 literals, `localhost`, names) and connects to
    /// its addresses in the order the system gives them, until one accepts.
    ///
    /// `getaddrinfo` itself cannot be given a deadline; for the loopback names plain http is
    /// allowed to (`localhost`), it reads `/etc/hosts` and does not wait on the network.
    static func open(host: String, port: UInt16, deadline: Deadline, timeout: TimeInterval) throws(HTTP1Failure)
        -> HTTP1Connection
    {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)  // fits: a socket type constant (an enum in Glibc)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw .cannotResolve(host: host, message: String(cString: gai_strerror(resolved)))
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let info = address.pointee
            let socket = Self.makeSocket(family: info.ai_family, type: info.ai_socktype, protocol: info.ai_protocol)
            guard socket >= 0 else {
                lastError = "socket: " + String(cString: strerror(errno))
                continue
            }
            if connect(socket, info.ai_addr, info.ai_addrlen) == 0 || errno == EINPROGRESS {
                var ready = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)  // fits: a poll flag
                var polled: Int32
                repeat { polled = poll(&ready, 1, deadline.pollMilliseconds) } while polled < 0 && errno == EINTR
                if polled == 0 {
                    closeSocket(socket)
                    throw .timedOut(phase: .connecting, host: host, port: port, seconds: timeout)
                }
                var code: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                if polled > 0, getsockopt(socket, SOL_SOCKET, SO_ERROR, &code, &length) == 0, code == 0 {
                    return HTTP1Connection(host: host, port: port, descriptor: socket)
                }
                lastError = String(cString: strerror(polled < 0 ? errno : code))
            } else {
                lastError = String(cString: strerror(errno))
            }
            closeSocket(socket)
        }
        throw .cannotConnect(host: host, port: port, message: lastError)
    }

    /// A non-blocking, close-on-exec TCP socket without Nagle's delay (a request's head and body
    /// go in one write; the reply is waited for), that never raises SIGPIPE.
    private static func makeSocket(family: Int32, type: Int32, protocol: Int32) -> Int32 {
        let made = socket(family, type, `protocol`)
        guard made >= 0 else { return made }
        _ = fcntl(made, F_SETFD, FD_CLOEXEC)
        _ = fcntl(made, F_SETFL, fcntl(made, F_GETFL) | O_NONBLOCK)
        var yes: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        _ = setsockopt(made, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, size)  // fits: a protocol constant
        #if canImport(Darwin)
            _ = setsockopt(made, SOL_SOCKET, SO_NOSIGPIPE, &yes, size)
        #endif
        return made
    }

    /// Writes all of `bytes`, waiting for room until `deadline`.
    func send(_ bytes: [UInt8], deadline: Deadline, timeout: TimeInterval) throws(HTTP1Failure) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                sendWithoutSignal(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if sent > 0 {
                offset += sent
                continue
            }
            let code = errno
            if sent < 0 && code == EINTR { continue }
            guard sent < 0 && (code == EAGAIN || code == EWOULDBLOCK) else {
                throw .system(call: "send", message: String(cString: strerror(code)), host: host, port: port)
            }
            let writable = Int16(POLLOUT)  // fits: a poll flag
            try wait(for: writable, deadline: deadline, phase: .sending, timeout: timeout)
        }
    }

    /// Reads what has arrived into `chunk`, waiting until `deadline` for something to arrive.
    ///
    /// - Returns: the number of bytes read; 0 when the server closed the connection.
    func receive(into chunk: inout [UInt8], deadline: Deadline, timeout: TimeInterval) throws(HTTP1Failure) -> Int {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count >= 0 { return count }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else {
                throw .system(call: "recv", message: String(cString: strerror(code)), host: host, port: port)
            }
            let readable = Int16(POLLIN)  // fits: a poll flag
            try wait(for: readable, deadline: deadline, phase: .waitingForReply, timeout: timeout)
        }
    }

    /// Whether an idle connection can no longer be used: the server closed it, reset it or sent
    /// something unasked (a reply that belongs to no request), all of which make it readable.
    var isStale: Bool {
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)  // fits: a poll flag
        return poll(&ready, 1, 0) != 0
    }

    /// Closes the socket; later calls do nothing.
    func close() {
        guard descriptor >= 0 else { return }
        closeSocket(descriptor)
        descriptor = -1
    }

    private func wait(for events: Int16, deadline: Deadline, phase: HTTP1Failure.Phase, timeout: TimeInterval)
        throws(HTTP1Failure)
    {
        var ready = pollfd(fd: descriptor, events: events, revents: 0)
        while true {
            let polled = poll(&ready, 1, deadline.pollMilliseconds)
            if polled > 0 { return }  // ready, or an error or hang-up the next call reports
            if polled == 0 { throw .timedOut(phase: phase, host: host, port: port, seconds: timeout) }
            let code = errno
            guard code == EINTR else {
                throw .system(call: "poll", message: String(cString: strerror(code)), host: host, port: port)
            }
        }
    }
}

// At file scope: inside the class, `close` and `send` name its methods.
private func closeSocket(_ descriptor: Int32) { _ = close(descriptor) }

/// `send(2)` that returns `EPIPE` instead of raising SIGPIPE on a connection the peer closed
/// (on Apple platforms the socket's `SO_NOSIGPIPE` does it).
private func sendWithoutSignal(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Darwin)
        return send(descriptor, bytes, count, 0)
    #else
        return send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))  // fits: a flag constant
    #endif
}
