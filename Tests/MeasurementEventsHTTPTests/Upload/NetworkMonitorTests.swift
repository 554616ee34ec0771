import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// What `PathNetworkMonitor` reports on each platform: the path's status, except on watchOS,
/// where an ordinary app's path stays unsatisfied (TN3135) and the monitor says online instead.
final class NetworkMonitorTests: LoopbackTestCase {
    /// What a start reported, and whether the path was watched.
    private func started(_ reporting: PathReporting, pathSays satisfied: Bool) -> (watched: Bool, reported: [Bool]) {
        let reported = LockedValue<[Bool]>([])
        var watched = false
        reporting.start(
            watchingPath: { handler in
                watched = true
                handler(satisfied)
            }, update: { isOnline in reported.withLock { $0.append(isOnline) } })
        return (watched, reported.withLock { $0 })
    }

    func testOnWatchOSThePathIsNotWatchedAndTheDeviceIsOnline() {
        XCTAssertEqual(PathReporting(platform: .watchOS), .alwaysOnline)
        let watch = started(.alwaysOnline, pathSays: false)
        XCTAssertFalse(watch.watched)
        XCTAssertEqual(watch.reported, [true])
    }

    func testEverywhereElseThePathsStatusIsTheCondition() {
        for platform in CompiledPlatform.allCases where platform != .watchOS {
            XCTAssertEqual(PathReporting(platform: platform), .followsPath, "\(platform)")
        }
        XCTAssertEqual(started(.followsPath, pathSays: false).reported, [false])
        XCTAssertEqual(started(.followsPath, pathSays: true).reported, [true])
        XCTAssertTrue(started(.followsPath, pathSays: true).watched)
    }

    func testAWatchUploadsThoughItsPathSaysUnsatisfied() throws {
        let tracker = try makeTracker(monitor: UnsatisfiedPathMonitor(platform: .watchOS))
        for event in numbered(5) { try tracker.track(event) }
        try tracker.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<5))
    }

    func testAnIPhoneWhosePathSaysUnsatisfiedWaitsForTheNetwork() throws {
        let tracker = try makeTracker(monitor: UnsatisfiedPathMonitor(platform: .iOS))
        for event in numbered(5) { try tracker.track(event) }
        try tracker.flush()
        XCTAssertFalse(collector.waitForRequests(1, timeout: 0.3))
        XCTAssertEqual(tracker.diagnostics.requests, 0)
    }

    private func makeTracker(monitor: any NetworkMonitor) throws -> HTTPTracker {
        var configuration = testConfiguration()
        configuration.networkMonitor = monitor
        return try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), directory: directory,
            configuration: configuration)
    }
}

/// `PathNetworkMonitor` compiled for `platform`, on a device whose path is unsatisfied (what an
/// ordinary watch app's `NWPathMonitor` reports).
private struct UnsatisfiedPathMonitor: NetworkMonitor {
    let platform: CompiledPlatform

    func start(_ update: @escaping @Sendable (Bool) -> Void) {
        PathReporting(platform: platform).start(watchingPath: { handler in handler(false) }, update: update)
    }

    func stop() {}
}
