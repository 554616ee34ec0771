import Foundation

/// How every message shows text that came from outside (event names, catalog and plan
/// values, JSON the parser stopped at): on one line, with nothing invisible.
///
/// Control characters, line and paragraph separators and invisible format characters
/// (zero-width space, bidirectional overrides) are written as escapes: a name with a newline
/// cannot split a log line, a NUL byte cannot end a C string, and `feed/opened\u{200B}` does
/// not look like `feed/opened`.
///
/// ```swift
/// quoted("feed/\nopened")      // "\"feed/\\nopened\"", shown as "feed/\nopened"
/// quoted("a\u{0}b")            // shown as "a\u{0}b"
/// ```
extension String {
    /// The text with every invisible or line-breaking character escaped (`\n`, `\r`, `\t`,
    /// `\u{0}`, `\u{2028}`); backslashes and quotes are left as they are.
    package var escapingInvisibleCharacters: String {
        // Most texts are plain printable ASCII: return them without building a new string.
        if utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return self }
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.isInvisibleInMessages:
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

extension Unicode.Scalar {
    /// Controls (C0, DEL, C1), line and paragraph separators, and format characters such as
    /// U+200B or U+202E; not the zero-width joiner, which emoji sequences need.
    package var isInvisibleInMessages: Bool {
        switch properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        case .format: return value != 0x200D
        default: return false
        }
    }
}

/// `"text"` for a message: backslashes and quotes escaped, invisible characters escaped
/// (``Swift/String/escapingInvisibleCharacters``), texts longer than 60 characters cut with `…`.
package func quoted(_ text: String) -> String {
    quotedInFull(text.count > 60 ? String(text.prefix(60)) + "…" : text)
}

/// `"text"` for a message, escaped as by ``quoted(_:)`` but never shortened: for names that a
/// reader must see whole to tell apart.
package func quotedInFull(_ text: String) -> String {
    let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    return "\"\(escaped.escapingInvisibleCharacters)\""
}

/// `value` in uppercase hexadecimal, zero-padded to at least `width` digits (`00A0`).
package func hex<T: BinaryInteger>(_ value: T, width: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
