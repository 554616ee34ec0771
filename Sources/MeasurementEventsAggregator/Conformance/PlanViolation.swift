import MeasurementEvents

/// An event that does not conform to the registered catalogs (the tracking plan), as the
/// aggregator reports it to ``EventAggregator/Configuration/problemHandler``
/// (``EventAggregator/Problem/planViolation(_:)``).
///
/// It names the event, the arg and the rule, and the type of the value posted; it shows the
/// value itself only for an arg the plan does not mark personal data (`"pii"`):
///
/// ```
/// FeedScreen.swift:42: feed/item_tapped: arg "position" is a string, the plan says int (wrongType; reported)
/// ```
public struct PlanViolation: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of violation, each with its own ``PlanConformancePolicy/Action``.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// No registered catalog declares the event.
        case unplannedEvent
        /// A required arg is missing.
        case missingArg
        /// The event carries an arg its catalog does not declare.
        case unplannedArg
        /// An arg's value is of another type than the catalog declares.
        case wrongType
        /// An arg's value is not one of the catalog's `values`.
        case valueNotAllowed
        /// A number below the catalog's `minimum` or above its `maximum`.
        case outOfRange
        /// A text with no match of the catalog's `pattern`.
        case patternMismatch
        /// A text longer than the catalog's `maxLength`.
        case tooLong
        /// The catalog marks the event `deprecated`.
        case deprecatedEvent
    }

    /// What kind of rule was broken.
    public var kind: Kind
    /// The event's name.
    public var event: EventName
    /// The arg at fault, for the kinds about an arg.
    public var arg: String?
    /// The rule, in words: `the plan says int`, `one of "feed", "search"`.
    public var rule: String
    /// The type of the value posted (`string`, `int`, `double`, `bool`), for the kinds about a value.
    public var valueType: String?
    /// The value posted, for an arg the plan does not mark personal data; `nil` for personal data.
    public var value: String?
    /// The file that posted the event (`#fileID`), when it was posted with one.
    public var file: String?
    /// The line that posted the event, when it was posted with one.
    public var line: Int?
    /// What the aggregator did about it.
    public var action: PlanConformancePolicy.Action

    /// Makes a violation report.
    ///
    /// - Parameters:
    ///   - kind: what kind of rule was broken.
    ///   - event: the event's name.
    ///   - arg: the arg at fault, if any.
    ///   - rule: the rule, in words.
    ///   - valueType: the type of the value posted, if any.
    ///   - value: the value posted, never for personal data.
    ///   - file: the file that posted the event.
    ///   - line: the line that posted the event.
    ///   - action: what the aggregator did about it.
    public init(
        kind: Kind, event: EventName, arg: String? = nil, rule: String, valueType: String? = nil,
        value: String? = nil, file: String? = nil, line: Int? = nil, action: PlanConformancePolicy.Action = .report
    ) {
        self.kind = kind
        self.event = event
        self.arg = arg
        self.rule = rule
        self.valueType = valueType
        self.value = value
        self.file = file
        self.line = line
        self.action = action
    }

    /// `File.swift:42: event: arg "x" …, rule (kind; action)`, in a sentence for a log.
    public var description: String {
        var text = ""
        if let file { text += line.map { "\(file):\($0): " } ?? "\(file): " }
        text += "\(event): "
        switch kind {
        case .unplannedEvent: text += "no registered catalog plans this event"
        case .missingArg: text += "required arg \"\(arg ?? "")\" is missing"
        case .unplannedArg: text += "arg \"\(arg ?? "")\" (\(valueType ?? "?")) is not in the plan"
        case .deprecatedEvent: text += rule
        case .wrongType, .valueNotAllowed, .outOfRange, .patternMismatch, .tooLong:
            text += "arg \"\(arg ?? "")\" is "
            text +=
                value.map { "\(valueType ?? "?") \(quotedForLog($0))" }
                ?? "\((valueType ?? "?").withIndefiniteArticle) (personal data, not shown)"
        }
        if ![.unplannedEvent, .unplannedArg, .missingArg, .deprecatedEvent].contains(kind) { text += ", " + rule }
        return text + " (\(kind.rawValue); \(action.rawValue))"
    }

    private func quotedForLog(_ text: String) -> String {
        valueType == "string" ? "\"\(text.prefix(64))\"" : text
    }
}
