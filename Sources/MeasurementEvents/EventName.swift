/// The name of a measurement event, namespaced with slashes.
///
/// ```swift
/// let tapped: EventName = "feed/item_tapped"
/// let granted = EventName("app/permission/photo_library/granted")
/// ```
///
/// Any string can be held; ``EventName/validationFailure`` says whether the bus would
/// accept it (catalogs apply stricter rules: lowercase, slash-namespaced).
public struct EventName: RawRepresentable, Hashable, Comparable, Sendable, Codable,
    ExpressibleByStringLiteral, CustomStringConvertible
{
    /// The longest name, in UTF-8 bytes, that the bus accepts.
    public static let maximumLength = 256

    /// The name's text, for example `feed/item_tapped`.
    public let rawValue: String

    /// A name from its text; the bus checks it when the event is posted.
    ///
    /// - Parameter rawValue: the name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A name from its text.
    ///
    /// - Parameter rawValue: the name, for example `feed/item_tapped`.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// A name from a string literal.
    ///
    /// - Parameter value: the name.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Reads a name from a single string.
    ///
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` when the value is not a string.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Writes the name as a single string.
    ///
    /// - Parameter encoder: the encoder to write to.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The name's text.
    public var description: String { rawValue }

    /// The slash-separated parts: `["feed", "item_tapped"]`.
    public var components: [Substring] { rawValue.split(separator: "/", omittingEmptySubsequences: false) }

    /// Orders names by their text, so that lists of names print in a stable order.
    ///
    /// - Parameters:
    ///   - lhs: a name.
    ///   - rhs: another name.
    /// - Returns: `true` when `lhs` sorts first.
    public static func < (lhs: EventName, rhs: EventName) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Why the bus would reject this name, or `nil` when it is acceptable: not empty, at most
    /// ``maximumLength`` UTF-8 bytes, no empty component (`a//b`, `/a`, `a/`), no whitespace
    /// (ASCII or Unicode: U+00A0, U+2028, …), control or invisible format characters (U+200B).
    public var validationFailure: String? {
        // Runs on every post: a contiguous buffer scans several times faster than the view.
        rawValue.utf8.withContiguousStorageIfAvailable(Self.validationFailure(utf8:))
            ?? Self.validationFailure(utf8: rawValue.utf8)
    }

    private static func validationFailure(utf8: some Collection<UInt8>) -> String? {
        if utf8.isEmpty { return "the name is empty" }
        if utf8.count > Self.maximumLength {
            return "the name is \(utf8.count) bytes long; at most \(Self.maximumLength) are allowed"
        }
        var previous: UInt8 = UInt8(ascii: "/")
        var hasNonASCII = false
        for byte in utf8 {
            if byte <= 0x20 || byte == 0x7F { return "the name contains whitespace or a control character" }
            if byte >= 0x80 { hasNonASCII = true }
            if byte == UInt8(ascii: "/") && previous == UInt8(ascii: "/") {
                return "the name has an empty component (a leading, trailing or double slash)"
            }
            previous = byte
        }
        if previous == UInt8(ascii: "/") {
            return "the name has an empty component (a leading, trailing or double slash)"
        }
        // Unicode properties cost far more than the byte scan: only names with non-ASCII pay.
        if hasNonASCII,
            let scalar = String(decoding: utf8, as: UTF8.self).unicodeScalars.first(where: \.isForbiddenInEventNames)
        {
            return "the name contains whitespace or an invisible character (U+\(hex(scalar.value, width: 4)))"
        }
        return nil
    }
}

extension Unicode.Scalar {
    /// Whitespace (U+00A0, U+2028, U+3000, …), controls (U+0085) and invisible format
    /// characters (U+200B, U+FEFF, bidirectional overrides), which make two names look alike.
    fileprivate var isForbiddenInEventNames: Bool { properties.isWhitespace || isInvisibleInMessages }
}
