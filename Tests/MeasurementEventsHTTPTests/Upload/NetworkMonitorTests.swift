import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// What `PathNetworkMonitor` reports on each platform: the path's status, except on watchOS,
/// where an ordinary app's path stays unsatisfied (TN3135) and the monitor says online instead.
final class NetworkMonitorTests: LoopbackTestCase {
    /// What a start on `platform` reported, and whether the path was watched.
    private func started(on platform: CompiledPlatform, pathSays satisfied: Bool) -> (watched: Bool, reported: [Bool]) {
        let reported = LockedValue<[Bool]>([])
        var watched = false
        PathReporting.start(
            on: platform,
            watchingPath: { handler in
                watched = true
                handler(satisfied)
            }, update: { isOnline in reported.withLock { $0.append(isOnline) } })
        return (watched, reported.withLock { $0 })
    }

    func testOnWatchOSThePathIsNotWatchedAndTheDeviceIsOnline() {
        XCTAssertFalse(PathReporting.followsPath(on: .watchOS))
        let watch = started(on: .watchOS, pathSays: false)
        XCTAssertFalse(watch.watched)
        XCTAssertEqual(watch.reported, [true])
    }

    func testEverywhereElseThePathsStatusIsTheCondition() {
        let others: [CompiledPlatform] = [
            .iOS, .macCatalyst, .macOS, .tvOS, .visionOS, .linux, .android, .windows, .other,
        ]
        for platform in others {
            XCTAssertTrue(PathReporting.followsPath(on: platform), "\(platform)")
            XCTAssertEqual(started(on: platform, pathSays: false).reported, [false], "\(platform)")
            XCTAssertEqual(started(on: platform, pathSays: true).reported, [true], "\(platform)")
        }
        XCTAssertTrue(started(on: .iOS, pathSays: true).watched)
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
        PathReporting.start(on: platform, watchingPath: { handler in handler(false) }, update: update)
    }

    func stop() {}
}
