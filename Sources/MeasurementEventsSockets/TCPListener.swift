import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A listening IPv4 TCP socket and the loop that accepts its connections, one thread per
/// connection: the inspector's and the test collector's (`Tests/Fixtures/LoopbackCollector`).
///
/// Each socket is closed by the thread that uses it: the accept loop closes the listener when it
/// ends, and `serve` closes its connection. `stop` code only shuts sockets down (which wakes
/// `recv` and, on Linux, `accept`; the loop also polls for the stop every 100 ms), so a number is
/// never closed under a thread still blocked on it and handed to the next socket opened.
package enum TCPListener {
    /// Why a listener could not be opened.
    package enum Failure: Error, Hashable, Sendable {
        /// The host is not an IPv4 address in dotted form.
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
    ///   - host: an IPv4 address: `127.0.0.1`, or `0.0.0.0` for every interface.
    ///   - port: the port; 0 picks a free one.
    /// - Returns: the listening socket and the port it is bound to.
    /// - Throws: ``Failure`` when the host is not an IPv4 address or the system refuses.
    package static func open(host: String, port: UInt16) throws(Failure) -> (socket: Int32, port: UInt16) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw .notIPv4(host) }
        #if canImport(Darwin)
            let listener = socket(AF_INET, SOCK_STREAM, 0)
        #else
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)  // fits: a socket type constant
        #endif
        guard listener >= 0 else { throw .system(call: "socket", code: errno) }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            let code = errno
            close(listener)
            throw .system(call: bound == 0 ? "listen" : "bind", code: code)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        return (listener, UInt16(bigEndian: actual.sin_port))
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
