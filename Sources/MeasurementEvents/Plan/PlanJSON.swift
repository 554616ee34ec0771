import Foundation

/// A JSON value read by ``PlanJSONReader``, with the byte offset where it starts.
///
/// Unlike `JSONSerialization`, objects keep every member in file order, duplicates included,
/// so that a plan validator can report duplicate keys and point at each value.
struct PlanJSONValue {
    enum Kind {
        case object([Member])
        case array([PlanJSONValue])
        case string(String)
        /// The number's text, as written.
        case number(String)
        case bool(Bool)
        case null
    }

    struct Member {
        var key: String
        var keyOffset: Int
        var value: PlanJSONValue
    }

    var kind: Kind
    var offset: Int

    /// "an object", "a string", …: for "found …, expected …" messages.
    var kindDescription: String {
        switch kind {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number(let text): return "the number \(text)"
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        }
    }
}

/// A JSON syntax error: the byte offset where reading stopped and what was wrong there.
struct PlanJSONSyntaxError: Error {
    var offset: Int
    var message: String
}

/// A small strict JSON reader (RFC 8259) for tracking plans and catalogs: keeps member order,
/// duplicate keys and offsets; limits nesting so that hostile input cannot exhaust the stack.
struct PlanJSONReader {
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func read(_ data: Data) throws(PlanJSONSyntaxError) -> PlanJSONValue {
        var reader = PlanJSONReader(Array(data))
        if reader.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
        let value = try reader.readValue()
        reader.skipWhitespace()
        if reader.index < reader.bytes.count {
            throw reader.error("found \(reader.found) after the end of the JSON value, expected the end of the file")
        }
        return value
    }

    /// 1-based line and column (in characters) of a byte offset.
    static func position(of offset: Int, in data: Data) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // count characters, not UTF-8 continuation bytes
                column += 1
            }
        }
        return (line, column)
    }

    // MARK: Values

    private mutating func readValue() throws(PlanJSONSyntaxError) -> PlanJSONValue {
        skipWhitespace()
        let start = index
        guard let byte = peek() else { throw error("found the end of the file, expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return PlanJSONValue(kind: .object(try readObject()), offset: start)
        case UInt8(ascii: "["): return PlanJSONValue(kind: .array(try readArray()), offset: start)
        case UInt8(ascii: "\""): return PlanJSONValue(kind: .string(try readString()), offset: start)
        case UInt8(ascii: "t"): try readLiteral("true"); return PlanJSONValue(kind: .bool(true), offset: start)
        case UInt8(ascii: "f"): try readLiteral("false"); return PlanJSONValue(kind: .bool(false), offset: start)
        case UInt8(ascii: "n"): try readLiteral("null"); return PlanJSONValue(kind: .null, offset: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return PlanJSONValue(kind: .number(try readNumber()), offset: start)
        default:
            throw error("found \(found), expected a value")
        }
    }

    private mutating func readObject() throws(PlanJSONSyntaxError) -> [PlanJSONValue.Member] {
        try enterContainer()
        defer { depth -= 1 }
        index += 1  // {
        var members: [PlanJSONValue.Member] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else {
                throw error("found \(found), expected a string key")
            }
            let keyOffset = index
            let key = try readString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw error("found \(found), expected ':' after the key \"\(key)\"") }
            index += 1
            let value = try readValue()
            members.append(.init(key: key, keyOffset: keyOffset, value: value))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return members
            default: throw error("found \(found), expected ',' or '}' after the value of \"\(key)\"")
            }
        }
    }

    private mutating func readArray() throws(PlanJSONSyntaxError) -> [PlanJSONValue] {
        try enterContainer()
        defer { depth -= 1 }
        index += 1  // [
        var elements: [PlanJSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            elements.append(try readValue())
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return elements
            default: throw error("found \(found), expected ',' or ']' after an array element")
            }
        }
    }

    private mutating func enterContainer() throws(PlanJSONSyntaxError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw error("found more than \(Self.maximumDepth) nested arrays or objects, expected at most \(Self.maximumDepth)")
        }
    }

    private mutating func readString() throws(PlanJSONSyntaxError) -> String {
        let start = index
        index += 1  // opening quote
        var utf8: [UInt8] = []
        while true {
            guard let byte = peek() else {
                index = start
                throw error("found a string that never ends, expected a closing '\"'")
            }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(bytes: utf8, encoding: .utf8) else {
                    index = start
                    throw error("found a string that is not valid UTF-8, expected UTF-8 text")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                try readEscape(into: &utf8)
            case 0..<0x20:
                throw error("found a control character in a string, expected it escaped (\\n, \\t, \\u0000)")
            default:
                utf8.append(byte)
                index += 1
            }
        }
    }

    private mutating func readEscape(into utf8: inout [UInt8]) throws(PlanJSONSyntaxError) {
        guard let byte = peek() else { throw error("found the end of the file, expected an escape character") }
        index += 1
        let simple: [UInt8: UInt8] = [
            UInt8(ascii: "\""): UInt8(ascii: "\""), UInt8(ascii: "\\"): UInt8(ascii: "\\"),
            UInt8(ascii: "/"): UInt8(ascii: "/"), UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C,
            UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
        ]
        if let replacement = simple[byte] {
            utf8.append(replacement)
            return
        }
        guard byte == UInt8(ascii: "u") else {
            index -= 1
            throw error("found the escape \\\(Character(Unicode.Scalar(byte))), expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
        }
        var scalar = try readHex4()
        if (0xD800..<0xDC00).contains(scalar) {
            guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw error("found a lone UTF-16 high surrogate, expected a \\uDC00-\\uDFFF escape after it")
            }
            index += 2
            let low = try readHex4()
            guard (0xDC00..<0xE000).contains(low) else {
                throw error("found \\u\(String(low, radix: 16)) after a high surrogate, expected \\uDC00-\\uDFFF")
            }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let unicode = Unicode.Scalar(scalar) else {
            throw error("found a lone UTF-16 low surrogate, expected a character")
        }
        utf8.append(contentsOf: Array(String(Character(unicode)).utf8))
    }

    private mutating func readHex4() throws(PlanJSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek(), let digit = hexDigit(byte) else {
                throw error("found \(found) in a \\u escape, expected four hexadecimal digits")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    private mutating func readNumber() throws(PlanJSONSyntaxError) -> String {
        let start = index
        func digits(_ reader: inout PlanJSONReader) -> Int {
            let first = reader.index
            while let byte = reader.peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { reader.index += 1 }
            return reader.index - first
        }
        if peek() == UInt8(ascii: "-") { index += 1 }
        if peek() == UInt8(ascii: "0") {
            index += 1
        } else if digits(&self) == 0 {
            throw error("found \(found) after '-', expected a digit")
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            if digits(&self) == 0 { throw error("found \(found) after a decimal point, expected a digit") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            if digits(&self) == 0 { throw error("found \(found) in an exponent, expected a digit") }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func readLiteral(_ literal: StaticString) throws(PlanJSONSyntaxError) {
        let expected = literal.withUTF8Buffer { Array($0) }
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw error("found \(found), expected a value")
        }
        index += expected.count
    }

    // MARK: Helpers

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    /// The character at the current offset, quoted, for messages.
    private var found: String {
        guard index < bytes.count else { return "the end of the file" }
        let byte = bytes[index]
        if byte < 0x20 || byte == 0x7F { return "the control character 0x\(String(byte, radix: 16))" }
        // Show a whole (possibly multi-byte) character.
        var end = index + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80, end - index < 4 { end += 1 }
        return "'\(String(decoding: bytes[index..<end], as: UTF8.self))'"
    }

    private func error(_ message: String) -> PlanJSONSyntaxError {
        PlanJSONSyntaxError(offset: index, message: message)
    }
}
