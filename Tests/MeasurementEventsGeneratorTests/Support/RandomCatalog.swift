import Foundation
import MeasurementEventsGenerator

/// SplitMix64: a tiny seeded generator, so that a failing random catalog can be made again
/// from the seed printed with the failure.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random catalogs that stress the naming rules: acronyms, keywords, digits, names that differ
/// only in where the words break (`ui/shown`, `u_i/shown`, `post/feed_shown`), Unicode and control
/// characters in descriptions, empty catalogs. Every name is valid on its own; a catalog may still
/// be invalid as a whole when two names give one Swift identifier.
struct RandomCatalog {
    /// Words of event names (lowercase) and arg names; digits only after the first word.
    static let words = [
        "ui", "u", "i", "id", "ids", "ds", "url", "urls", "ur", "l", "json", "http", "https", "api", "uuid", "sdk",
        "xml",
        "item", "feed", "shown", "tapped", "post", "all", "names", "personal", "data", "args", "event", "name", "type",
        "value", "center", "to", "self", "default", "in", "inout", "for", "class", "init", "some", "any", "is", "as",
        "do",
        "v2", "x1", "a", "b", "string", "bool", "int", "optional", "set", "typed", "measurement",
    ]
    static let digitWords = ["2", "3d", "10", "0"]
    /// Arg names as people write them, beside the generated snake_case ones.
    static let argNames = [
        "itemId", "itemID", "ItemCount", "URL", "Url", "iOS", "x", "X", "inout", "Self", "Type", "Any", "default",
        "var", "let",
        "center", "to", "event", "value", "eventName", "eventType", "async", "await", "throws", "true", "nil",
    ]
    static let descriptions = [
        "Plain.", "Café ☕️ 👩‍👩‍👧 ünïcödé", "Line one.\nLine two.", "Windows\r\nbreak", "Separator\u{2028}here",
        "NEL\u{85}here",
        "Quote \" and backslash \\ and */ and /* open", "Tab\there", "Right-to-left \u{202E}override",
        "Zero\u{200B}width",
        "Bell \u{7}, escape \u{1B}, delete \u{7F}", "NUL \u{0} inside", "Trailing backslash \\", "```swift\ncode\n```",
        "\"\"\"",
    ]

    private var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    /// A catalog file's JSON text for `module`.
    mutating func catalogJSON(module: String) -> String {
        var names: [String] = []
        let count = chance(0.05) ? 0 : Int.random(in: 1...6, using: &random)
        var events: [String] = []
        for _ in 0..<count {
            let name =
                names.isEmpty || !chance(0.25) ? eventName() : nearCollision(of: names.randomElement(using: &random)!)
            // Digit words can start a part after re-splitting (`feed_2` → `feed/2`): not a name at all.
            guard CatalogReader.isEventName(name), !names.contains(name) else { continue }
            names.append(name)
            var members = [#""name": \#(jsonString(name))"#, #""description": \#(jsonString(description()))"#]
            if chance(0.3) {
                members.append(
                    #""type": "\#(["click", "impression", "redirect", "activity", "user_action"].randomElement(using: &random)!)""#
                )
            }
            if chance(0.3) { members.append(#""category": \#(jsonString(description()))"#) }
            let args = (0..<Int.random(in: 0...4, using: &random)).map { _ in argName() }
            if !args.isEmpty {
                var seen: Set<String> = []
                let argMembers = args.filter { seen.insert($0).inserted }.map { arg(named: $0) }
                members.append(#""args": {\#(argMembers.joined(separator: ", "))}"#)
            }
            events.append("{" + members.joined(separator: ", ") + "}")
        }
        let description = chance(0.5) ? #""description": \#(jsonString(self.description())), "# : ""
        return #"{"module": "\#(module)", \#(description)"events": [\#n  \#(events.joined(separator: ",\n  "))\#n]}"#
    }

    private mutating func arg(named name: String) -> String {
        let type = ["string", "int", "double", "bool"].randomElement(using: &random)!
        var members = [#""type": "\#(type)""#, #""description": \#(jsonString(description()))"#]
        if chance(0.4) { members.append(#""optional": true"#) }
        // Personal data is text only (it is sent hashed); other types marked "pii" are rejected.
        if type == "string", chance(0.2) { members.append(#""pii": true"#) }
        return jsonString(name) + ": {" + members.joined(separator: ", ") + "}"
    }

    private mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &random) < probability
    }

    private mutating func word(first: Bool) -> String {
        if !first, chance(0.1) { return Self.digitWords.randomElement(using: &random)! }
        return Self.words.randomElement(using: &random)!
    }

    private mutating func part() -> String {
        (0..<Int.random(in: 1...3, using: &random)).map { word(first: $0 == 0) }.joined(separator: "_")
    }

    private mutating func eventName() -> String {
        (0..<Int.random(in: 2...3, using: &random)).map { _ in part() }.joined(separator: "/")
    }

    /// Another spelling of `name` that may give the same identifiers.
    private mutating func nearCollision(of name: String) -> String {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return name.replacingFirst("_", with: "/")
        case 1:
            return name.replacingFirst("/", with: "_").contains("/") ? name.replacingFirst("/", with: "_") : name + "/x"
        case 2: return name.replacingFirst("ui", with: "u_i").replacingFirst("ids", with: "i_ds")
        case 3: return "post/" + name.replacingOccurrences(of: "/", with: "_")
        default: return name.replacingFirst("_", with: "__")
        }
    }

    private mutating func argName() -> String {
        if chance(0.4) { return Self.argNames.randomElement(using: &random)! }
        return (0..<Int.random(in: 1...3, using: &random)).map { word(first: $0 == 0) }.joined(separator: "_")
    }

    private mutating func description() -> String {
        Self.descriptions.randomElement(using: &random)!
    }
}

/// A JSON string literal: quotes, backslashes and every control character escaped.
func jsonString(_ text: String) -> String {
    var literal = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": literal += "\\\""
        case "\\": literal += "\\\\"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            literal += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: literal.unicodeScalars.append(scalar)
        }
    }
    return literal + "\""
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
