import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// `maximumQueuedEvents` is honoured whatever the encoder's batch (issue 48): the queue keeps
/// the newest events and drops the oldest, one by one, and what it dropped (or sent) stays gone
/// after a restart.
final class QueueCapTests: XCTestCase {
    private var directory: URL!

    override func setUp() { directory = makeTemporaryDirectory(name) }
    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    /// Events queued while the server refuses every connection; the retry waits for the clock.
    private func trackWhileRefused(
        _ count: Int, cap: Int, port: UInt16, clock: TestClock
    ) throws -> HTTPTracker {
        var configuration = testConfiguration(clock: clock)
        configuration.maximumQueuedEvents = cap
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: URL(string: "http://127.0.0.1:\(port)")!),
            directory: directory, configuration: configuration)
        for event in numbered(count) { try tracker.track(event) }
        // The upload the 20th event started was refused; nothing is on the wire any more.
        let deadline = Date().addingTimeInterval(10)
        while tracker.diagnostics.retries == 0 || tracker.uploader.activity.requestInFlight, Date() < deadline {
            usleep(1_000)
        }
        return tracker
    }

    func testACapBelowOneSegmentBatchKeepsExactlyTheNewestEvents() throws {
        let port = try LoopbackCollector.unusedPort()
        let clock = TestClock(runsImmediately: false)
        let tracker = try trackWhileRefused(5_000, cap: 1_000, port: port, clock: clock)
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.retries, 1)
        XCTAssertEqual(diagnostics.queued, 1_000)
        XCTAssertEqual(diagnostics.droppedAtCap, 4_000)

        let server = LoopbackCollector(port: port)
        try server.start()
        defer { server.stop() }
        clock.advance(by: 60)
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(server.requests), Array(4_000..<5_000), "the newest 1,000, in order")
        XCTAssertEqual(tracker.diagnostics.delivered, 1_000)
    }

    /// Runs `run`, whose tracker is the previous run's, and waits until that tracker is gone
    /// (work already queued may hold it a moment): its directory is free for the next.
    private func previousRun(_ run: () throws -> HTTPTracker) rethrows {
        weak var released: HTTPTracker?
        released = try run()
        for _ in 0..<5_000 where released != nil { usleep(1_000) }
        XCTAssertNil(released, "the previous run's tracker still holds its directory")
    }

    func testWhatTheCapDroppedStaysDroppedAfterARestart() throws {
        let port = try LoopbackCollector.unusedPort()
        try previousRun {
            let tracker = try trackWhileRefused(250, cap: 100, port: port, clock: TestClock(runsImmediately: false))
            XCTAssertEqual(tracker.diagnostics.droppedAtCap, 150)
            return tracker
        }
        let server = LoopbackCollector(port: port)
        try server.start()
        defer { server.stop() }
        var configuration = testConfiguration()
        configuration.maximumQueuedEvents = 100
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: server.baseURL), directory: directory,
            configuration: configuration)
        XCTAssertEqual(tracker.diagnostics.queued, 100)
        try tracker.consentDidChange(to: .granted)
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(server.requests), Array(150..<250))
    }

    func testWhatWasSentOfABatchIsNotSentAgainAfterARestart() throws {
        let collector = LoopbackCollector()
        try collector.start()
        defer { collector.stop() }
        // Requests of 8 events, batches of 20 on disk: the second request is refused (503) and
        // the retry waits for a clock that never moves, so the run ends in the middle of a batch.
        let limits = BatchLimits(maximumEvents: 8, maximumBytes: 500_000)
        collector.script([.ok, .status(503)])
        try previousRun {
            let clock = TestClock(runsImmediately: false)
            var configuration = testConfiguration(clock: clock, flushAt: 1_000)
            configuration.maximumQueuedEvents = 20
            let tracker = try HTTPTracker(
                encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL, limits: limits),
                directory: directory, configuration: configuration)
            for event in numbered(20) { try tracker.track(event) }
            try tracker.flush()
            XCTAssertTrue(collector.waitForRequests(2, timeout: 10))
            while tracker.uploader.activity.requestInFlight { usleep(1_000) }
            XCTAssertEqual(tracker.diagnostics.delivered, 8)
            XCTAssertEqual(tracker.diagnostics.queued, 12)
            return tracker
        }
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL, limits: limits),
            directory: directory, configuration: testConfiguration())
        XCTAssertEqual(tracker.diagnostics.queued, 12)
        try tracker.consentDidChange(to: .granted)
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let requests = collector.requests
        XCTAssertEqual(receivedIndices(Array(requests.prefix(2))), Array(0..<16), "8 accepted, 8 refused")
        XCTAssertEqual(receivedIndices(Array(requests.dropFirst(2))), Array(8..<20), "the accepted 8 not again")
    }
}
