/// A TC string's core segment as bits, to change one field of a published string and encode it
/// again: for tests of what the decoder says about a field that breaks the format.
struct TCStringBits {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    var bits: [Bool]

    /// The bits of the characters (base64url) of `text`'s core segment, 6 per character.
    init(_ text: String) {
        bits = text.prefix { $0 != "." }.flatMap { character -> [Bool] in
            let value = Self.alphabet.firstIndex(of: character)!
            return (0..<6).map { value >> (5 - $0) & 1 == 1 }
        }
    }

    /// Writes `value` over the `width` bits at `offset`, the most significant bit first.
    mutating func set(_ value: Int, width: Int, at offset: Int) {
        for index in 0..<width { bits[offset + index] = value >> (width - 1 - index) & 1 == 1 }
    }

    /// The bits as base64url, padded with zero bits to whole characters.
    var text: String {
        var padded = bits
        while padded.count % 6 != 0 { padded.append(false) }
        return String(
            stride(from: 0, to: padded.count, by: 6).map { start in
                Self.alphabet[(0..<6).reduce(0) { $0 << 1 | (padded[start + $1] ? 1 : 0) }]
            })
    }
}
