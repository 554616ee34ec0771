import Foundation
import MeasurementEvents

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
public final class RecordingTracker: EventTracker, @unchecked Sendable {
    // @unchecked: all state is inside `state`, behind its lock.
    private let state = LockedValue(State())

    private struct State {
        var events: [MeasurementEvent] = []
        var flushes = 0
        var discards = 0
    }

    public init() {}

    public func track(_ event: MeasurementEvent) throws {
        state.withLock { $0.events.append(event) }
    }

    public func flush() throws {
        state.withLock { $0.flushes += 1 }
    }

    public func discardPending() throws {
        state.withLock {
            $0.discards += 1
            $0.events.removeAll()
        }
    }

    /// The events tracked so far, in order.
    public var events: [MeasurementEvent] { state.withLock { $0.events } }
    /// Their names, in order.
    public var names: [EventName] { events.map(\.name) }
    /// How often ``flush()`` was called.
    public var flushCount: Int { state.withLock { $0.flushes } }
    /// How often ``discardPending()`` was called.
    public var discardCount: Int { state.withLock { $0.discards } }
}
