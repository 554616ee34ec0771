/// Why a file is not valid JSON, and where.
///
/// `found` and `expected` are ready for a "found …, expected …" message; `reason` says the same
/// as data, for readers that word their messages their own way.
package struct JSONSyntaxError: Error, Hashable, Sendable {
    package enum Reason: Hashable, Sendable {
        case invalidUTF8
        /// A value was expected: the end of the file, a stray character or a misspelt literal.
        case expectedValue
        case expectedKey
        case expectedColon(afterKey: String)
        case expectedCommaOrClosingBrace(afterKey: String)
        case expectedCommaOrClosingBracket
        case tooDeep(limit: Int)
        /// The file ends inside the string that opens at `opening`.
        case unterminatedString(opening: SourcePosition)
        case controlCharacter
        /// The file ends right after a backslash.
        case expectedEscape
        /// `\x` where `x`, the byte at `at`, starts no escape.
        case invalidEscape(UInt8, at: SourcePosition)
        case loneHighSurrogate
        case invalidLowSurrogate(UInt32)
        case loneLowSurrogate
        case expectedHexDigit
        case expectedDigit(after: NumberPart)
        case trailingContent
    }

    /// What a number's missing digit should have followed.
    package enum NumberPart: Hashable, Sendable {
        case minusSign, decimalPoint, exponentMark
    }

    package var position: SourcePosition
    /// The byte offset of `position` in the file, a byte order mark included.
    package var offset: Int
    /// Where in the document the parser was (the innermost complete key or index).
    package var path: [JSONPathComponent]
    package var found: String
    package var expected: String
    package var reason: Reason
}
