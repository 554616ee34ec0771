/// Reads one HTTP/1.x response from the bytes of a connection as they arrive (RFC 9112): the
/// status line and headers, then a body framed by `Transfer-Encoding: chunked`, by
/// `Content-Length`, or by the end of the connection, as RFC 9112 §6.3 orders them.
///
/// Bounded: a head over ``Limits/head`` bytes or a body over ``Limits/body`` bytes is an error,
/// raised as soon as it is known (a `Content-Length` over the limit before any of the body), so
/// that a garbage or endless reply costs at most the limits in memory.
struct HTTP1ResponseParser {
    /// How much of a reply is kept.
    struct Limits: Sendable {
        /// The status line, headers and chunked trailers, each.
        var head = 64 * 1024
        /// The body: a collector's replies are a few bytes; 16 MiB leaves room for any real one.
        var body = 16 * 1024 * 1024
    }

    /// Why the bytes are not a response this parser accepts.
    enum Problem: Error, Equatable {
        /// `what` was expected; `found` is what came, as bytes.
        case malformed(what: String, found: [UInt8])
        /// The head or the body (`part`) grew past its limit.
        case tooLarge(part: String, limit: Int)
    }

    private enum State {
        case head
        /// Bytes of the body still to come: all of it (`Content-Length`), or of one chunk.
        case bodyBytes(remaining: Int, chunked: Bool)
        case chunkSize
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private let limits: Limits
    /// `HEAD` replies have no body, whatever their headers say.
    private let isHeadRequest: Bool
    private var state = State.head
    /// Bytes received and not parsed yet.
    private var pending: [UInt8] = []
    private var status = 0
    private var headers: [String: String] = [:]
    private var body: [UInt8] = []
    /// Whether the connection can carry another request once this reply is read.
    private(set) var keepsConnection = false
    /// Bytes received so far, for the error of a reply cut short.
    private(set) var bytesReceived = 0

    init(limits: Limits = Limits(), isHeadRequest: Bool = false) {
        self.limits = limits
        self.isHeadRequest = isHeadRequest
    }

    /// The response, once it is complete.
    var response: HTTPResponse? {
        guard case .done = state else { return nil }
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// Takes the next bytes of the connection.
    ///
    /// - Returns: whether the response is complete (bytes after it, which no request asked
    ///   for, make the connection unusable and are dropped).
    mutating func consume(_ bytes: ArraySlice<UInt8>) throws(Problem) -> Bool {
        bytesReceived += bytes.count
        pending.append(contentsOf: bytes)
        try advance()
        if case .done = state {
            if !pending.isEmpty { keepsConnection = false }
            return true
        }
        return false
    }

    /// The server closed the connection: this completes a body read until the end, and is an
    /// error anywhere else (the caller reports the reply as cut short).
    ///
    /// - Returns: whether the response is complete.
    mutating func consumeEnd() -> Bool {
        guard case .untilClose = state else { return false }
        state = .done
        return true
    }

    private mutating func advance() throws(Problem) {
        var start = 0
        defer { pending.removeSubrange(..<start) }
        while true {
            switch state {
            case .head:
                guard let end = Self.endOfHead(pending, from: start) else {
                    if pending.count - start > limits.head { throw .tooLarge(part: "head", limit: limits.head) }
                    return
                }
                try readHead(pending[start..<end.head])
                start = end.next
            case .bodyBytes(let remaining, let chunked):
                let take = min(remaining, pending.count - start)
                body.append(contentsOf: pending[start..<(start + take)])
                start += take
                guard take == remaining else {
                    state = .bodyBytes(remaining: remaining - take, chunked: chunked)
                    return
                }
                state = chunked ? .chunkDataEnd : .done
            case .chunkSize:
                guard let lineEnd = Self.lineEnd(pending, from: start) else {
                    if pending.count - start > 1024 {
                        throw .malformed(what: "a chunk size line", found: Array(pending[start...].prefix(60)))
                    }
                    return
                }
                let line = pending[start..<lineEnd.content]
                let digits = line.prefix { $0 != UInt8(ascii: ";") }.filter { $0 != UInt8(ascii: " ") }
                guard let size = Self.hexadecimal(digits) else {
                    throw .malformed(what: "a chunk size in hexadecimal", found: Array(line.prefix(60)))
                }
                guard size <= limits.body - body.count else { throw .tooLarge(part: "body", limit: limits.body) }
                start = lineEnd.next
                state = size == 0 ? .trailers : .bodyBytes(remaining: size, chunked: true)
            case .chunkDataEnd:
                guard let lineEnd = Self.lineEnd(pending, from: start) else {
                    if pending.count - start > 1 {
                        throw .malformed(what: "CRLF after a chunk", found: Array(pending[start...].prefix(60)))
                    }
                    return
                }
                guard lineEnd.content == start else {
                    throw .malformed(what: "CRLF after a chunk", found: Array(pending[start...].prefix(60)))
                }
                start = lineEnd.next
                state = .chunkSize
            case .trailers:
                // Trailer fields are read past, not kept: no reply of a collector needs them.
                guard let lineEnd = Self.lineEnd(pending, from: start) else {
                    if pending.count - start > limits.head { throw .tooLarge(part: "trailers", limit: limits.head) }
                    return
                }
                let isEmpty = lineEnd.content == start
                start = lineEnd.next
                if isEmpty { state = .done }
            case .untilClose:
                guard body.count + (pending.count - start) <= limits.body else {
                    throw .tooLarge(part: "body", limit: limits.body)
                }
                body.append(contentsOf: pending[start...])
                start = pending.count
                return
            case .done:
                return
            }
        }
    }

    /// Reads the status line and headers, and chooses how the body is framed.
    private mutating func readHead(_ head: ArraySlice<UInt8>) throws(Problem) {
        var lines = Self.lines(head)
        let statusLine = lines.isEmpty ? [] : Array(lines.removeFirst())  // zero-based, unlike the slice
        // `HTTP/1.1 200 OK`: the version, one space, three digits, then a space and a reason or nothing.
        let prefix = Array("HTTP/1.".utf8)
        guard statusLine.count >= 12, Array(statusLine.prefix(7)) == prefix,
            statusLine[7] == UInt8(ascii: "0") || statusLine[7] == UInt8(ascii: "1"),
            statusLine[8] == UInt8(ascii: " "),
            let code = Self.decimal(statusLine[9..<12]), (100...599).contains(code),
            statusLine.count == 12 || statusLine[12] == UInt8(ascii: " ")
        else {
            throw .malformed(what: "a status line such as \"HTTP/1.1 200 OK\"", found: Array(statusLine.prefix(60)))
        }
        var fields: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                line[..<colon].allSatisfy(Self.isTokenCharacter)
            else {
                throw .malformed(what: "a header line \"name: value\"", found: Array(line.prefix(60)))
            }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: Self.trimmed(line[(colon + 1)...]), as: UTF8.self)
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        if (100..<200).contains(code) {
            // An interim reply (100 Continue, 103 Early Hints): the real one follows. 101 would
            // switch protocols, which no request of this client asks for.
            guard code != 101 else {
                throw .malformed(what: "a final status (no upgrade was asked for)", found: Array(statusLine.prefix(60)))
            }
            return
        }
        status = code
        headers = fields
        let connection = Set((fields["connection"] ?? "").lowercased().split(separator: ",").map(Self.trimmedText))
        let isHTTP11 = statusLine[7] == UInt8(ascii: "1")
        keepsConnection = isHTTP11 ? !connection.contains("close") : connection.contains("keep-alive")
        if isHeadRequest || code == 204 || code == 304 {
            state = .done
        } else if let codings = fields["transfer-encoding"] {
            let last = codings.lowercased().split(separator: ",").last.map(Self.trimmedText)
            if last == "chunked" {
                state = .chunkSize
            } else {
                state = .untilClose
                keepsConnection = false
            }
            // RFC 9112 §6.1: with Content-Length as well, the message may be a smuggling attempt.
            if fields["content-length"] != nil { keepsConnection = false }
        } else if let lengthField = fields["content-length"] {
            let values = Set(lengthField.split(separator: ",").map(Self.trimmedText))
            guard values.count == 1, let value = values.first, let length = Self.decimal(Array(value.utf8)) else {
                throw .malformed(what: "a Content-Length of decimal digits", found: Array(lengthField.utf8.prefix(60)))
            }
            guard length <= limits.body else { throw .tooLarge(part: "body", limit: limits.body) }
            body.reserveCapacity(length)
            state = length == 0 ? .done : .bodyBytes(remaining: length, chunked: false)
        } else {
            state = .untilClose
            keepsConnection = false
        }
    }

    // MARK: Bytes

    /// Where the head ends (the blank line; a bare LF is accepted for CRLF, RFC 9112 §2.2):
    /// the head's end and the first byte after the blank line.
    private static func endOfHead(_ bytes: [UInt8], from start: Int) -> (head: Int, next: Int)? {
        var index = start
        while let newline = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) {
            var next = newline + 1
            if next < bytes.count, bytes[next] == UInt8(ascii: "\r") { next += 1 }
            guard next < bytes.count else { return nil }
            if bytes[next] == UInt8(ascii: "\n") { return (newline, next + 1) }
            index = newline + 1
        }
        return nil
    }

    /// The next line's end: where its content ends (before CR LF or LF) and where the next starts.
    private static func lineEnd(_ bytes: [UInt8], from start: Int) -> (content: Int, next: Int)? {
        guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let content = newline > start && bytes[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
        return (content, newline + 1)
    }

    private static func lines(_ head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        head.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0
        }
    }

    private static func decimal<Digits: Collection<UInt8>>(_ digits: Digits) -> Int? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))  // fits: a digit
        }
        return value
    }

    /// A chunk size; more than 15 hexadecimal digits (past any limit) is refused, not wrapped.
    private static func hexadecimal<Digits: Collection<UInt8>>(_ digits: Digits) -> Int? {
        guard !digits.isEmpty, digits.count <= 15 else { return nil }
        var value = 0
        for digit in digits {
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = digit - UInt8(ascii: "A") + 10
            default: return nil
            }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 16)
            guard !overflow else { return nil }
            value = shifted + Int(nibble)  // fits: a nibble
        }
        return value
    }

    /// RFC 9110 §5.6.2 `tchar`: the characters of a header name or a method.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return bytes[first...last]
    }

    private static func trimmedText(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
