import Foundation

/// Why ``HTTP1Transport`` got no response: each case says where it failed, what was expected
/// and what was found, so that the tracker's log line (`network error: …`) explains itself.
/// Every one of them is a network error to the uploader: the batch stays queued and is retried.
enum HTTP1Failure: Error, Equatable, LocalizedError {
    /// The URL is not one this client sends to (no host, a port out of range, not `http`).
    case unsupportedURL(String, reason: String)
    /// A method or header the request line or a header line cannot carry (a space in the method,
    /// a line break in a value): sending it would corrupt the connection.
    case invalidRequest(String)
    /// `getaddrinfo` found no address for the host.
    case cannotResolve(host: String, message: String)
    /// No address of the host accepted a connection; `message` is the last address's error.
    case cannotConnect(host: String, port: UInt16, message: String)
    /// The deadline passed while connecting, sending or waiting for the reply.
    case timedOut(phase: Phase, host: String, port: UInt16, seconds: Double)
    /// A socket call failed (`ECONNRESET` before any of the reply, say).
    case system(call: String, message: String, host: String, port: UInt16)
    /// The server closed (or reset) the connection before the reply was complete.
    case closedMidReply(host: String, port: UInt16, bytesReceived: Int)
    /// The reply is not HTTP/1.x: `found` is its start, printable characters only.
    case malformedReply(host: String, port: UInt16, what: String, found: String)
    /// The reply's head or body is larger than the client keeps; the connection is closed.
    case replyTooLarge(host: String, port: UInt16, part: String, limit: Int)

    /// The step a timeout interrupted.
    enum Phase: String, Equatable, Sendable {
        case connecting
        case sending
        case waitingForReply = "waiting for the reply"
    }

    /// Whether this is the failure of a reused connection the server had closed while it was
    /// idle: nothing of a reply arrived, so the request may go again on a new connection.
    var isClosedBeforeReply: Bool {
        switch self {
        case .closedMidReply(_, _, let bytes): return bytes == 0
        case .system(let call, _, _, _): return call == "send" || call == "recv"
        default: return false
        }
    }

    var errorDescription: String? {
        switch self {
        case .unsupportedURL(let url, let reason):
            return "cannot send to \(url): \(reason)"
        case .invalidRequest(let what):
            return "request not sent: \(what)"
        case .cannotResolve(let host, let message):
            return "cannot resolve \(host): \(message)"
        case .cannotConnect(let host, let port, let message):
            return "cannot connect to \(host):\(port): \(message)"
        case .timedOut(let phase, let host, let port, let seconds):
            return "\(host):\(port): timed out after \(seconds) s \(phase.rawValue); connection closed"
        case .system(let call, let message, let host, let port):
            return "\(host):\(port): \(call) failed: \(message); connection closed"
        case .closedMidReply(let host, let port, let bytes):
            return "\(host):\(port) closed the connection after \(bytes) bytes of the reply, before it was complete"
        case .malformedReply(let host, let port, let what, let found):
            return "\(host):\(port) sent a reply that is not HTTP/1.x: \(what), found \"\(found)\"; connection closed"
        case .replyTooLarge(let host, let port, let part, let limit):
            return "\(host):\(port) sent a reply whose \(part) is over \(limit) bytes, more than this client keeps; "
                + "connection closed"
        }
    }

    /// Up to 60 bytes of `bytes` as text, with anything unprintable as `?`: for
    /// ``malformedReply(host:port:what:found:)``.
    static func excerpt<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        String(bytes.prefix(60).map { $0 >= 0x20 && $0 < 0x7f ? Character(UnicodeScalar($0)) : "?" })
    }
}
