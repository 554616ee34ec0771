import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// A tracker that holds the delivery queue in its first `track` until ``open()``: a stalled
/// vendor, for the in-flight bound's tests. Records every event it receives.
final class GateTracker: EventTracker, @unchecked Sendable {
    // @unchecked: `opened` and `received` are behind `condition`'s lock.
    private let condition = NSCondition()
    private var opened = false
    private var received: [MeasurementEvent] = []
    private var entered = false

    func track(_ event: MeasurementEvent) throws {
        condition.lock()
        defer { condition.unlock() }
        entered = true
        condition.broadcast()
        while !opened { condition.wait() }
        received.append(event)
    }

    /// Blocks until the delivery queue is inside `track`, held.
    func waitUntilHolding() {
        condition.lock()
        defer { condition.unlock() }
        while !entered { condition.wait() }
    }

    func open() {
        condition.lock()
        opened = true
        condition.broadcast()
        condition.unlock()
    }

    var events: [MeasurementEvent] {
        condition.lock()
        defer { condition.unlock() }
        return received
    }
}

/// Waits (at most a minute, never asserted on) until `condition` holds; returns whether it did.
@discardableResult
func eventually(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(60)
    while !condition() {
        if Date() > deadline { return false }
        usleep(1_000)
    }
    return true
}
