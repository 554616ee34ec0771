import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// The analytics team's "what to track", loaded from one JSON file: which screens and events
/// are tracked, with which label, to which destinations, plus the allow- and deny-lists.
///
/// ```swift
/// let plan = try TrackingPlan(contentsOf: planURL, catalog: catalog)
/// let aggregator = try EventAggregator(
///     plan: plan, destinations: ["amplitude": amplitude, "console": ConsoleTracker()])
/// aggregator.start()
/// aggregator.reportScreenAppeared("FeedViewController")   // posts screen/viewed, label "Feed"
/// ```
///
/// A plan is validated as a whole when it is loaded (see ``init(data:file:catalog:strictness:)``):
/// either every part of it is used, or it is rejected with every problem listed.
///
/// What an aggregator built from a plan forwards: an event whose name matches an entry of
/// ``events`` or ``allow`` and no entry of ``deny``; when ``screens`` is not empty, also
/// ``screenViewEvent``. The most specific ``events`` entry (exact name, then the longest
/// wildcard, then `*`) gives its label and its destinations; events kept only by ``allow``
/// have no label and go to every destination.
public struct TrackingPlan: Sendable, Equatable {
    /// The name of the event posted when a planned screen appears. Its args are `screen` (the
    /// name reported) and `label` (the plan's label), and its `MeasurementEvent.label` is the
    /// screen's label. Its type is `EventType.activity`.
    public static let screenViewEvent: EventName = "screen/viewed"

    /// The plan format version this library reads.
    public static let formatVersion = 1

    /// A tracked screen: the name the app reports, and the label analytics uses.
    public struct Screen: Sendable, Equatable {
        /// The name the app reports the screen under.
        public let name: String
        /// The label analytics uses for it.
        public let label: String

        /// A screen.
        ///
        /// - Parameters:
        ///   - name: the name the app reports.
        ///   - label: the label analytics uses.
        public init(name: String, label: String) {
            self.name = name
            self.label = label
        }
    }

    /// A tracked event name or wildcard, its label and, optionally, the only destinations it
    /// goes to (`nil`: every destination).
    public struct TrackedEvent: Sendable, Equatable {
        /// The event name or wildcard.
        public let pattern: EventPattern
        /// The label events it matches are sent under.
        public let label: String
        /// The only destinations its events go to; `nil` for every destination.
        public let destinations: [String]?

        /// A tracked event.
        ///
        /// - Parameters:
        ///   - pattern: the event name or wildcard.
        ///   - label: the label.
        ///   - destinations: the only destinations; `nil` for every one.
        public init(pattern: EventPattern, label: String, destinations: [String]? = nil) {
            self.pattern = pattern
            self.label = label
            self.destinations = destinations
        }
    }

    /// The destination names entries may use; an aggregator built from the plan needs a
    /// tracker for each. Empty: entries name none, and every tracker gets every event.
    public let destinations: [String]
    /// The tracked screens.
    public let screens: [Screen]
    /// The tracked events and wildcards, with labels and destinations.
    public let events: [TrackedEvent]
    /// Patterns allowed beyond the tracked events.
    public let allow: [EventPattern]
    /// Patterns denied, whatever else allows them.
    public let deny: [EventPattern]
    /// Problems that did not reject the plan (undeclared names in lenient mode).
    public let warnings: [TrackingPlanProblem]
    /// The file the plan was read from, for messages; "tracking plan" for plans made in code.
    public let source: String

    private let screenLabels: [String: String]
    private let routes: Routes

    /// Makes a plan in code; files go through ``init(data:file:catalog:strictness:)``, which
    /// also validates. Later duplicates replace earlier ones here.
    ///
    /// - Parameters:
    ///   - destinations: the destination names entries may use.
    ///   - screens: the tracked screens.
    ///   - events: the tracked events.
    ///   - allow: patterns allowed beyond the tracked events.
    ///   - deny: patterns denied.
    ///   - warnings: problems found while loading that did not reject the plan.
    ///   - source: the name used in messages.
    public init(
        destinations: [String] = [],
        screens: [Screen] = [],
        events: [TrackedEvent] = [],
        allow: [EventPattern] = [],
        deny: [EventPattern] = [],
        warnings: [TrackingPlanProblem] = [],
        source: String = "tracking plan"
    ) {
        self.source = source
        self.destinations = destinations
        self.screens = screens
        self.events = events
        self.allow = allow
        self.deny = deny
        self.warnings = warnings
        screenLabels = Dictionary(screens.map { ($0.name, $0.label) }, uniquingKeysWith: { $1 })
        routes = Routes(events.map(\.pattern))
    }

    /// The filter an aggregator built from this plan uses.
    public var filter: EventFilter {
        EventFilter(
            allow: events.map(\.pattern) + allow + (screens.isEmpty ? [] : [EventPattern(Self.screenViewEvent)]),
            deny: deny)
    }

    /// The label of a planned screen, or `nil` when the screen is not in the plan.
    ///
    /// - Parameter screen: the screen's name as the app reports it.
    /// - Returns: its label, or `nil`.
    public func label(forScreen screen: String) -> String? {
        screenLabels[screen]
    }

    /// The most specific ``events`` entry matching `name`: the exact name, else the longest
    /// wildcard, else `*`.
    ///
    /// - Parameter name: an event name.
    /// - Returns: the entry that applies, or `nil`.
    public func trackedEvent(named name: EventName) -> TrackedEvent? {
        routes.index(for: name.rawValue).map { events[$0] }
    }

    /// Whether an event that the filter kept goes to `destination`.
    ///
    /// - Parameters:
    ///   - name: the event's name.
    ///   - destination: a destination name.
    /// - Returns: whether the event goes there.
    public func sends(_ name: EventName, to destination: String) -> Bool {
        guard let destinations = trackedEvent(named: name)?.destinations else { return true }
        return destinations.contains(destination)
    }

    /// The screen-view event for `screen`, or `nil` when the plan does not track it.
    ///
    /// - Parameter screen: the screen's name as the app reports it.
    /// - Returns: the event, or `nil`.
    public func screenViewEvent(for screen: String) -> MeasurementEvent? {
        guard let label = label(forScreen: screen) else { return nil }
        return MeasurementEvent(
            Self.screenViewEvent, type: .activity, args: ["screen": .string(screen), "label": .string(label)],
            label: label)
    }

    /// Posts ``screenViewEvent`` when `screen` is in the plan; returns whether it posted.
    ///
    /// ```swift
    /// plan.reportScreenAppeared("FeedViewController")   // posted: it is in "screens"
    /// plan.reportScreenAppeared("DebugMenu")            // not in the plan: nothing
    /// ```
    ///
    /// - Parameters:
    ///   - screen: the screen's name as the app reports it.
    ///   - center: where to post; `.default` unless a test isolates it.
    /// - Returns: whether an event was posted.
    @discardableResult
    public func reportScreenAppeared(_ screen: String, to center: NotificationCenter = .default) -> Bool {
        guard let label = label(forScreen: screen) else { return false }
        MeasurementEvent.post(
            Self.screenViewEvent, type: .activity, args: ["screen": screen, "label": label], to: center)
        return true
    }

    /// Whether two plans have the same destinations, screens, events, lists and warnings
    /// (wherever they were read from).
    ///
    /// - Parameters:
    ///   - lhs: a plan.
    ///   - rhs: another plan.
    /// - Returns: `true` when they are the same plan.
    public static func == (lhs: TrackingPlan, rhs: TrackingPlan) -> Bool {
        lhs.destinations == rhs.destinations && lhs.screens == rhs.screens && lhs.events == rhs.events
            && lhs.allow == rhs.allow && lhs.deny == rhs.deny && lhs.warnings == rhs.warnings
    }
}

/// Finds the most specific pattern for a name in one hash lookup per slash.
private struct Routes: Sendable {
    var exact: [String: Int] = [:]
    var prefixes: [Substring: Int] = [:]
    var everything: Int?

    init(_ patterns: [EventPattern]) {
        for (index, pattern) in patterns.enumerated() {
            switch pattern.kind {
            case .exact(let name): exact[name] = index
            case .prefix(let prefix): prefixes[Substring(prefix)] = index
            case .everything: everything = index
            case .invalid: break
            }
        }
    }

    func index(for name: String) -> Int? {
        if let index = exact[name] { return index }
        if !prefixes.isEmpty {
            var end = name.endIndex
            while let slash = name[..<end].lastIndex(of: "/") {
                if let index = prefixes[name[...slash]] { return index }
                end = slash
            }
        }
        return everything
    }
}
