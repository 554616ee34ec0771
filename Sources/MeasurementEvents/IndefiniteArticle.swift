/// "a" or "an" before a word that messages put in a sentence, chosen by how the word is said:
/// the type names of violations and malformed-input errors (`int`, `Int`, `Optional<Int>`,
/// `NSDictionary`, `URL`) come from the code, so no message can write the article by hand.
///
/// ```swift
/// "int".withIndefiniteArticle           // "an int"
/// "string".withIndefiniteArticle        // "a string"
/// "NSDictionary".withIndefiniteArticle  // "an NSDictionary": en-es-dictionary
/// "UInt".withIndefiniteArticle          // "a UInt": you-int
/// ```
extension String {
    /// The word after "a" or "an", by its first sound.
    package var withIndefiniteArticle: String {
        (startsWithVowelSound ? "an " : "a ") + self
    }

    /// Whether the word is said starting with a vowel. An acronym (its first two letters
    /// capitals: `NSNumber`, `URL`, `UInt`) is said letter by letter, and A, E, F, H, I, L, M, N,
    /// O, R, S and X are said with a vowel first; another word by its first letter, where a
    /// "u" said "you" (`unicode`, `usage`, `utf8`) takes "a".
    private var startsWithVowelSound: Bool {
        let letters = Array(unicodeScalars.prefix(3))
        guard let first = letters.first else { return false }
        if letters.count > 1, first.isASCIIUppercase, letters[1].isASCIIUppercase {
            return "AEFHILMNORSX".unicodeScalars.contains(first)
        }
        switch Character(first).lowercased() {
        case "a", "e", "i", "o": return true
        case "u":
            let start = String(String.UnicodeScalarView(letters)).lowercased()
            return !["uni", "usa", "use", "usu", "uti", "utf"].contains(start)
        default: return false
        }
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIIUppercase: Bool { ("A"..."Z").contains(self) }
}
