/// How catalog names become Swift identifiers. The rules, applied everywhere:
///
/// - A name is split into words at `/` and `_`: `feed/item_tapped` → `feed`, `item`, `tapped`.
/// - The first word is lowercased at its first letter (`lowerCamelCase`), every later word is
///   capitalized at its first letter; the rest of each word is kept as written.
/// - Known acronyms (``acronyms``: `id`, `url`, `http`, `json`, `ui`, …) are written all in
///   capitals when they are not the first word: `item_id` → `itemID`, `image_url` → `imageURL`;
///   as the first word they are all lowercase: `url_opened` → `urlOpened`.
/// - Type names capitalize every word: `feed/item_tapped` → `FeedItemTapped`, `id/changed` → `IDChanged`.
/// - Swift keywords are escaped with backticks: `default` → \`default\`; as argument labels
///   at call sites only `inout` needs them (``argumentLabel(_:)``).
///
/// ```swift
/// SwiftNaming.lowerCamelCase("feed/item_tapped")   // "feedItemTapped"
/// SwiftNaming.lowerCamelCase("item_id")            // "itemID"
/// SwiftNaming.upperCamelCase("feed/item_tapped")   // "FeedItemTapped"
/// ```
package enum SwiftNaming {
    /// Words written all in capitals when they are not the first word of an identifier.
    package static let acronyms: [String: String] = [
        "api": "API", "html": "HTML", "http": "HTTP", "https": "HTTPS", "id": "ID", "ids": "IDs", "ip": "IP",
        "json": "JSON", "sdk": "SDK", "ui": "UI", "uri": "URI", "uris": "URIs", "url": "URL", "urls": "URLs",
        "uuid": "UUID", "xml": "XML",
    ]

    /// Swift's reserved words, which need backticks as identifiers.
    package static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows",
        "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default",
        "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch",
        "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true",
        "try", "_",
    ]

    /// Splits a catalog name into words at `/` and `_`.
    ///
    /// - Parameter name: an event or arg name: `feed/item_tapped`.
    /// - Returns: its words: `feed`, `item`, `tapped`.
    package static func words(_ name: String) -> [Substring] {
        name.split(whereSeparator: { $0 == "/" || $0 == "_" })
    }

    /// `feed/item_tapped` → `feedItemTapped`, `item_id` → `itemID`; not escaped.
    ///
    /// - Parameter name: an event or arg name.
    /// - Returns: the identifier, before ``escaped(_:)``.
    package static func lowerCamelCase(_ name: String) -> String {
        let parts = words(name)
        guard let first = parts.first else { return "" }
        let head = acronyms[first.lowercased()] != nil ? first.lowercased() : lowercasingFirstLetter(first)
        return head + parts.dropFirst().map(capitalized).joined()
    }

    /// `feed/item_tapped` → `FeedItemTapped`.
    ///
    /// - Parameter name: an event name.
    /// - Returns: the type name.
    package static func upperCamelCase(_ name: String) -> String {
        words(name).map(capitalized).joined()
    }

    /// The identifier as it must be written in code: backticks around keywords.
    ///
    /// - Parameter identifier: an identifier from ``lowerCamelCase(_:)`` or ``upperCamelCase(_:)``.
    /// - Returns: the identifier, between backticks when it is a keyword.
    package static func escaped(_ identifier: String) -> String {
        keywords.contains(identifier) ? "`\(identifier)`" : identifier
    }

    /// The identifier as an argument label at a call site: `inout` between backticks. Every
    /// other keyword is a valid label as it is (`default: x`, `in: y`), and reads better without
    /// backticks.
    ///
    /// - Parameter identifier: an arg name, already lowerCamelCase.
    /// - Returns: the label to write before the colon.
    package static func argumentLabel(_ identifier: String) -> String {
        identifier == "inout" ? "`inout`" : identifier
    }

    /// The case of an allowed value in the generated enum: `"dark-mode"` → `darkMode`, `3` →
    /// `_3`, `-1` → `_minus1`; `nil` for a string with no letter or digit. Not escaped.
    static func caseName(for value: CatalogValue) -> String {
        switch value {
        case .int(let number):
            return number < 0 ? "_minus\(number.magnitude)" : "_\(number)"
        case .string(let text):
            let words = text.unicodeScalars.split { !($0.isASCIILetter || $0.isASCIIDigit) }.map { String($0) }
            let name = lowerCamelCase(words.joined(separator: "_"))
            guard let first = name.unicodeScalars.first else { return "_" }
            return first.isASCIIDigit ? "_" + name : name
        }
    }

    private static func capitalized(_ word: Substring) -> String {
        if let acronym = acronyms[word.lowercased()] { return acronym }
        return word.prefix(1).uppercased() + word.dropFirst()
    }

    private static func lowercasingFirstLetter(_ word: Substring) -> String {
        word.prefix(1).lowercased() + word.dropFirst()
    }
}
