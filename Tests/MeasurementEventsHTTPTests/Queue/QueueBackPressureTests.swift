import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// `HTTPTracker.QueueFullBehavior.wait(atMostSeconds:)` (issue 49, point 5): at the cap, `track`
/// waits for uploads to make room instead of dropping the oldest; a wait that runs out sheds
/// until a request is accepted; a shutdown ends every wait and keeps what comes on disk.
final class QueueBackPressureTests: LoopbackTestCase {
    private func makeQueue(maximumEvents: Int) throws -> DiskQueue {
        try DiskQueue(
            directory: directory.appendingPathComponent("queue"),
            limits: .init(
                eventsPerBatch: 5, bytesPerBatch: 1 << 20, maximumEvents: maximumEvents, maximumBytes: 1 << 30),
            log: { _ in })
    }

    private func fill(_ queue: DiskQueue, _ count: Int, from first: Int = 0) throws {
        for event in numbered(count, from: first) {
            if case .full = try queue.append(QueuedEvent(event: event), waitsForRoom: true) {
                XCTFail("no room for event \(event.args["index"]?.intValue ?? -1)")
            }
        }
    }

    /// Appends event 10 to a queue that holds 10 at most, waiting for room: the frame's bytes when
    /// the append is refused, as it must be; nil when it was written.
    private func refusedEleventh(_ queue: DiskQueue) throws -> Int? {
        guard
            case .full(let frameBytes) = try queue.append(
                QueuedEvent(event: numbered(1, from: 10)[0]), waitsForRoom: true)
        else { return nil }
        return frameBytes
    }

    func testAnAppendAtTheCapIsRefusedUntilEventsAreConsumed() throws {
        let queue = try makeQueue(maximumEvents: 10)
        try fill(queue, 10)
        guard let frameBytes = try refusedEleventh(queue) else {
            return XCTFail("the eleventh event is written past the cap")
        }
        XCTAssertEqual(queue.queuedEvents, 10)
        XCTAssertEqual(queue.counters.droppedAtCap, 0)

        // The uploader, on another thread, consumes the first batch while the append waits.
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        DispatchQueue.global().async {
            queue.consume(through: DiskQueue.Position(sequence: batch.sequence, record: batch.count))
        }
        XCTAssertEqual(queue.waitForRoom(frameBytes: frameBytes, seconds: 60), .room)
        XCTAssertEqual(
            try queue.append(QueuedEvent(event: numbered(1, from: 10)[0]), waitsForRoom: true),
            .written(openCount: 1, sealed: false))
        XCTAssertEqual(queue.queuedEvents, 6)
        XCTAssertEqual(queue.counters.droppedAtCap, 0)
        XCTAssertEqual(queue.counters.waitedForRoom, 1)
        XCTAssertEqual(queue.counters.waitsTimedOut, 0)
    }

    func testAWaitThatRunsOutShedsTheOldestUntilEventsAreConsumed() throws {
        let queue = try makeQueue(maximumEvents: 10)
        try fill(queue, 10)
        guard let frameBytes = try refusedEleventh(queue) else {
            return XCTFail("the eleventh event is written past the cap")
        }
        // Nobody makes room: the wait runs out.
        XCTAssertEqual(queue.waitForRoom(frameBytes: frameBytes, seconds: 0.01), .timedOut)
        XCTAssertEqual(queue.counters.waitsTimedOut, 1)
        // Shedding: each append is written and drops the oldest, without waiting.
        for event in numbered(5, from: 10) {
            guard case .written = try queue.append(QueuedEvent(event: event), waitsForRoom: true) else {
                return XCTFail("an append waits while shedding")
            }
        }
        XCTAssertEqual(queue.queuedEvents, 10)
        XCTAssertEqual(queue.counters.droppedAtCap, 5)
        // A request accepted (events consumed) ends the episode: the next append at the cap waits again.
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        queue.consume(through: DiskQueue.Position(sequence: batch.sequence, record: batch.count))
        try fill(queue, 10 - queue.queuedEvents, from: 15)
        guard case .full = try queue.append(QueuedEvent(event: numbered(1, from: 100)[0]), waitsForRoom: true) else {
            return XCTFail("still shedding after events were consumed")
        }
    }

    func testStoppingEndsAWaitAndWritesOverTheCapWithoutDropping() throws {
        let queue = try makeQueue(maximumEvents: 10)
        try fill(queue, 10)
        guard let frameBytes = try refusedEleventh(queue) else {
            return XCTFail("the eleventh event is written past the cap")
        }
        DispatchQueue.global().async { queue.stopWaiting() }
        XCTAssertEqual(queue.waitForRoom(frameBytes: frameBytes, seconds: 60), .stopped)
        try fill(queue, 5, from: 10)
        XCTAssertEqual(queue.queuedEvents, 15, "written over the cap")
        XCTAssertEqual(queue.counters.droppedAtCap, 0)
        XCTAssertEqual(queue.counters.writtenOverCap, 5)
    }

    /// A tracker whose queue holds 100 events takes 2,000 from a thread as fast as it can: each
    /// `track` at the cap waits for an upload, and every event reaches the collector, in order.
    func testATrackerThatWaitsAtTheCapDeliversEveryEvent() throws {
        var configuration = testConfiguration(flushAt: 50)
        configuration.maximumQueuedEvents = 100
        configuration.whenQueueIsFull = .wait(atMostSeconds: 60)
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), directory: directory,
            configuration: configuration)
        for event in numbered(2_000) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 60))
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.delivered, 2_000)
        XCTAssertEqual(diagnostics.droppedAtCap, 0)
        XCTAssertGreaterThan(diagnostics.waitedForRoom, 0)
        XCTAssertEqual(diagnostics.waitsForRoomTimedOut, 0)
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<2_000))
    }

    /// The collector is down and the tracker's `track` waits at the cap (for a minute): the
    /// aggregator's shutdown ends the wait, and every event posted is on disk, none dropped.
    func testAShutdownEndsTheWaitAndKeepsEveryEventOnDisk() async throws {
        let port = try LoopbackCollector.unusedPort()
        // Retries wait for a clock nobody advances.
        var configuration = testConfiguration(clock: TestClock(runsImmediately: false), flushAt: 5)
        configuration.maximumQueuedEvents = 10
        configuration.whenQueueIsFull = .wait(atMostSeconds: 60)
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: URL(string: "http://127.0.0.1:\(port)")!),
            directory: directory, configuration: configuration)
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, destinations: [Destination(tracker, name: "collector")],
            configuration: .server)
        aggregator.start()
        for event in numbered(50) { event.post(to: center) }
        // The delivery queue waits in `track` once ten events are queued.
        let waiting = Date().addingTimeInterval(30)
        while tracker.diagnostics.accepted < 10, Date() < waiting { usleep(1_000) }

        let report = await aggregator.shutdown(deadline: Date().addingTimeInterval(1))
        XCTAssertEqual(report.forwarded, 50)
        XCTAssertEqual(report.stillQueued, 50, "\(report)")
        XCTAssertEqual(report.dropped, [], "\(report)")
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.droppedAtCap, 0)
        XCTAssertEqual(diagnostics.writtenOverCapAtShutdown, 40)
    }

    func testTheServerConfigurationWaitsAndAnAppsDropsTheOldest() {
        XCTAssertEqual(HTTPTracker.Configuration.server.whenQueueIsFull, .wait(atMostSeconds: 60))
        XCTAssertEqual(HTTPTracker.Configuration().whenQueueIsFull, .dropOldest)
    }
}
