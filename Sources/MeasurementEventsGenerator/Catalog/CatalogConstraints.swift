import Foundation

/// What a catalog may say about an arg's values beyond its type: the tracking plan's rules,
/// checked by the generator (a rule that no value can satisfy is an error), written into the
/// generated code, and enforced at post time by an aggregator given the plan.
///
/// ```json
/// "source":   { "type": "string", "description": "…", "values": ["feed", "search"] },
/// "position": { "type": "int",    "description": "…", "minimum": 0, "maximum": 500 },
/// "query":    { "type": "string", "description": "…", "pattern": "^[a-z ]*$", "maxLength": 80 }
/// ```
package struct CatalogConstraints: Hashable, Sendable {
    /// The only values the arg may take, in catalog order; empty when any value of its type is allowed.
    package var allowedValues: [CatalogValue] = []
    /// The smallest number allowed (inclusive), for `int` and `double` args.
    package var minimum: Double?
    /// The largest number allowed (inclusive), for `int` and `double` args.
    package var maximum: Double?
    /// A regular expression the string must contain a match of (anchor it with `^…$` to match
    /// the whole string, as in JSON Schema); for `string` args.
    package var pattern: String?
    /// The most Unicode scalars (JSON Schema's "characters") the string may hold; for `string` args.
    package var maxLength: Int?

    package init() {}

    /// Whether the catalog gave no rule at all.
    package var isEmpty: Bool {
        allowedValues.isEmpty && minimum == nil && maximum == nil && pattern == nil && maxLength == nil
    }
}

/// One allowed value of an arg, of the arg's type: `values` apply to `string` and `int` args.
package enum CatalogValue: Hashable, Sendable {
    case string(String)
    case int(Int)

    /// The value as JSON: `"feed"`, `3`.
    package var json: String {
        switch self {
        case .string(let text): return jsonString(text)
        case .int(let number): return String(number)
        }
    }
}

/// An event the plan retires: still accepted, reported as deprecated when posted, and its
/// generated declarations carry `@available(*, deprecated, renamed:)`.
package struct CatalogDeprecation: Hashable, Sendable {
    /// The event that replaces it, when there is one: `feed/item_opened`.
    package var replacement: String?
    /// The module whose catalog declares the replacement; set by ``CatalogSet`` once every
    /// catalog is read (`nil` until then, and for a replacement in the same catalog).
    package var replacementModule: String?
    /// Where the replacement's name is written, for messages.
    package var replacementPosition = SourcePosition(line: 1, column: 1)

    package init(replacement: String? = nil) {
        self.replacement = replacement
    }
}

/// A JSON string literal: quotes, backslashes and control characters escaped.
func jsonString(_ text: String) -> String {
    var literal = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": literal += "\\\""
        case "\\": literal += "\\\\"
        case "\n": literal += "\\n"
        case "\r": literal += "\\r"
        case "\t": literal += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            literal += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: literal.unicodeScalars.append(scalar)
        }
    }
    return literal + "\""
}

extension CatalogConstraints {
    /// Why `value` breaks one of the other rules, or `nil` when it satisfies them all: a
    /// `values` entry that breaks them could never be posted.
    func violation(by value: CatalogValue) -> String? {
        switch value {
        case .int(let number):
            if let minimum, Double(number) < minimum { return "is below the minimum" }
            if let maximum, Double(number) > maximum { return "is above the maximum" }
        case .string(let text):
            if let maxLength, text.unicodeScalars.count > maxLength { return "is longer than maxLength" }
            if let pattern, !RegularExpressionCheck.matches(pattern, text) { return "does not match the pattern" }
        }
        return nil
    }
}

/// Patterns are checked with `NSRegularExpression`, which every platform has: the same engine
/// (ICU) the aggregator uses at post time.
enum RegularExpressionCheck {
    static func isValid(_ pattern: String) -> Bool {
        (try? NSRegularExpression(pattern: pattern)) != nil
    }

    /// Whether `text` contains a match (unanchored, as JSON Schema's `pattern`).
    static func matches(_ pattern: String, _ text: String) -> Bool {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return false }
        return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}

extension CatalogArg {
    /// The arg's rules in a few words, for plans people read: `one of "search", "feed"; 0 to 500`.
    var rulesSummary: String {
        let rules = constraints
        var parts: [String] = []
        if !rules.allowedValues.isEmpty {
            parts.append("one of " + rules.allowedValues.map(\.json).joined(separator: ", "))
        }
        switch (rules.minimum, rules.maximum) {
        case (let minimum?, let maximum?): parts.append("\(numberText(minimum)) to \(numberText(maximum))")
        case (let minimum?, nil): parts.append("at least \(numberText(minimum))")
        case (nil, let maximum?): parts.append("at most \(numberText(maximum))")
        case (nil, nil): break
        }
        if let pattern = rules.pattern { parts.append("matches \(pattern)") }
        if let maxLength = rules.maxLength { parts.append("at most \(maxLength) characters") }
        return parts.joined(separator: "; ")
    }
}

/// A bound as a catalog would write it: `0`, `500`, `0.5`. The reader keeps whole-number bounds
/// within 2^53, so the conversion is exact.
func numberText(_ value: Double) -> String {
    value.rounded() == value && value.magnitude <= 9_007_199_254_740_992 ? String(Int64(value)) : String(value)
}
