import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// Offline, nothing is attempted and no retry is spent; online again, delivery resumes at once.
/// The condition is driven by hand, as a monitor would report it.
final class NetworkConditionTests: LoopbackTestCase {
    private func makeTracker(
        baseURL: URL? = nil, clock: TestClock = TestClock(runsImmediately: true), monitor: (any NetworkMonitor)? = nil
    ) throws -> HTTPTracker {
        var configuration = testConfiguration(clock: clock)
        configuration.networkMonitor = monitor
        return try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: baseURL ?? collector.baseURL), directory: directory,
            configuration: configuration)
    }

    func testOfflineNothingIsSentAndReconnectionDeliversAtOnce() throws {
        let tracker = try makeTracker()
        tracker.networkDidChange(isOnline: false)
        for event in numbered(30) { try tracker.track(event) }
        try tracker.flush()
        XCTAssertFalse(collector.waitForRequests(1, timeout: 0.3))
        XCTAssertEqual(tracker.diagnostics.requests, 0)
        XCTAssertEqual(tracker.diagnostics.retries, 0)
        tracker.networkDidChange(isOnline: true)
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<30))
    }

    func testAPendingBackoffSpendsNothingOfflineAndIsCutShortOnReconnection() throws {
        let port = try LoopbackCollector.unusedPort()
        let late = LoopbackCollector(port: port)
        defer { late.stop() }
        let clock = TestClock(runsImmediately: false)
        let tracker = try makeTracker(baseURL: URL(string: "http://127.0.0.1:\(port)")!, clock: clock)
        for event in numbered(5) { try tracker.track(event) }
        try tracker.flush()
        let deadline = Date().addingTimeInterval(10)
        while tracker.diagnostics.retries == 0 && Date() < deadline { usleep(5_000) }
        XCTAssertEqual(tracker.diagnostics.retries, 1, "refused while online: a backoff")
        tracker.networkDidChange(isOnline: false)
        for _ in 0..<600 { clock.advance(by: 1) }
        XCTAssertEqual(tracker.diagnostics.requests, 1, "nothing attempted offline")
        XCTAssertEqual(tracker.diagnostics.retries, 1, "no retry spent offline")
        try late.start()
        tracker.networkDidChange(isOnline: true)
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30), "at once: the clock is not advanced")
        XCTAssertEqual(receivedIndices(late.requests), Array(0..<5))
        XCTAssertEqual(clock.scheduledDelays, [1])
    }

    /// The guarantee is that a flap costs no request: the events go in the requests they would
    /// have gone in without it. How many requests 40 events take while the tracker is online is
    /// not fixed (the upload that `flushAt` starts seals whatever is queued when its queue gets
    /// to it, so a busy machine can cut them into three batches instead of two), so the events
    /// are queued offline, where their batching is decided by no race: one request, flaps or not.
    func testAConditionFlappingAThousandTimesCostsNoExtraRequests() throws {
        let tracker = try makeTracker()
        tracker.networkDidChange(isOnline: false)
        for event in numbered(40) { try tracker.track(event) }
        for index in 0..<1_000 { tracker.networkDidChange(isOnline: index % 2 == 1) }
        try tracker.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<40))
        XCTAssertEqual(tracker.diagnostics.requests, collector.requests.count)
        XCTAssertEqual(tracker.diagnostics.requests, 1, "the 40 events queued offline fit one request")
    }

    func testAMonitorDrivesTheConditionAndIsStoppedWithTheTracker() throws {
        let monitor = ScriptedMonitor()
        var tracker: HTTPTracker? = try makeTracker(monitor: monitor)
        monitor.report(false)
        for event in numbered(3) { try tracker?.track(event) }
        try tracker?.flush()
        XCTAssertFalse(collector.waitForRequests(1, timeout: 0.3))
        monitor.report(true)
        XCTAssertTrue(tracker?.waitUntilDelivered(timeout: 30) == true)
        tracker = nil
        XCTAssertTrue(monitor.stopped.withLock { $0 })
    }
}

/// A network monitor the test drives.
private final class ScriptedMonitor: NetworkMonitor, @unchecked Sendable {
    // @unchecked: both properties are behind their locks.
    private let update = LockedValue<(@Sendable (Bool) -> Void)?>(nil)
    let stopped = LockedValue(false)

    func start(_ update: @escaping @Sendable (Bool) -> Void) { self.update.withLock { $0 = update } }
    func stop() { stopped.withLock { $0 = true } }
    func report(_ isOnline: Bool) { update.withLock { $0 }?(isOnline) }
}
