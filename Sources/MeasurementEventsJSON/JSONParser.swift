import MeasurementEvents

/// The package's one strict JSON parser (RFC 8259), shared by the catalog reader and the
/// tracking-plan loader: it keeps key order, line and column positions and the text of numbers,
/// and reports duplicate keys — things `JSONSerialization` does not do.
///
/// ```swift
/// var parser = JSONParser(bytes: Array(#"{"a": 1, "a": 2}"#.utf8))
/// let root = try parser.parse()          // throws JSONSyntaxError on invalid JSON
/// parser.duplicateKeys                   // [("a", 1:10, first at 1:2)]
/// ```
package struct JSONParser {
    /// A key that appeared twice in one object. The value kept is the first one.
    package struct DuplicateKey: Hashable, Sendable {
        /// The path of the object holding the key, as parts (`["events", 3, "args"]`).
        package var objectPath: [JSONPathComponent]
        package var key: String
        package var position: SourcePosition
        package var firstPosition: SourcePosition

        package init(
            objectPath: [JSONPathComponent], key: String, position: SourcePosition, firstPosition: SourcePosition
        ) {
            self.objectPath = objectPath
            self.key = key
            self.position = position
            self.firstPosition = firstPosition
        }
    }

    private let bytes: [UInt8]
    private var offset = 0
    private var line = 1
    private var column = 1
    private var path: [JSONPathComponent] = []
    /// Nesting beyond this depth is reported rather than recursed into, so hostile input
    /// cannot overflow the stack.
    private let maximumDepth: Int
    private let keepsDuplicateMembers: Bool

    package private(set) var duplicateKeys: [DuplicateKey] = []

    /// - Parameters:
    ///   - maximumDepth: how many arrays or objects may nest.
    ///   - keepsDuplicateMembers: whether an object's later duplicate keys stay in its members
    ///     (for readers that report them in their own words); either way they are listed in
    ///     ``duplicateKeys`` and the first value comes first.
    package init(bytes: [UInt8], maximumDepth: Int = 512, keepsDuplicateMembers: Bool = false) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.keepsDuplicateMembers = keepsDuplicateMembers
    }

    /// Parses one JSON document: a value surrounded by optional whitespace.
    package mutating func parse() throws(JSONSyntaxError) -> JSONNode {
        if let invalid = Self.firstInvalidUTF8(bytes) {
            throw JSONSyntaxError(
                position: invalid.position, offset: invalid.offset, path: [], found: "bytes that are not UTF-8",
                expected: "a UTF-8 text file", reason: .invalidUTF8)
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }  // a UTF-8 byte order mark
        skipWhitespace()
        let root = try parseValue(depth: 0)
        skipWhitespace()
        if offset < bytes.count {
            throw error(
                .trailingContent, found: describeCurrent(), expected: "the end of the file after the top-level value")
        }
        return root
    }

    // MARK: Values

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        let start = position
        guard let byte = peek() else { throw error(.expectedValue, found: "the end of the file", expected: "a value") }
        if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "["), depth >= maximumDepth {
            throw error(
                .tooDeep(limit: maximumDepth), found: "more than \(maximumDepth) nested arrays or objects",
                expected: "a shallower document")
        }
        switch byte {
        case UInt8(ascii: "{"): return JSONNode(value: try parseObject(depth: depth), position: start)
        case UInt8(ascii: "["): return JSONNode(value: try parseArray(depth: depth), position: start)
        case UInt8(ascii: "\""): return JSONNode(value: .string(try parseString()), position: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(value: .number(try parseNumber()), position: start)
        case UInt8(ascii: "t"): try expectLiteral("true"); return JSONNode(value: .bool(true), position: start)
        case UInt8(ascii: "f"): try expectLiteral("false"); return JSONNode(value: .bool(false), position: start)
        case UInt8(ascii: "n"): try expectLiteral("null"); return JSONNode(value: .null, position: start)
        default: throw error(.expectedValue, found: describeCurrent(), expected: "a value")
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONNode.Value {
        let opening = position
        advance()  // {
        var members: [JSONNode.Member] = []
        var firstPositions: [String: SourcePosition] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            advance()
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else {
                throw error(
                    .expectedKey, found: describeCurrent(), expected: "a string key", opening: ("object", opening))
            }
            let keyPosition = position
            let key = try parseString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else {
                throw error(
                    .expectedColon(afterKey: key), found: describeCurrent(),
                    expected: "\":\" after the key \(quotedInFull(key))",
                    opening: ("object", opening))
            }
            advance()
            skipWhitespace()
            path.append(.key(key))
            let value = try parseValue(depth: depth + 1)
            path.removeLast()
            let member = JSONNode.Member(key: key, keyPosition: keyPosition, value: value)
            if let first = firstPositions[key] {
                duplicateKeys.append(
                    DuplicateKey(objectPath: path, key: key, position: keyPosition, firstPosition: first))
                if keepsDuplicateMembers { members.append(member) }
            } else {
                firstPositions[key] = keyPosition
                members.append(member)
            }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): advance()
            case UInt8(ascii: "}"): advance(); return .object(members)
            default:
                throw error(
                    .expectedCommaOrClosingBrace(afterKey: key), found: describeCurrent(), expected: "\",\" or \"}\"",
                    opening: ("object", opening))
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONNode.Value {
        let opening = position
        advance()  // [
        var elements: [JSONNode] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            advance()
            return .array(elements)
        }
        while true {
            skipWhitespace()
            path.append(.index(elements.count))
            elements.append(try parseValue(depth: depth + 1))
            path.removeLast()
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): advance()
            case UInt8(ascii: "]"): advance(); return .array(elements)
            default:
                throw error(
                    .expectedCommaOrClosingBracket, found: describeCurrent(), expected: "\",\" or \"]\"",
                    opening: ("array", opening))
            }
        }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        let opening = position
        advance()  // "
        var text: [UInt8] = []
        while true {
            guard let byte = peek() else {
                throw error(
                    .unterminatedString(opening: opening), found: "the end of the file",
                    expected: "a closing quote", opening: ("string", opening))
            }
            switch byte {
            case UInt8(ascii: "\""):
                advance()
                return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                advance()
                text.append(contentsOf: String(try parseEscape()).utf8)
            case 0x00..<0x20:
                throw error(
                    .controlCharacter, found: "a control character (U+\(hex(byte, width: 4)))",
                    expected: "\"\\n\" or another escape inside a string")
            default:
                text.append(byte)
                advance()
            }
        }
    }

    private mutating func parseEscape() throws(JSONSyntaxError) -> Unicode.Scalar {
        guard let byte = peek() else {
            throw error(.expectedEscape, found: "the end of the file", expected: "an escape character")
        }
        let escapePosition = position
        advance()
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try parseHexQuad()
            if (0xD800..<0xDC00).contains(high) {
                guard peek() == UInt8(ascii: "\\"), peek(at: 1) == UInt8(ascii: "u") else {
                    throw error(
                        .loneHighSurrogate, found: "a lone high surrogate \\u\(hex(high, width: 4))",
                        expected: "a low surrogate \\uDC00…\\uDFFF after it")
                }
                advance(); advance()
                let low = try parseHexQuad()
                guard (0xDC00..<0xE000).contains(low) else {
                    throw error(
                        .invalidLowSurrogate(low), found: "\\u\(hex(low, width: 4))",
                        expected: "a low surrogate \\uDC00…\\uDFFF")
                }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(high) else {
                throw error(
                    .loneLowSurrogate, found: "a lone low surrogate \\u\(hex(high, width: 4))",
                    expected: "a valid Unicode scalar")
            }
            return scalar
        default:
            throw error(
                .invalidEscape(byte, at: escapePosition),
                found: "the escape \\\(String(decoding: [byte], as: UTF8.self))",
                expected: "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
        }
    }

    private mutating func parseHexQuad() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek(), let digit = hexValue(byte) else {
                throw error(.expectedHexDigit, found: describeCurrent(), expected: "four hexadecimal digits after \\u")
            }
            value = value << 4 | digit
            advance()
        }
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = offset
        if peek() == UInt8(ascii: "-") { advance() }
        guard let first = peek(), isDigit(first) else {
            throw error(.expectedDigit(after: .minusSign), found: describeCurrent(), expected: "a digit")
        }
        advance()
        if first != UInt8(ascii: "0") { while let byte = peek(), isDigit(byte) { advance() } }
        if peek() == UInt8(ascii: ".") {
            advance()
            guard let byte = peek(), isDigit(byte) else {
                throw error(
                    .expectedDigit(after: .decimalPoint), found: describeCurrent(), expected: "a digit after \".\"")
            }
            while let byte = peek(), isDigit(byte) { advance() }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            advance()
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { advance() }
            guard let byte = peek(), isDigit(byte) else {
                throw error(.expectedDigit(after: .exponentMark), found: describeCurrent(), expected: "an exponent")
            }
            while let byte = peek(), isDigit(byte) { advance() }
        }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    private mutating func expectLiteral(_ literal: String) throws(JSONSyntaxError) {
        let start = position
        let startOffset = offset
        for expected in literal.utf8 {
            guard peek() == expected else {
                let word = bytes[startOffset...].prefix { isWordByte($0) }
                throw JSONSyntaxError(
                    position: start, offset: startOffset, path: path,
                    found: quoted(String(decoding: word, as: UTF8.self)),
                    expected: "a value (a string, number, object, array, true, false or null)", reason: .expectedValue)
            }
            advance()
        }
    }

    // MARK: Reading bytes

    private static func firstInvalidUTF8(_ bytes: [UInt8]) -> (position: SourcePosition, offset: Int)? {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var position = SourcePosition(line: 1, column: 1)
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                offset += UTF8.width(scalar)
                if scalar == "\n" {
                    position.line += 1
                    position.column = 1
                } else {
                    position.column += 1
                }
            case .emptyInput: return nil
            case .error: return (position, offset)
            }
        }
    }

    private var position: SourcePosition { SourcePosition(line: line, column: column) }

    private func peek(at distance: Int = 0) -> UInt8? {
        offset + distance < bytes.count ? bytes[offset + distance] : nil
    }

    private mutating func advance() {
        let byte = bytes[offset]
        offset += 1
        if byte == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {  // not a UTF-8 continuation byte
            column += 1
        }
    }

    private mutating func skipWhitespace() {
        while let byte = peek(),
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t")
                || byte == UInt8(ascii: "\r")
        {
            advance()
        }
    }

    private func describeCurrent() -> String {
        guard let byte = peek() else { return "the end of the file" }
        if byte == UInt8(ascii: "\""), let close = bytes[(offset + 1)...].prefix(60).firstIndex(of: UInt8(ascii: "\""))
        {
            return "the string " + quoted(String(decoding: bytes[(offset + 1)..<close], as: UTF8.self))
        }
        if isWordByte(byte) {
            let word = bytes[offset...].prefix { isWordByte($0) }.prefix(40)
            return quoted(String(decoding: word, as: UTF8.self))
        }
        var end = offset + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return quoted(String(decoding: bytes[offset..<end], as: UTF8.self))
    }

    private func error(
        _ reason: JSONSyntaxError.Reason, found: String, expected: String,
        opening: (kind: String, position: SourcePosition)? = nil
    ) -> JSONSyntaxError {
        var expected = expected
        if let opening, peek() == nil {
            expected += " (the \(opening.kind) opened at \(opening.position) is never closed)"
        }
        return JSONSyntaxError(
            position: position, offset: offset, path: path, found: found, expected: expected, reason: reason)
    }
}

private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

private func isWordByte(_ byte: UInt8) -> Bool {
    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
        || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
}

private func hexValue(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
    default: return nil
    }
}
