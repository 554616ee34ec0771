import Foundation
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

/// `shutdown(deadline:)` (issue 49, point 3): posts after it are refused, counted and reported
/// once; everything posted before reaches the trackers; the report adds it up.
final class EventAggregatorShutdownTests: XCTestCase {
    private func aggregator(
        center: NotificationCenter, tracker: any EventTracker, problems: LockedValue<[EventAggregator.Problem]>,
        configuration base: EventAggregator.Configuration = .testing
    ) -> EventAggregator {
        var configuration = base
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem) } }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        return aggregator
    }

    func testPostsAfterShutdownAreCountedAndReportedOnce() async {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let problems = LockedValue<[EventAggregator.Problem]>([])
        let aggregator = aggregator(center: center, tracker: tracker, problems: problems)
        for index in 0..<3 { MeasurementEvent.post("shop/viewed", args: ["index": index], to: center) }

        let report = await aggregator.shutdown(deadline: Date())
        for _ in 0..<5 { MeasurementEvent.post("shop/late", to: center) }
        await aggregator.post("shop/late")

        XCTAssertEqual(tracker.events.map(\.name), Array(repeating: "shop/viewed", count: 3))
        XCTAssertEqual(report.forwarded, 3)
        XCTAssertEqual(report.postedAfterShutdown, 0)
        XCTAssertEqual(aggregator.diagnostics.postedAfterShutdown, 6)
        let refusals = problems.withLock { $0 }.compactMap { problem -> EventName? in
            if case .postedAfterShutdown(let name) = problem { return name }
            return nil
        }
        XCTAssertEqual(refusals, ["shop/late"], "reported once")
        // Starting again does not reopen it.
        aggregator.start()
        MeasurementEvent.post("shop/late", to: center)
        XCTAssertEqual(aggregator.diagnostics.postedAfterShutdown, 7)
        XCTAssertEqual(tracker.events.count, 3)
    }

    func testWithSynchronousDeliveryPostsAfterShutdownAreRefusedToo() async {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let problems = LockedValue<[EventAggregator.Problem]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = .synchronous
        let aggregator = aggregator(center: center, tracker: tracker, problems: problems, configuration: configuration)
        MeasurementEvent.post("shop/viewed", to: center)
        _ = await aggregator.shutdown(deadline: Date())
        MeasurementEvent.post("shop/late", to: center)

        XCTAssertEqual(tracker.events.map(\.name), ["shop/viewed"])
        XCTAssertEqual(aggregator.diagnostics.postedAfterShutdown, 1)
    }

    /// A synchronous post that passed the inbox's refusal check just before the shutdown began,
    /// and was still on its way to the delivery lock (here: in the app's clock) when the
    /// shutdown drained, flushed and reported: refused under the lock, never delivered after the
    /// report.
    func testWithSynchronousDeliveryAPostOnItsWayWhenTheShutdownRunsIsRefused() async {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let problems = LockedValue<[EventAggregator.Problem]>([])
        let clock = OneShotGateClock()
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = .synchronous
        configuration.clock = clock
        let aggregator = aggregator(center: center, tracker: tracker, problems: problems, configuration: configuration)
        MeasurementEvent.post("shop/viewed", to: center)

        clock.arm()
        let racer = DispatchGroup()
        racer.enter()
        Thread {
            MeasurementEvent.post("shop/raced", to: center)
            racer.leave()
        }.start()
        await Task.detached { clock.waitUntilHeld() }.value
        let report = await aggregator.shutdown(deadline: Date())
        clock.release()
        await withCheckedContinuation { continuation in racer.notify(queue: .global()) { continuation.resume() } }

        XCTAssertEqual(report.forwarded, 1)
        XCTAssertEqual(tracker.events.map(\.name), ["shop/viewed"], "nothing reached the tracker after the report")
        XCTAssertEqual(aggregator.diagnostics.postedAfterShutdown, 1)
        XCTAssertEqual(aggregator.diagnostics.forwarded, 1)
    }

    func testEveryPostThatReturnedBeforeTheShutdownReachesTheTrackers() async {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let problems = LockedValue<[EventAggregator.Problem]>([])
        let aggregator = aggregator(center: center, tracker: tracker, problems: problems, configuration: .server)
        // Four threads post until the shutdown refuses them; each counts the posts it made.
        let made = LockedValue(0)
        let stop = AtomicCounter()
        let done = DispatchGroup()
        for thread in 0..<4 {
            done.enter()
            Thread {
                var count = 0
                while stop.value == 0 {
                    MeasurementEvent.post("load/event", args: ["thread": thread, "index": count], to: center)
                    count += 1
                }
                made.withLock { $0 += count }
                done.leave()
            }.start()
        }
        XCTAssertTrue(eventually { aggregator.diagnostics.received > 1_000 })
        let report = await aggregator.shutdown(deadline: Date())
        stop.store(1)
        await withCheckedContinuation { continuation in done.notify(queue: .global()) { continuation.resume() } }
        aggregator.waitUntilDelivered()

        let diagnostics = aggregator.diagnostics
        XCTAssertEqual(tracker.events.count, report.forwarded, "nothing reached the tracker after the report")
        XCTAssertEqual(
            report.forwarded + diagnostics.postedAfterShutdown, made.withLock { $0 },
            "every post delivered before the report or refused after")
        XCTAssertEqual(diagnostics.droppedInFlight, 0)
        XCTAssertTrue(report.dropped.isEmpty, "\(report)")
    }

    func testAnAsyncPostWaitingForRoomAtShutdownIsRefused() async {
        let center = NotificationCenter()
        let gate = GateTracker()
        let problems = LockedValue<[EventAggregator.Problem]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.maximumInFlightEvents = 2
        configuration.deliveryCoalescing = 0
        let aggregator = aggregator(center: center, tracker: gate, problems: problems, configuration: configuration)
        let posting = Task {
            for _ in 0..<10 { await aggregator.post("load/event") }
        }
        await Task.detached { gate.waitUntilHolding() }.value
        _ = await Task.detached { eventually { aggregator.diagnostics.postsThatSuspendedForRoom > 0 } }.value
        // The queue is held: the shutdown's drain waits behind it, so open the gate as it starts.
        async let report = aggregator.shutdown(deadline: Date())
        _ = await Task.detached { eventually { aggregator.inbox.room.isClosed } }.value
        gate.open()
        let forwarded = await report.forwarded
        await posting.value

        XCTAssertEqual(forwarded + aggregator.diagnostics.postedAfterShutdown, 10)
        XCTAssertGreaterThan(aggregator.diagnostics.postedAfterShutdown, 0)
        XCTAssertEqual(gate.events.count, forwarded)
    }

    func testTheReportNamesWhatWasDroppedAndWhy() {
        var diagnostics = EventAggregator.Diagnostics()
        diagnostics.forwarded = 10
        diagnostics.droppedInFlight = 2
        diagnostics.held = 1
        let report = EventAggregator.report(
            diagnostics,
            trackers: [
                "collector": QueuedDelivery(
                    delivered: 6, stillQueued: 3, dropped: [DroppedEvents(reason: "refused by the server", count: 1)],
                    whereQueued: "/var/lib/events")
            ])
        XCTAssertEqual(report.delivered, 6)
        XCTAssertEqual(report.stillQueued, 3)
        XCTAssertTrue(report.deadlinePassed)
        XCTAssertFalse(report.deliveredEverything)
        XCTAssertEqual(
            report.dropped.map(\.description),
            [
                "2 dropped: more than maximumInFlightEvents were waiting for delivery",
                "1 dropped: still held in memory at shutdown (not ready, or waiting for consent)",
                "1 dropped by collector: refused by the server",
            ])
        XCTAssertEqual(
            report.description,
            "forwarded 10, delivered 6, 3 still queued (in /var/lib/events), "
                + "2 dropped: more than maximumInFlightEvents were waiting for delivery; "
                + "1 dropped: still held in memory at shutdown (not ready, or waiting for consent); "
                + "1 dropped by collector: refused by the server, the deadline passed")
    }

    /// A tracker whose `track` blocks until it is told the shutdown began (as an `HTTPTracker`
    /// waiting for room in its queue does): the shutdown tells it before the drain, so the drain
    /// ends and every event reaches it.
    func testQueuedDeliveryReportingTrackersAreToldBeforeTheDrain() async {
        final class BlockingTracker: QueuedDeliveryReporting, @unchecked Sendable {
            // @unchecked: `told` is a semaphore, `tracked` behind its lock.
            let told = DispatchSemaphore(value: 0)
            let tracked = LockedValue<[EventName]>([])
            func track(_ event: MeasurementEvent) throws {
                if tracked.withLock({ $0.count }) == 1 {
                    told.wait()
                    told.signal()
                }
                tracked.withLock { $0.append(event.name) }
            }
            func shutdownDidBegin(deadline: Date) { told.signal() }
            func deliverQueued(before deadline: Date) -> QueuedDelivery {
                QueuedDelivery(delivered: tracked.withLock { $0.count }, stillQueued: 0)
            }
        }
        let center = NotificationCenter()
        let tracker = BlockingTracker()
        let aggregator = aggregator(center: center, tracker: tracker, problems: LockedValue([]))
        for index in 0..<5 { MeasurementEvent.post("shop/viewed", args: ["index": index], to: center) }

        let report = await aggregator.shutdown(deadline: Date().addingTimeInterval(30))
        XCTAssertEqual(tracker.tracked.withLock { $0 }, Array(repeating: "shop/viewed", count: 5))
        XCTAssertEqual(report.delivered, 5)
    }
}

/// A clock whose first reading after ``arm()`` blocks the thread reading it until ``release()``;
/// every other reading is the system's time.
private final class OneShotGateClock: EventClock, @unchecked Sendable {
    // @unchecked: `armed` and `held` sit behind the condition's lock.
    private let condition = NSCondition()
    private var armed = false
    private var held = false
    private var released = false

    func arm() {
        condition.lock()
        armed = true
        condition.unlock()
    }

    func now() -> Date {
        condition.lock()
        defer { condition.unlock() }
        guard armed else { return Date() }
        armed = false
        held = true
        condition.broadcast()
        while !released { condition.wait() }
        return Date()
    }

    func waitUntilHeld() {
        condition.lock()
        while !held { condition.wait() }
        condition.unlock()
    }

    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }
}
