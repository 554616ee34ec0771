import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// When a tracker uploads: the policies it is given, combined; no timer while nothing waits.
final class FlushPolicyTests: LoopbackTestCase {
    private func makeTracker(_ policies: [any FlushPolicy]?, clock: TestClock) throws -> HTTPTracker {
        var configuration = testConfiguration(clock: clock)
        configuration.flushInterval = 30
        configuration.flushPolicies = policies
        return try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), directory: directory,
            configuration: configuration)
    }

    func testAnIdleTrackerWakesNoTimerInSixtySeconds() throws {
        let clock = TestClock(runsImmediately: false)
        let tracker = try makeTracker(nil, clock: clock)
        for _ in 0..<60 { clock.advance(by: 1) }
        XCTAssertEqual(clock.scheduledDelays, [], "no wake-up while nothing is queued")
        print("idle tracker, 60 s with nothing queued: \(clock.scheduledDelays.count) timer wake-ups")
        _ = tracker
    }

    func testTheTimerRunsOnlyWhileEventsWait() throws {
        let clock = TestClock(runsImmediately: false)
        let tracker = try makeTracker(nil, clock: clock)
        for event in numbered(3) { try tracker.track(event) }
        XCTAssertEqual(clock.scheduledDelays, [30], "one timer for the waiting events")
        clock.advance(by: 30)
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), [0, 1, 2])
        for _ in 0..<120 { clock.advance(by: 1) }
        XCTAssertEqual(clock.scheduledDelays, [30], "none once the queue is empty")
        try tracker.track(numbered(1, from: 3)[0])
        XCTAssertEqual(clock.scheduledDelays, [30, 30])
    }

    func testManualPolicyUploadsOnlyWhenAsked() throws {
        let clock = TestClock(runsImmediately: false)
        let tracker = try makeTracker([ManualFlushPolicy()], clock: clock)
        for event in numbered(150) { try tracker.track(event) }
        tracker.didEnterBackground()
        clock.advance(by: 3_600)
        XCTAssertEqual(clock.scheduledDelays, [])
        XCTAssertFalse(collector.waitForRequests(1, timeout: 0.3), "no upload: not asked")
        XCTAssertEqual(tracker.diagnostics.queued, 150)
        try tracker.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<150))
    }

    func testPoliciesCombineAndTheCountStartsOneUploadPerCrossing() throws {
        let clock = TestClock(runsImmediately: false)
        let tracker = try makeTracker([CountFlushPolicy(count: 5), BackgroundFlushPolicy()], clock: clock)
        for event in numbered(4) { try tracker.track(event) }
        XCTAssertFalse(collector.waitForRequests(1, timeout: 0.3))
        try tracker.track(numbered(1, from: 4)[0])
        XCTAssertTrue(collector.waitForRequests(1, timeout: 10))
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        try tracker.track(numbered(1, from: 5)[0])
        tracker.didEnterBackground()
        XCTAssertTrue(collector.waitForRequests(2, timeout: 10), "the background policy uploads")
        XCTAssertEqual(collector.requests.map { segmentCalls([$0]).count }, [5, 1])
        XCTAssertEqual(clock.scheduledDelays, [], "no interval policy, no timer")
    }

    func testCombinedPolicyTakesAnyTriggerAndTheShortestInterval() {
        let combined = CombinedFlushPolicy(policies: [
            IntervalFlushPolicy(seconds: 30), IntervalFlushPolicy(seconds: 10), IntervalFlushPolicy(seconds: .nan),
            CountFlushPolicy(count: 0),
        ])
        XCTAssertEqual(combined.interval, 10)
        XCTAssertTrue(combined.shouldFlush(queuedEvents: 1), "a count below 1 counts as 1")
        XCTAssertFalse(combined.flushesOnBackground)
        XCTAssertNil(CombinedFlushPolicy(policies: [ManualFlushPolicy()]).interval)
        XCTAssertNil(IntervalFlushPolicy(seconds: -1).interval)
    }
}
