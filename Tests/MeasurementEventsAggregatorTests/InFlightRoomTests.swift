import Foundation
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

/// Back-pressure under `maximumInFlightEvents` (issue 49, point 2): a post waits (bounded) or an
/// `async` post suspends while the delivery queue is stalled, and nothing is lost; the default
/// still drops the newest. Counts, never times: the queue is held by a tracker until the test
/// has seen the posts wait.
final class InFlightRoomTests: XCTestCase {
    private func aggregator(
        limit: Int, behavior: EventAggregator.InFlightLimitBehavior, tracker: any EventTracker,
        center: NotificationCenter
    ) -> EventAggregator {
        var configuration = EventAggregator.Configuration.testing
        configuration.deliveryCoalescing = 0
        configuration.maximumInFlightEvents = limit
        configuration.whenInFlightLimitIsReached = behavior
        configuration.problemHandler = nil
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        return aggregator
    }

    func testAPostOverTheLimitWaitsForRoomAndNothingIsLostWhileDeliveryIsStalled() {
        let center = NotificationCenter()
        let gate = GateTracker()
        let aggregator = aggregator(limit: 8, behavior: .wait(atMostSeconds: 600), tracker: gate, center: center)
        let largestInFlight = LockedValue<Int64>(0)
        let posted = DispatchSemaphore(value: 0)
        Thread {
            for index in 0..<100 {
                MeasurementEvent.post("load/event", args: ["index": index], to: center)
                let inFlight = aggregator.inbox.inFlight.value
                largestInFlight.withLock { $0 = max($0, inFlight) }
            }
            posted.signal()
        }.start()
        gate.waitUntilHolding()
        XCTAssertTrue(eventually { aggregator.diagnostics.postsThatWaitedForRoom > 0 }, "the poster never waited")
        gate.open()
        posted.wait()
        aggregator.waitUntilDelivered()

        XCTAssertEqual(gate.events.compactMap { $0.args["index"]?.plainValue as? Int }, Array(0..<100))
        XCTAssertEqual(aggregator.diagnostics.droppedInFlight, 0)
        XCTAssertLessThanOrEqual(
            largestInFlight.withLock { $0 }, 8, "memory bounded: never more than the limit in flight")
    }

    func testAPostThatFindsNoRoomInTimeIsDroppedAndCountedAsBefore() {
        let center = NotificationCenter()
        let gate = GateTracker()
        let aggregator = aggregator(limit: 4, behavior: .wait(atMostSeconds: 0), tracker: gate, center: center)
        MeasurementEvent.post("load/event", to: center)
        gate.waitUntilHolding()
        for _ in 0..<10 { MeasurementEvent.post("load/event", to: center) }
        gate.open()
        aggregator.waitUntilDelivered()

        let diagnostics = aggregator.diagnostics
        XCTAssertEqual(diagnostics.postsThatWaitedForRoom, diagnostics.droppedInFlight, "each waited, then dropped")
        XCTAssertGreaterThan(diagnostics.droppedInFlight, 0)
        XCTAssertEqual(gate.events.count + diagnostics.droppedInFlight, 11, "every post delivered or counted")
    }

    func testByDefaultAPostOverTheLimitNeverWaits() {
        let center = NotificationCenter()
        let gate = GateTracker()
        let aggregator = aggregator(limit: 4, behavior: .dropNewest, tracker: gate, center: center)
        MeasurementEvent.post("load/event", to: center)
        gate.waitUntilHolding()
        for _ in 0..<10 { MeasurementEvent.post("load/event", to: center) }
        gate.open()
        aggregator.waitUntilDelivered()

        XCTAssertEqual(aggregator.diagnostics.postsThatWaitedForRoom, 0)
        XCTAssertEqual(gate.events.count + aggregator.diagnostics.droppedInFlight, 11)
        XCTAssertGreaterThan(aggregator.diagnostics.droppedInFlight, 0)
    }

    func testAnAsyncPostSuspendsUntilThereIsRoomAndIsNeverDropped() async {
        let center = NotificationCenter()
        let gate = GateTracker()
        // The default behaviour drops the newest synchronous post; an async post waits anyway.
        let aggregator = aggregator(limit: 4, behavior: .dropNewest, tracker: gate, center: center)
        let posting = Task {
            for index in 0..<50 { await aggregator.post("load/event", args: ["index": index]) }
        }
        await Task.detached { gate.waitUntilHolding() }.value
        let suspended = await Task.detached { eventually { aggregator.diagnostics.postsThatSuspendedForRoom > 0 } }
            .value
        XCTAssertTrue(suspended, "the posting task never suspended")
        gate.open()
        await posting.value
        aggregator.waitUntilDelivered()

        XCTAssertEqual(gate.events.compactMap { $0.args["index"]?.plainValue as? Int }, Array(0..<50))
        XCTAssertEqual(aggregator.diagnostics.droppedInFlight, 0)
    }

    func testAPostFromDeliveryCodeNeverWaitsForTheRoomOnlyDeliveryMakes() {
        let center = NotificationCenter()
        let posted = LockedValue(0)
        // A tracker that posts 10 events for the first one it gets, with a limit of 2: waiting
        // there would hold the only queue that makes room.
        let tracker = ClosureTracker { event in
            guard event.name == "load/first" else { return }
            for _ in 0..<10 { MeasurementEvent.post("load/echo", to: center) }
            posted.withLock { $0 += 10 }
        }
        let aggregator = aggregator(limit: 2, behavior: .wait(atMostSeconds: 600), tracker: tracker, center: center)
        MeasurementEvent.post("load/first", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertTrue(eventually { posted.withLock { $0 } == 10 })
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.diagnostics.postsThatWaitedForRoom, 0)
        XCTAssertGreaterThan(aggregator.diagnostics.droppedInFlight, 0, "dropped and counted, as before")
    }
}
