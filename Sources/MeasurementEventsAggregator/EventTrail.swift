import Foundation
import MeasurementEvents

/// What an aggregator decided about one posted event, step by step, for an inspector or a
/// debugging tool (``EventAggregator/Configuration/trail``).
///
/// One entry per posted notification that carried an event name: the event as the last step
/// left it, where it ended (``fate``), the plan's findings and what each tracker did. A held
/// event has two entries: ``Fate/held``, then its end. Entries come in posting order per
/// posting thread, except that the events the plan blocks in a round of delivery are recorded
/// when the plan checks that round, before its other events are forwarded.
///
/// ```swift
/// configuration.trail = MyTrailPrinter()  // receives every entry, never under a lock
/// ```
public struct EventTrailEntry: Sendable {
    /// Where an event ended.
    public enum Fate: Sendable, Hashable {
        /// Handed to the trackers; ``EventTrailEntry/trackers`` says what each did.
        case forwarded
        /// Not allowed by the aggregator's filter: `denied by "feed/debug/*"`, `not on the allow-list`.
        case filteredOut(reason: String)
        /// The notification could not be read as an event.
        case malformed(reason: String)
        /// Posted while consent was denied (or discarded when it was).
        case discardedWithoutConsent
        /// A processor returned `nil` for it.
        case discardedByProcessor
        /// Waiting for consent or for ``EventAggregator/markReady()``; a later entry tells its end.
        case held
        /// Dropped: the in-flight limit, the held-event limit, or a plan policy that blocks.
        case dropped(reason: String)
        /// Not an event's end: a destination's tracker told of a problem of its own (a refused
        /// key); the entry's event is named `destination/<name>` and carries no args.
        case trackerProblem(String)
    }

    /// What one destination decided about a forwarded event, and what its tracker did.
    public struct TrackerOutcome: Sendable, Hashable {
        /// The tracker's type name, as problems name it.
        public var tracker: String
        /// The destination's name (``Destination/name``).
        public var destination: String
        /// Whether the destination handed the event to its tracker, or why not.
        public var decision: Decision
        /// The error the tracker threw; `nil` when it accepted the event.
        public var error: String?
        /// The body the event becomes for the tracker's vendor, when the tracker can show it
        /// (``EventBodyDescribing``).
        public var body: String?

        /// An outcome of a plain destination, named after its tracker, that forwarded the event.
        ///
        /// - Parameters:
        ///   - tracker: the tracker's type name.
        ///   - error: the error it threw, if any.
        ///   - body: the vendor body the event became, if known.
        public init(tracker: String, error: String? = nil, body: String? = nil) {
            self.init(tracker: tracker, destination: tracker, decision: .forwarded, error: error, body: body)
        }

        /// An outcome.
        ///
        /// - Parameters:
        ///   - tracker: the tracker's type name.
        ///   - destination: the destination's name.
        ///   - decision: what the destination decided.
        ///   - error: the error the tracker threw, if any.
        ///   - body: the vendor body the event became, if known.
        public init(tracker: String, destination: String, decision: Decision, error: String? = nil, body: String? = nil)
        {
            self.tracker = tracker
            self.destination = destination
            self.decision = decision
            self.error = error
            self.body = body
        }
    }

    /// What a destination decided about an event (see ``Destination``).
    public enum Decision: Sendable, Hashable, CustomStringConvertible {
        /// Handed to the tracker (its copy, after the destination's processors).
        case forwarded
        /// The catalog that declares the event routes it to other destinations.
        case notRouted
        /// The destination's filter keeps it out: `not on the allow-list`, `on the deny-list`.
        case filtered(String)
        /// Not in the destination's sampled share.
        case sampledOut(rate: Double)
        /// One of the destination's processors (its type name) returned `nil`.
        case droppedByProcessor(String)
        /// Held for the destination until the purposes of consent it needs are granted: the
        /// purpose pending (`nil`: the aggregator's consent).
        case waitingForConsent(ConsentPurpose?)
        /// Not sent: a purpose of consent the destination needs (`nil`: the aggregator's consent)
        /// was denied when the event was posted.
        case withoutConsent(ConsentPurpose?)

        /// The decision in words, as the inspector shows it.
        public var description: String {
            switch self {
            case .forwarded: return "forwarded"
            case .notRouted: return "not routed here by its catalog"
            case .filtered(let reason): return "filtered by the destination: \(reason)"
            case .sampledOut(let rate): return "sampled out (rate \(rate))"
            case .droppedByProcessor(let processor): return "dropped by the destination's processor \(processor)"
            case .waitingForConsent(let purpose?): return "waiting: purpose \(purpose) pending"
            case .waitingForConsent(nil): return "waiting for consent"
            case .withoutConsent(let purpose?): return "not sent: purpose \(purpose) denied"
            case .withoutConsent(nil): return "not sent: consent denied"
            }
        }
    }

    /// The event as the last step that saw it left it (personal data hashed once that step ran);
    /// for a filtered-out or malformed notification, what could be read of it.
    public var event: MeasurementEvent
    /// Where it ended.
    public var fate: Fate
    /// What the tracking plan found wrong with it (with file and line where posted with them).
    public var violations: [PlanViolation]
    /// What each destination decided and its tracker did, for a forwarded event.
    public var trackers: [TrackerOutcome]
    /// The purposes that had a consent of their own when the event reached the destinations
    /// (``EventAggregator/setConsents(_:)``), with it; empty when the app set none.
    public var purposeConsents: [ConsentPurpose: Consent] = [:]

    /// An entry.
    ///
    /// - Parameters:
    ///   - event: the event as the last step left it.
    ///   - fate: where it ended.
    ///   - violations: the plan's findings.
    ///   - trackers: each tracker's outcome.
    public init(
        event: MeasurementEvent, fate: Fate, violations: [PlanViolation] = [], trackers: [TrackerOutcome] = []
    ) {
        self.event = event
        self.fate = fate
        self.violations = violations
        self.trackers = trackers
    }
}

/// Receives each event's ``EventTrailEntry`` from an aggregator: an inspector, a test, a
/// debugging log. Called outside every lock of the aggregator, on its delivery context or on
/// the posting thread (for what the filter decided); it must return quickly and never block.
public protocol EventTrailObserver: Sendable {
    /// One event's trail.
    ///
    /// - Parameter entry: what the aggregator decided about the event.
    func record(_ entry: EventTrailEntry)
}

/// A tracker that can show the body an event becomes for its vendor (an HTTP tracker's
/// encoder), for ``EventTrailEntry/TrackerOutcome/body``.
public protocol EventBodyDescribing {
    /// The vendor body for `event` alone, as text; `nil` when there is none to show.
    ///
    /// - Parameter event: a forwarded event.
    /// - Returns: the body, or `nil`.
    func describeBody(for event: MeasurementEvent) -> String?
}
