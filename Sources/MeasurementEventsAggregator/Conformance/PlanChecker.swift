import Foundation
import MeasurementEvents

/// The registered catalogs compiled once, when the aggregator is made, for checking events at
/// delivery: every event's declaration by name and its args by name (so that a plan of 10,000
/// events checks an event in the same time as a plan of 10: one dictionary lookup for the
/// event, one per arg), and every `pattern` compiled once.
///
/// A class, so that the delivery path reads it through one reference instead of copying its
/// tables. `@unchecked Sendable`: immutable after init; `NSRegularExpression` is immutable
/// and documented as safe to use from several threads.
final class PlanChecker: @unchecked Sendable {
    // Classes: a lookup hands out one reference, where a struct copied every string and
    // array of the declaration (a retain and a release each) per event.
    final class Arg {
        let spec: ArgSpec
        let allowed: Set<EventValue>
        let expression: NSRegularExpression?
        /// Whether anything beyond the type is to be checked.
        let hasRules: Bool

        init(spec: ArgSpec, allowed: Set<EventValue>, expression: NSRegularExpression?) {
            self.spec = spec
            self.allowed = allowed
            self.expression = expression
            hasRules =
                !allowed.isEmpty || spec.minimum != nil || spec.maximum != nil || spec.pattern != nil
                || spec.maxLength != nil
        }
    }

    final class Event {
        let spec: EventSpec
        let args: [String: Arg]
        let requiredCount: Int

        init(spec: EventSpec, args: [String: Arg], requiredCount: Int) {
            self.spec = spec
            self.args = args
            self.requiredCount = requiredCount
        }
    }

    let events: [EventName: Event]
    let policy: PlanConformancePolicy

    /// `nil` when there is nothing to check: no catalog, or checking turned off.
    init?(_ catalogs: RegisteredCatalogs, policy: PlanConformancePolicy) {
        guard !catalogs.isEmpty, policy.isEnabled else { return nil }
        self.policy = policy
        var events: [EventName: Event] = [:]
        for catalog in catalogs.catalogs {
            for spec in catalog.events where events[spec.name] == nil {
                var args: [String: Arg] = [:]
                for arg in spec.args {
                    // The generator rejects invalid patterns; one that slips through (a catalog
                    // written by hand) matches nothing, so every value is reported.
                    let expression = arg.pattern.map { try? NSRegularExpression(pattern: $0) } ?? nil
                    args[arg.name] = Arg(spec: arg, allowed: Set(arg.allowedValues), expression: expression)
                }
                events[spec.name] = Event(spec: spec, args: args, requiredCount: spec.args.filter(\.isRequired).count)
            }
        }
        self.events = events
    }

    /// Checks `event`, applying the policy's `omitArg` in place; appends what it broke to
    /// `violations` (nothing, and no allocation, when it conforms).
    ///
    /// - Returns: whether the event may be delivered (no violation's action is `block`).
    func check(_ event: inout MeasurementEvent, file: String?, line: Int?, into violations: inout [PlanViolation])
        -> Bool
    {
        let first = violations.count
        guard let planned = events[event.name] else {
            // The reports this aggregator sends are not the app's events.
            if event.name == PlanConformancePolicy.violationEventName { return true }
            violations.append(report(.unplannedEvent, event.name, rule: "not in any registered catalog", file, line))
            return policy.action(for: .unplannedEvent) != .block
        }
        if planned.spec.isDeprecated {
            let rule =
                "the plan deprecates this event" + (planned.spec.replacement.map { "; post \($0) instead" } ?? "")
            violations.append(report(.deprecatedEvent, event.name, rule: rule, file, line))
        }
        var requiredFound = 0
        var omitted: [String] = []
        for (name, value) in event.args {
            guard let arg = planned.args[name] else {
                var violation = report(.unplannedArg, event.name, rule: "not in the plan", file, line)
                violation.arg = name
                violation.valueType = Self.typeName(value)
                violations.append(violation)
                if violation.action == .omitArg { omitted.append(name) }
                continue
            }
            if arg.spec.isRequired { requiredFound += 1 }
            if let (kind, rule) = Self.brokenRule(arg, value) {
                var violation = report(kind, event.name, rule: rule, file, line)
                violation.arg = name
                violation.valueType = Self.typeName(value)
                violation.value = arg.spec.isPersonalData ? nil : value.description
                violations.append(violation)
                if violation.action == .omitArg { omitted.append(name) }
            }
        }
        if requiredFound < planned.requiredCount {
            for arg in planned.spec.args where arg.isRequired && event.args[arg.name] == nil {
                var violation = report(.missingArg, event.name, rule: "required by the plan", file, line)
                violation.arg = arg.name
                violations.append(violation)
            }
        }
        for name in omitted { event.args[name] = nil }
        return !violations[first...].contains { $0.action == .block }
    }

    private func report(_ kind: PlanViolation.Kind, _ event: EventName, rule: String, _ file: String?, _ line: Int?)
        -> PlanViolation
    {
        var action = policy.action(for: kind)
        // Omitting needs an arg at fault; the kinds without one are reported.
        if action == .omitArg, kind == .unplannedEvent || kind == .deprecatedEvent || kind == .missingArg {
            action = .report
        }
        return PlanViolation(kind: kind, event: event, rule: rule, file: file, line: line, action: action)
    }

    /// The first rule `value` breaks, in the order type, values, range, length, pattern.
    static func brokenRule(_ arg: Arg, _ value: EventValue) -> (PlanViolation.Kind, String)? {
        switch (arg.spec.type, value) {
        case (.string, .string), (.int, .int), (.double, .double), (.double, .int), (.bool, .bool): break
        default: return (.wrongType, "the plan says \(arg.spec.type.rawValue)")
        }
        guard arg.hasRules else { return nil }
        let spec = arg.spec
        if !arg.allowed.isEmpty, !arg.allowed.contains(value) {
            return (.valueNotAllowed, "the plan allows " + spec.allowedValues.map(\.planText).joined(separator: ", "))
        }
        if let number = value.doubleValue {
            if let minimum = spec.minimum, number < minimum {
                return (.outOfRange, "the plan's minimum is \(Self.bound(minimum))")
            }
            if let maximum = spec.maximum, number > maximum {
                return (.outOfRange, "the plan's maximum is \(Self.bound(maximum))")
            }
        }
        if case .string(let text) = value {
            if let maxLength = spec.maxLength, text.unicodeScalars.count > maxLength {
                return (.tooLong, "the plan's maxLength is \(maxLength)")
            }
            if let pattern = spec.pattern {
                let matches =
                    arg.expression.map {
                        $0.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                    } ?? false
                if !matches { return (.patternMismatch, "the plan's pattern is \(pattern)") }
            }
        }
        return nil
    }

    /// `99`, not `99.0`, for a whole bound.
    static func bound(_ value: Double) -> String {
        value.rounded() == value && value.magnitude < 1e15 ? String(Int64(value)) : String(value)
    }

    static func typeName(_ value: EventValue) -> String {
        switch value {
        case .string: return "string"
        case .int: return "int"
        case .double: return "double"
        case .bool: return "bool"
        }
    }
}

extension EventValue {
    /// The value as a plan shows it: strings quoted.
    fileprivate var planText: String {
        if case .string(let text) = self { return "\"\(text)\"" }
        return description
    }
}
