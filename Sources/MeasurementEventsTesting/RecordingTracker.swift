import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// A tracker that keeps every event it is given, for testing an aggregator's configuration:
///
/// ```swift
/// let tracker = RecordingTracker()
/// let aggregator = AppAggregator(center: center, trackers: [tracker])
/// aggregator.start()
/// FeedScreen(center: center).simulateVisit()
/// aggregator.waitUntilDelivered()
/// XCTAssertEqual(tracker.names, ["feed/opened", "feed/item_tapped"])
/// ```
///
/// It also keeps the identity changes (``identityEvents``) and consent announcements
/// (``consentChanges``) it is given; ``expectEvent(_:userID:sessionID:args:)`` and
/// ``expectSameSession(_:)`` check what an event carried.
public final class RecordingTracker: EventTracker, @unchecked Sendable {
    // @unchecked: all state is inside `state`, behind its lock.
    private let state = LockedValue(State())

    private struct State {
        var events: [MeasurementEvent] = []
        var identityEvents: [IdentityEvent] = []
        var consentChanges: [Consent] = []
        var flushes = 0
        var discards = 0
    }

    /// An empty recorder, ready to be passed to an aggregator.
    public init() {}

    /// Keeps `event` in ``events``.
    ///
    /// - Parameter event: the forwarded event.
    public func track(_ event: MeasurementEvent) throws {
        state.withLock { $0.events.append(event) }
        PlanCoverageRecording.record(event.name)
    }

    /// Keeps `event` in ``identityEvents``.
    ///
    /// - Parameter event: the identity change.
    public func identify(_ event: IdentityEvent) throws {
        state.withLock { $0.identityEvents.append(event) }
    }

    /// Keeps `consent` in ``consentChanges``.
    ///
    /// - Parameter consent: the new consent.
    public func consentDidChange(to consent: Consent) throws {
        state.withLock { $0.consentChanges.append(consent) }
    }

    /// Counts the flush in ``flushCount``.
    public func flush() throws {
        state.withLock { $0.flushes += 1 }
    }

    /// Forgets the events and identity changes, as a tracker forgets what it had not sent.
    public func discardPending() throws {
        state.withLock {
            $0.discards += 1
            $0.events.removeAll()
            $0.identityEvents.removeAll()
        }
    }

    /// The events tracked so far, in order.
    public var events: [MeasurementEvent] { state.withLock { $0.events } }
    /// Their names, in order.
    public var names: [EventName] { events.map(\.name) }
    /// The identity changes tracked so far, in order.
    public var identityEvents: [IdentityEvent] { state.withLock { $0.identityEvents } }
    /// The consent the aggregator announced, at start and on every change, in order.
    public var consentChanges: [Consent] { state.withLock { $0.consentChanges } }
    /// How often ``flush()`` was called.
    public var flushCount: Int { state.withLock { $0.flushes } }
    /// How often ``discardPending()`` was called.
    public var discardCount: Int { state.withLock { $0.discards } }
}
