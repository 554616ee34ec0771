import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// Issue 34: what a previous run left is not read during the app's launch; it goes, whole and
/// in order, with the first upload of this run or `HTTPTracker.backlogDelay` after start.
final class BacklogAtStartTests: LoopbackTestCase {
    private var queueDirectory: URL { directory.appendingPathComponent("queue") }

    /// Leaves `count` events in sealed batches of 10, as a previous process would have, the last
    /// batch with its last record damaged (counted only when the batch is read).
    private func previousRun(_ count: Int) throws {
        let queue = try DiskQueue(
            directory: queueDirectory,
            limits: .init(eventsPerBatch: 10, bytesPerBatch: 1 << 20, maximumEvents: 1_000_000, maximumBytes: 1 << 30),
            log: { _ in })
        for event in numbered(count) { _ = try queue.append(QueuedEvent(event: event)) }
        queue.sealOpenSegment(durable: false)
        let last = queueDirectory.appendingPathComponent(try XCTUnwrap(queueFiles(directory).last))
        var bytes = [UInt8](try Data(contentsOf: last))
        bytes[bytes.count - 3] ^= 0xFF
        try Data(bytes).write(to: last)
    }

    /// Waits for the uploader to deliver `count` events without asking it to (no flush).
    private func waitForDelivered(_ count: Int, by tracker: HTTPTracker) {
        let deadline = Date().addingTimeInterval(30)
        while tracker.diagnostics.delivered < count, Date() < deadline { usleep(2_000) }
    }

    func testABacklogIsNotReadAtStartAndIsDeliveredWholeAfterTheDelay() throws {
        try previousRun(100)
        let clock = TestClock(runsImmediately: false)
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "k", baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(clock: clock))
        try tracker.consentDidChange(to: .granted)
        _ = tracker.uploader.isIdle  // the uploader's queue has run what start and consent queued
        XCTAssertEqual(tracker.diagnostics.requests, 0, "nothing sent at start")
        XCTAssertEqual(tracker.diagnostics.corruptRecords, 0, "no batch read at start")
        XCTAssertEqual(tracker.diagnostics.queued, 100, "counted from the names")
        XCTAssertEqual(clock.scheduledDelays, [HTTPTracker.backlogDelay])

        clock.advance(by: HTTPTracker.backlogDelay)
        waitForDelivered(99, by: tracker)
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<99))
        XCTAssertEqual(tracker.diagnostics.corruptRecords, 1)
        XCTAssertEqual(tracker.diagnostics.queued, 0)
        XCTAssertEqual(queueFiles(directory), [])
    }

    func testTheFirstUploadOfThisRunSendsTheBacklogFirstWithoutWaitingForTheDelay() throws {
        try previousRun(30)
        let clock = TestClock(runsImmediately: false)
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "k", baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(clock: clock, flushAt: 5))
        try tracker.consentDidChange(to: .granted)
        for event in numbered(5, from: 100) { try tracker.track(event) }
        waitForDelivered(34, by: tracker)
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<29) + Array(100..<105))
        XCTAssertEqual(tracker.diagnostics.queued, 0)
    }

    func testWithoutConsentTheDelayedBacklogStaysQueued() throws {
        try previousRun(20)
        let clock = TestClock(runsImmediately: false)
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "k", baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(clock: clock))
        clock.advance(by: HTTPTracker.backlogDelay)
        _ = tracker.uploader.isIdle
        XCTAssertEqual(tracker.diagnostics.requests, 0)
        XCTAssertEqual(tracker.diagnostics.queued, 20)
        try tracker.consentDidChange(to: .granted)
        waitForDelivered(19, by: tracker)
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<19))
    }
}
