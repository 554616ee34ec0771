import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
internal import MeasurementEventsJSON

extension TrackingPlan {
    /// What to do with names the catalog does not declare.
    public enum Strictness: Sendable, Equatable {
        /// An undeclared name rejects the plan.
        case strict
        /// An undeclared name is a warning in ``TrackingPlan/warnings``; the plan is used.
        case lenient
    }

    /// Reads and validates a plan file. The format is described in the article "Trigger-action
    /// events and the tracking plan, in detail" of `EventTriggers`
    /// (`Sources/EventTriggers/EventTriggers.docc/TriggersAndPlanReference.md`).
    ///
    /// Every problem is collected before anything is returned: unknown keys, wrong types,
    /// empty labels, duplicate entries, invalid patterns, undeclared destinations and, with a
    /// `catalog`, event names no module declares. If any is an error, the whole plan is
    /// rejected with a ``TrackingPlanError`` listing them all, in file order.
    ///
    /// - Parameters:
    ///   - data: the plan file's bytes, UTF-8 JSON.
    ///   - file: the name used in messages.
    ///   - catalog: the declared event names; `nil` skips that check.
    ///   - strictness: whether a name the catalog does not declare rejects the plan or is a warning.
    /// - Throws: ``TrackingPlanError`` listing every error found, in file order.
    public init(
        data: Data, file: String = "tracking plan", catalog: Catalog? = nil, strictness: Strictness = .strict
    ) throws(TrackingPlanError) {
        var loader = TrackingPlanLoader(file: file, data: data, catalog: catalog, strictness: strictness)
        self = try loader.load()
    }

    /// Reads and validates a plan file from disk; messages name the file's last path component.
    ///
    /// - Parameters:
    ///   - url: the plan file.
    ///   - catalog: the declared event names; `nil` skips that check.
    ///   - strictness: whether an undeclared name rejects the plan or is a warning.
    /// - Throws: ``TrackingPlanError`` listing every error found, an unreadable file included.
    public init(contentsOf url: URL, catalog: Catalog? = nil, strictness: Strictness = .strict)
        throws(TrackingPlanError)
    {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw TrackingPlanError(problems: [
                TrackingPlanProblem(
                    file: url.path, path: "$", line: nil, column: nil,
                    message: "cannot read the file: \(error.localizedDescription)")
            ])
        }
        try self.init(data: data, file: url.lastPathComponent, catalog: catalog, strictness: strictness)
    }
}

/// Reads a plan's JSON into a ``TrackingPlan``, collecting every problem on the way.
struct TrackingPlanLoader {
    static let topLevelKeys = ["version", "destinations", "screens", "events", "allow", "deny"]
    static let eventEntryKeys = ["label", "destinations"]

    private let data: Data
    private let catalog: TrackingPlan.Catalog?
    private let strictness: TrackingPlan.Strictness
    private var problems: ProblemList

    private var destinations: [String] = []
    private var screens: [TrackingPlan.Screen] = []
    private var events: [TrackingPlan.TrackedEvent] = []
    private var allow: [EventPattern] = []
    private var deny: [EventPattern] = []
    /// Destination names used by entries, checked once the declared ones are known.
    private var destinationReferences: [(name: String, path: String, position: SourcePosition)] = []
    /// Names and patterns to check against the catalog.
    private var namesToCheck: [(pattern: EventPattern, path: String, position: SourcePosition)] = []
    private var allowPositions: [EventPattern: SourcePosition] = [:]

    init(file: String, data: Data, catalog: TrackingPlan.Catalog?, strictness: TrackingPlan.Strictness) {
        problems = ProblemList(file: file)
        self.data = data
        self.catalog = catalog
        self.strictness = strictness
    }

    mutating func load() throws(TrackingPlanError) -> TrackingPlan {
        let root = try PlanJSON.read(data, reportingTo: &problems)
        guard case .object(let members) = root.value else {
            problems.add(
                "$", at: root.position,
                "found \(root.kindDescription), expected an object with \(PlanText.quotedList(Self.topLevelKeys))")
            throw TrackingPlanError(problems: problems.sorted)
        }
        var version: JSONNode?
        var deferred: [JSONNode.Member] = []
        for member in uniqueMembers(members, at: "$") {
            let path = PlanText.path("$", key: member.key)
            switch member.key {
            case "version": version = member.value
            case "destinations": destinations = readDestinationList(member.value, at: path, declaring: true) ?? []
            case "screens", "events", "allow", "deny": deferred.append(member)
            default: reportUnknownKey(member, at: "$", expected: Self.topLevelKeys)
            }
        }
        readVersion(version, root: root)
        // "allow" before "deny", whatever the file's order, to find patterns in both.
        let sectionOrder = ["screens", "events", "allow", "deny"]
        deferred.sort { sectionOrder.firstIndex(of: $0.key)! < sectionOrder.firstIndex(of: $1.key)! }
        for member in deferred {
            let path = PlanText.path("$", key: member.key)
            switch member.key {
            case "screens": readScreens(member.value, at: path)
            case "events": readEvents(member.value, at: path)
            case "allow": allow = readPatternList(member.value, at: path, isDeny: false)
            default: deny = readPatternList(member.value, at: path, isDeny: true)
            }
        }
        checkDestinationReferences()
        checkAgainstCatalog()
        let sorted = problems.sorted
        if problems.hasErrors { throw TrackingPlanError(problems: sorted) }
        return TrackingPlan(
            destinations: destinations, screens: screens, events: events, allow: allow, deny: deny, warnings: sorted,
            source: problems.file)
    }

    // MARK: Sections

    private mutating func readVersion(_ value: JSONNode?, root: JSONNode) {
        guard let value else {
            problems.add(
                "$", at: root.position, "missing \"version\", expected \"version\": \(TrackingPlan.formatVersion)")
            return
        }
        guard case .number(let text) = value.value else {
            problems.add(
                "$.version", at: value.position,
                "found \(value.kindDescription), expected the number \(TrackingPlan.formatVersion)")
            return
        }
        if text != String(TrackingPlan.formatVersion) {
            problems.add(
                "$.version", at: value.position, "found version \(text), expected \(TrackingPlan.formatVersion)")
        }
    }

    private mutating func readScreens(_ value: JSONNode, at path: String) {
        guard case .object(let members) = value.value else {
            problems.add(
                path, at: value.position,
                "found \(value.kindDescription), expected an object mapping screen names to labels")
            return
        }
        for member in uniqueMembers(members, at: path) {
            let screenPath = PlanText.path(path, key: member.key)
            if member.key.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                problems.add(
                    screenPath, at: member.keyPosition, "found an empty screen name, expected a non-empty string")
                continue
            }
            if let label = readLabel(member.value, at: screenPath) {
                screens.append(.init(name: member.key, label: label))
            }
        }
    }

    private mutating func readEvents(_ value: JSONNode, at path: String) {
        guard case .object(let members) = value.value else {
            problems.add(
                path, at: value.position,
                "found \(value.kindDescription), expected an object mapping event names or wildcards to entries")
            return
        }
        for member in uniqueMembers(members, at: path) {
            let entryPath = PlanText.path(path, key: member.key)
            let pattern = readPattern(member.key, at: entryPath, position: member.keyPosition)
            guard case .object(let fields) = member.value.value else {
                problems.add(
                    entryPath, at: member.value.position,
                    "found \(member.value.kindDescription), expected an object with \"label\" and optional \"destinations\""
                )
                continue
            }
            var label: String?
            var sawLabel = false
            var entryDestinations: [String]?
            for field in uniqueMembers(fields, at: entryPath) {
                let fieldPath = PlanText.path(entryPath, key: field.key)
                switch field.key {
                case "label":
                    sawLabel = true
                    label = readLabel(field.value, at: fieldPath)
                case "destinations":
                    entryDestinations = readDestinationList(field.value, at: fieldPath, declaring: false)
                default:
                    reportUnknownKey(field, at: entryPath, expected: Self.eventEntryKeys)
                }
            }
            if !sawLabel {
                problems.add(
                    entryPath, at: member.value.position, "missing \"label\", expected a non-empty label string")
            }
            if let pattern, let label {
                events.append(.init(pattern: pattern, label: label, destinations: entryDestinations))
                namesToCheck.append((pattern, entryPath, member.keyPosition))
            }
        }
    }

    private mutating func readPatternList(_ value: JSONNode, at path: String, isDeny: Bool) -> [EventPattern] {
        guard case .array(let elements) = value.value else {
            problems.add(
                path, at: value.position,
                "found \(value.kindDescription), expected an array of event names or wildcards")
            return []
        }
        var patterns: [EventPattern] = []
        var firstPositions: [EventPattern: SourcePosition] = [:]
        for (index, element) in elements.enumerated() {
            let elementPath = PlanText.path(path, index: index)
            guard case .string(let text) = element.value else {
                problems.add(
                    elementPath, at: element.position,
                    "found \(element.kindDescription), expected an event name or wildcard")
                continue
            }
            guard let pattern = readPattern(text, at: elementPath, position: element.position) else { continue }
            if let first = firstPositions[pattern] {
                problems.add(
                    elementPath, at: element.position,
                    "found \(quotedInFull(text)) a second time, expected each pattern once (the first is at \(problems.place(of: first)))"
                )
                continue
            }
            firstPositions[pattern] = element.position
            if isDeny, let allowed = allowPositions[pattern] {
                problems.add(
                    elementPath, at: element.position,
                    "found \(quotedInFull(text)) in both \"allow\" (at \(problems.place(of: allowed))) and \"deny\", expected it in one of them"
                )
            }
            patterns.append(pattern)
            namesToCheck.append((pattern, elementPath, element.position))
        }
        if !isDeny { allowPositions = firstPositions }
        return patterns
    }

    // MARK: Values

    private mutating func readLabel(_ value: JSONNode, at path: String) -> String? {
        guard case .string(let label) = value.value else {
            problems.add(path, at: value.position, "found \(value.kindDescription), expected a label string")
            return nil
        }
        if label.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            problems.add(path, at: value.position, "found an empty label, expected a non-empty string")
            return nil
        }
        return label
    }

    private mutating func readPattern(_ text: String, at path: String, position: SourcePosition) -> EventPattern? {
        do throws(EventPatternError) {
            return try EventPattern.parse(text)
        } catch {
            problems.add(
                path, at: position,
                "found \(error.description), expected an event name or a wildcard (\"feed/*\", \"*\")")
            return nil
        }
    }

    /// The top-level list declares destinations; an entry's list refers to declared ones.
    private mutating func readDestinationList(_ value: JSONNode, at path: String, declaring: Bool) -> [String]? {
        guard case .array(let elements) = value.value else {
            problems.add(
                path, at: value.position, "found \(value.kindDescription), expected an array of destination names")
            return nil
        }
        if elements.isEmpty && !declaring {
            problems.add(
                path, at: value.position,
                "found an empty array, expected at least one destination (leave \"destinations\" out to send to all)")
            return nil
        }
        var names: [String] = []
        var firstPositions: [String: SourcePosition] = [:]
        for (index, element) in elements.enumerated() {
            let elementPath = PlanText.path(path, index: index)
            guard case .string(let name) = element.value, !name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            else {
                let found = element.kindDescription == "a string" ? "an empty string" : element.kindDescription
                problems.add(elementPath, at: element.position, "found \(found), expected a destination name")
                continue
            }
            if let first = firstPositions[name] {
                problems.add(
                    elementPath, at: element.position,
                    "found \(quotedInFull(name)) a second time, expected each destination once (the first is at \(problems.place(of: first)))"
                )
                continue
            }
            firstPositions[name] = element.position
            names.append(name)
            if !declaring { destinationReferences.append((name, elementPath, element.position)) }
        }
        return names
    }

    // MARK: Checks

    /// Members in order, each key once; later duplicates are reported and skipped.
    private mutating func uniqueMembers(_ members: [JSONNode.Member], at path: String) -> [JSONNode.Member] {
        var firstPositions: [String: SourcePosition] = [:]
        var unique: [JSONNode.Member] = []
        for member in members {
            if let first = firstPositions[member.key] {
                problems.add(
                    PlanText.path(path, key: member.key), at: member.keyPosition,
                    "found the key \(quotedInFull(member.key)) a second time, expected each key once (the first is at \(problems.place(of: first)))"
                )
                continue
            }
            firstPositions[member.key] = member.keyPosition
            unique.append(member)
        }
        return unique
    }

    private mutating func reportUnknownKey(_ member: JSONNode.Member, at path: String, expected: [String]) {
        problems.add(
            PlanText.path(path, key: member.key), at: member.keyPosition,
            "found the unknown key \(quotedInFull(member.key)), expected one of \(PlanText.quotedList(expected))"
                + PlanText.suggestion(for: member.key, among: expected))
    }

    private mutating func checkDestinationReferences() {
        for reference in destinationReferences where !destinations.contains(reference.name) {
            let expected =
                destinations.isEmpty
                ? "a destination declared in \"destinations\" (none are)"
                : "one of \(PlanText.quotedList(destinations))"
                    + PlanText.suggestion(for: reference.name, among: destinations)
            problems.add(
                reference.path, at: reference.position,
                "found the undeclared destination \(quotedInFull(reference.name)), expected \(expected)")
        }
    }

    private mutating func checkAgainstCatalog() {
        guard let catalog else { return }
        // The plan's own screen-view event needs no module to declare it.
        let known = catalog.merging(TrackingPlan.Catalog(names: [TrackingPlan.screenViewEvent]))
        let severity: TrackingPlanProblem.Severity = strictness == .strict ? .error : .warning
        for check in namesToCheck where !known.declaresAny(matching: check.pattern) {
            switch check.pattern.kind {
            case .exact(let name):
                problems.add(
                    check.path, at: check.position,
                    "found the event \(quotedInFull(name)), which no module's catalog declares, expected an event declared in a catalog (Events/<Module>.json)"
                        + PlanText.suggestion(for: name, among: known.names.map(\.rawValue).sorted()),
                    severity: severity)
            default:
                problems.add(
                    check.path, at: check.position,
                    "found the wildcard \(quotedInFull(check.pattern.description)), which matches no event a module's catalog declares, expected a wildcard that matches at least one declared event",
                    severity: severity)
            }
        }
    }
}
