import MeasurementEvents

/// Receives the events an ``EventAggregator`` forwards: the adapter to a vendor, a file, a log.
///
/// Only ``track(_:)`` is required:
///
/// ```swift
/// struct VendorTracker: EventTracker {
///     func track(_ event: MeasurementEvent) throws {
///         Vendor.logEvent(event.name.rawValue, parameters: event.args.mapValues(\.plainValue))
///     }
/// }
/// ```
///
/// An aggregator calls its trackers from its own serial queue, one event at a time, in posting
/// order. A tracker that throws is counted and reported; the other trackers still get the event.
public protocol EventTracker: Sendable {
    /// Handles one event. Throwing reports a failure for this event only.
    ///
    /// - Parameter event: the kept, processed event, with its attribution.
    /// - Throws: any error; it is counted and reported, and the other trackers still get the event.
    func track(_ event: MeasurementEvent) throws

    /// Pushes out whatever the tracker buffers (a file's buffer, an upload queue).
    /// The default does nothing.
    func flush() throws

    /// Deletes whatever the tracker holds and has not delivered yet; called when the user
    /// revokes consent. The default does nothing.
    func discardPending() throws

    /// Receives an identity change (identify, reset, group), in order with the events around
    /// it; the events themselves carry their identity already. The default does nothing.
    ///
    /// - Parameter event: the identity change.
    /// - Throws: any error; it is counted and reported.
    func identify(_ event: IdentityEvent) throws

    /// Called when the aggregator starts and whenever consent changes, before any event under
    /// the new consent: a tracker that sends what an earlier run left (``discardPending()``
    /// follows a denial) waits for this. The default does nothing.
    ///
    /// - Parameter consent: the consent in force from now on.
    /// - Throws: any error; it is counted and reported.
    func consentDidChange(to consent: Consent) throws

    /// The purposes of consent a destination of this tracker needs unless the app names others
    /// (``Destination/purposes``): its vendor's, documented with its encoder (analytics for
    /// Amplitude, GA4 and OTLP). None by default: the tracker follows the aggregator's consent.
    var defaultPurposes: Set<ConsentPurpose> { get }
}

extension EventTracker {
    public func flush() throws {}
    public func discardPending() throws {}
    /// Does nothing.
    ///
    /// - Parameter event: the identity change.
    public func identify(_ event: IdentityEvent) throws {}

    /// Does nothing.
    ///
    /// - Parameter consent: the consent in force from now on.
    public func consentDidChange(to consent: Consent) throws {}

    /// None: the tracker follows the aggregator's consent.
    public var defaultPurposes: Set<ConsentPurpose> { [] }

    /// One tracker that hands each event to `self` and then to each of `others`.
    ///
    /// ```swift
    /// let tracker = ConsoleTracker().combined(with: JSONLinesFileTracker(url: logURL))
    /// ```
    ///
    /// - Parameter others: the trackers that get each event after `self`.
    /// - Returns: one tracker for all of them.
    public func combined(with others: any EventTracker...) -> CombinedTracker {
        CombinedTracker([self] + others)
    }
}

/// Fans each event out to several trackers; a failure of one does not stop the others.
public struct CombinedTracker: EventTracker {
    /// The trackers, in the order they receive each event.
    public let trackers: [any EventTracker]

    /// A tracker that hands each event to every one of `trackers`.
    ///
    /// - Parameter trackers: the trackers, in order.
    public init(_ trackers: [any EventTracker]) {
        // Flatten nested combinations so that failures are reported per leaf tracker.
        self.trackers = trackers.flatMap { ($0 as? CombinedTracker)?.trackers ?? [$0] }
    }

    /// Hands `event` to every tracker, even after one throws.
    ///
    /// - Parameter event: the event.
    /// - Throws: ``TrackerFailures`` listing the trackers that threw.
    public func track(_ event: MeasurementEvent) throws {
        try forEachCollectingErrors { try $0.track(event) }
    }

    public func flush() throws {
        try forEachCollectingErrors { try $0.flush() }
    }

    public func discardPending() throws {
        try forEachCollectingErrors { try $0.discardPending() }
    }

    /// Hands `event` to every tracker, even after one throws.
    ///
    /// - Parameter event: the identity change.
    /// - Throws: ``TrackerFailures`` listing the trackers that threw.
    public func identify(_ event: IdentityEvent) throws {
        try forEachCollectingErrors { try $0.identify(event) }
    }

    /// Tells every tracker, even after one throws.
    ///
    /// - Parameter consent: the consent in force from now on.
    /// - Throws: ``TrackerFailures`` listing the trackers that threw.
    public func consentDidChange(to consent: Consent) throws {
        try forEachCollectingErrors { try $0.consentDidChange(to: consent) }
    }

    private func forEachCollectingErrors(_ body: (any EventTracker) throws -> Void) throws {
        var failures: [TrackerFailures.Failure] = []
        for tracker in trackers {
            do { try body(tracker) } catch {
                failures.append(.init(tracker: String(describing: type(of: tracker)), error: error))
            }
        }
        if !failures.isEmpty { throw TrackerFailures(failures: failures) }
    }
}

/// The failures of one or more trackers inside a ``CombinedTracker``.
public struct TrackerFailures: Error, CustomStringConvertible {
    /// One tracker's error.
    public struct Failure: Sendable {
        /// The tracker's type name.
        public let tracker: String
        /// What it threw.
        public let error: any Error
    }

    /// Every tracker that threw, in order.
    public let failures: [Failure]

    /// Each tracker that threw, with its error.
    public var description: String {
        failures.map { "\($0.tracker): \($0.error)" }.joined(separator: "; ")
    }
}

/// A tracker made from a closure; handy for tests, demos and one-off adapters.
public struct ClosureTracker: EventTracker {
    private let body: @Sendable (MeasurementEvent) throws -> Void

    /// A tracker that runs `body` for each event.
    ///
    /// - Parameter body: handles one event; throwing reports a failure for that event.
    public init(_ body: @escaping @Sendable (MeasurementEvent) throws -> Void) {
        self.body = body
    }

    /// Runs the closure.
    ///
    /// - Parameter event: the event.
    /// - Throws: what the closure throws.
    public func track(_ event: MeasurementEvent) throws {
        try body(event)
    }
}

/// A tracker that has problems of its own to report, beyond a failed call: a vendor refusing its
/// key, token or endpoint. An aggregator that reaches it through a destination hands it a closure
/// when the destination is added; what the tracker reports through it (once per episode) reaches
/// the aggregator's problem handler (``EventAggregator/Problem/trackerProblem(tracker:problem:)``),
/// its diagnostics and its trail.
public protocol TrackerProblemReporting: EventTracker {
    /// Keeps `report`, to call with each problem, in words, once per episode, outside the
    /// tracker's locks.
    ///
    /// - Parameter report: where the tracker's problems go.
    func reportProblems(to report: @escaping @Sendable (String) -> Void)
}
