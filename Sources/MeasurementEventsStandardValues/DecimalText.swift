import Foundation

/// Amounts as decimal text: how ``Order`` carries money on the bus and encoders write it.
///
/// ```swift
/// DecimalText.value("0.10")                 // 0.1, a Decimal
/// DecimalText.text(Decimal(string: "0.1")! + Decimal(string: "0.2")!)   // "0.3"
/// ```
///
/// The text is `-?digits(.digits)?` (a JSON number without exponent), at most
/// ``maximumDigits`` digits: within `Decimal`'s 38-digit mantissa, so sums stay exact.
public enum DecimalText {
    /// The most digits an amount may have.
    public static let maximumDigits = 30

    /// The amount `text` spells, or `nil` when it is not decimal text of at most
    /// ``maximumDigits`` digits (`NaN`, `1e5`, `1,5`, `Infinity` and the empty string are not).
    ///
    /// - Parameter text: decimal text.
    /// - Returns: the amount, or `nil`.
    public static func value(_ text: String) -> Decimal? {
        guard isDecimalText(text) else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }

    /// The shortest decimal text of `value` (`19.9`, `0.3`, `-5`), or `"NaN"` for a NaN.
    ///
    /// - Parameter value: an amount.
    /// - Returns: its text.
    public static func text(_ value: Decimal) -> String {
        if value.isNaN { return "NaN" }
        // Decimal's description is the plain decimal form, the same on every platform.
        return value.description
    }

    /// Whether `text` is `-?[0-9]+(\.[0-9]+)?` with at most ``maximumDigits`` digits and no
    /// leading zero before other digits (JSON's number grammar, without exponent).
    static func isDecimalText(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let integer = bytes.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard !integer.isEmpty, !(integer.count > 1 && integer.first == UInt8(ascii: "0")) else { return false }
        var rest = bytes.dropFirst(integer.count)
        var digits = integer.count
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            let fraction = rest.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard !fraction.isEmpty else { return false }
            digits += fraction.count
            rest = rest.dropFirst(fraction.count)
        }
        return rest.isEmpty && digits <= maximumDigits
    }
}
