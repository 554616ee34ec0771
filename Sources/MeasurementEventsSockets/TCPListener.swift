import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A listening TCP socket (IPv4, or IPv6 for the tests of clients) and the loop that accepts its connections, one thread per
/// connection: the inspector's and the test collector's (`Tests/Fixtures/LoopbackCollector`).
///
/// Each socket is closed by the thread that uses it: the accept loop closes the listener when it
/// ends, and `serve` closes its connection. `stop` code only shuts sockets down (which wakes
/// `recv` and, on Linux, `accept`; the loop also polls for the stop every 100 ms), so a number is
/// never closed under a thread still blocked on it and handed to the next socket opened.
package enum TCPListener {
    /// Why a listener could not be opened.
    package enum Failure: Error, Hashable, Sendable {
        /// The host is not an IPv4 address in dotted form, nor an IPv6 address.
        case notIPv4(String)
        /// `socket()`, `bind()` or `listen()` failed with this `errno`.
        case system(call: String, code: Int32)

        /// What the system said: `Address already in use`.
        package var systemMessage: String? {
            guard case .system(_, let code) = self else { return nil }
            return String(cString: strerror(code))
        }
    }

    /// Opens a socket listening on `host`:`port`.
    ///
    /// - Parameters:
    ///   - host: an IPv4 address: `127.0.0.1`, or `0.0.0.0` for every interface; or an IPv6
    ///     address (`::1`, the IPv6 loopback), which listens on IPv6 only.
    ///   - port: the port; 0 picks a free one.
    /// - Returns: the listening socket and the port it is bound to.
    /// - Throws: ``Failure`` when the host is not an IP address or the system refuses.
    package static func open(host: String, port: UInt16) throws(Failure) -> (socket: Int32, port: UInt16) {
        var address = sockaddr_storage()
        let length: socklen_t
        var ipv4 = sockaddr_in()
        var ipv6 = sockaddr_in6()
        if inet_pton(AF_INET, host, &ipv4.sin_addr) == 1 {
            ipv4.sin_family = sa_family_t(AF_INET)
            ipv4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: withUnsafeBytes(of: ipv4) { Array($0) }) }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else if inet_pton(AF_INET6, host, &ipv6.sin6_addr) == 1 {
            ipv6.sin6_family = sa_family_t(AF_INET6)
            ipv6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: withUnsafeBytes(of: ipv6) { Array($0) }) }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            throw .notIPv4(host)
        }
        #if canImport(Darwin)
            let listener = socket(Int32(address.ss_family), SOCK_STREAM, 0)  // fits: an address family
        #else
            let listener = socket(Int32(address.ss_family), Int32(SOCK_STREAM.rawValue), 0)  // fits: constants
        #endif
        guard listener >= 0 else { throw .system(call: "socket", code: errno) }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        if address.ss_family == sa_family_t(AF_INET6) {
            let ipv6 = Int32(IPPROTO_IPV6)  // fits: a protocol constant
            setsockopt(listener, ipv6, IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            let code = errno
            close(listener)
            throw .system(call: bound == 0 ? "listen" : "bind", code: code)
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &actualLength) }
        }
        // sin_port and sin6_port sit at the same offset, just after the family.
        let boundPort = withUnsafeBytes(of: &actual) { $0.load(fromByteOffset: 2, as: UInt16.self) }
        return (listener, UInt16(bigEndian: boundPort))
    }

    /// Accepts connections on `listener` until `isListening()` says no or the socket fails, then
    /// closes it. Runs on the caller's thread; each admitted connection is served on a new thread.
    ///
    /// - Parameters:
    ///   - listener: a socket from ``open(host:port:)``.
    ///   - isListening: whether to go on; checked before each wait.
    ///   - admit: takes an accepted connection (set options, count it) or refuses it, which
    ///     closes it.
    ///   - serve: serves one connection on a thread of its own and closes it.
    package static func acceptLoop(
        _ listener: Int32, isListening: () -> Bool, admit: (Int32) -> Bool,
        serve: @escaping @Sendable (Int32) -> Void
    ) {
        defer { close(listener) }
        while isListening() {
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, 100)
            if polled < 0 && errno != EINTR { return }
            guard polled > 0 else { continue }
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == EAGAIN || errno == ECONNABORTED { continue }
                return
            }
            #if canImport(Darwin)
                var yes: Int32 = 1
                setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
            #endif
            guard admit(client) else {
                close(client)
                continue
            }
            let thread = Thread { serve(client) }
            thread.start()
        }
    }
}
