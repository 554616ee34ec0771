import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
internal import MeasurementEventsJSON

/// Tracking plans and generator catalogs read with the package's ``JSONParser``, with syntax
/// errors in the plan loader's words ("found '}', expected a string key").
///
/// Objects keep every member in file order, duplicates included, so that the loader reports
/// duplicate keys itself and points at each one.
enum PlanJSON {
    /// Plans are shallow; deeper nesting is hostile or a mistake.
    static let maximumDepth = 64

    static func read(_ data: Data) throws(PlanJSONSyntaxError) -> JSONNode {
        let bytes = Array(data)
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth, keepsDuplicateMembers: true)
        do {
            return try parser.parse()
        } catch {
            throw PlanJSONSyntaxError(error, bytes: bytes)
        }
    }

    /// Reads `data`; a syntax error is added to `problems` at `$` and thrown with all of them.
    static func read(_ data: Data, reportingTo problems: inout ProblemList) throws(TrackingPlanError) -> JSONNode {
        do throws(PlanJSONSyntaxError) {
            return try read(data)
        } catch {
            problems.add("$", at: error.position, "syntax error: \(error.message)")
            throw TrackingPlanError(problems: problems.sorted)
        }
    }
}

/// A JSON syntax error: where reading stopped and what was wrong there.
struct PlanJSONSyntaxError: Error {
    var position: SourcePosition
    var message: String

    init(_ error: JSONSyntaxError, bytes: [UInt8]) {
        let found = Self.describe(bytes, at: error.offset)
        position = error.position
        switch error.reason {
        case .invalidUTF8:
            message = "found bytes that are not UTF-8, expected UTF-8 text"
        case .expectedValue:
            message = "found \(found), expected a value"
        case .expectedKey:
            message = "found \(found), expected a string key"
        case .expectedColon(let key):
            message = "found \(found), expected ':' after the key \(quotedInFull(key))"
        case .expectedCommaOrClosingBrace(let key):
            message = "found \(found), expected ',' or '}' after the value of \(quotedInFull(key))"
        case .expectedCommaOrClosingBracket:
            message = "found \(found), expected ',' or ']' after an array element"
        case .tooDeep(let limit):
            message = "found more than \(limit) nested arrays or objects, expected at most \(limit)"
        case .unterminatedString(let opening):
            position = opening
            message = "found a string that never ends, expected a closing '\"'"
        case .controlCharacter:
            message = "found a control character in a string, expected it escaped (\\n, \\t, \\u0000)"
        case .expectedEscape:
            message = "found the end of the file, expected an escape character"
        case .invalidEscape(let byte, let escapePosition):
            position = escapePosition
            message =
                "found the escape \\\(Character(Unicode.Scalar(byte))), expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"
        case .loneHighSurrogate:
            message = "found a lone UTF-16 high surrogate, expected a \\uDC00-\\uDFFF escape after it"
        case .invalidLowSurrogate(let low):
            message = "found \\u\(String(low, radix: 16)) after a high surrogate, expected \\uDC00-\\uDFFF"
        case .loneLowSurrogate:
            message = "found a lone UTF-16 low surrogate, expected a character"
        case .expectedHexDigit:
            message = "found \(found) in a \\u escape, expected four hexadecimal digits"
        case .expectedDigit(after: .minusSign):
            message = "found \(found) after '-', expected a digit"
        case .expectedDigit(after: .decimalPoint):
            message = "found \(found) after a decimal point, expected a digit"
        case .expectedDigit(after: .exponentMark):
            message = "found \(found) in an exponent, expected a digit"
        case .trailingContent:
            message = "found \(found) after the end of the JSON value, expected the end of the file"
        }
    }

    /// The character at `offset`, quoted: `'}'`, `the end of the file`.
    private static func describe(_ bytes: [UInt8], at offset: Int) -> String {
        guard offset < bytes.count else { return "the end of the file" }
        let byte = bytes[offset]
        if byte < 0x20 || byte == 0x7F { return "the control character 0x\(String(byte, radix: 16))" }
        // Show a whole (possibly multi-byte) character.
        var end = offset + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80, end - offset < 4 { end += 1 }
        return "'\(String(decoding: bytes[offset..<end], as: UTF8.self))'"
    }
}

extension JSONNode {
    /// "an object", "a string", …: for the plan loader's "found …, expected …" messages.
    var kindDescription: String {
        switch value {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number(let text): return "the number \(text)"
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        }
    }
}
