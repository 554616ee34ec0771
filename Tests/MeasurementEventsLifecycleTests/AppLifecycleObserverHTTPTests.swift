import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsLifecycle
import XCTest

/// Entering the background uploads what the HTTP tracker had queued, to a real server on loopback.
final class AppLifecycleObserverHTTPTests: XCTestCase {
    func testEnteringTheBackgroundUploadsWhatTheHTTPTrackerQueued() throws {
        let collector = LoopbackCollector()
        try collector.start()
        defer { collector.stop() }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("AppLifecycleObserverHTTPTests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }

        var configuration = HTTPTracker.Configuration()
        // Nothing but a flush sends: no timer, no batch ever full.
        configuration.flushAt = 1_000
        configuration.flushInterval = nil
        configuration.logHandler = { _ in }
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "lifecycle", baseURL: collector.baseURL), directory: directory,
            configuration: configuration)
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center,
            filter: EventFilter(
                allow: ["checkout/*"] + MeasurementEventsLifecycleEvents.allNames.map(EventPattern.init)),
            trackers: [tracker], configuration: .testing)
        aggregator.start()
        let observer = AppLifecycleObserver.start(
            aggregator: aggregator, center: center, bundleInfo: ["CFBundleShortVersionString": "1.0"])
        defer { observer.stop() }

        MeasurementEvent.post("checkout/paid", args: ["amount": 12], to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(collector.requests.count, 0, "nothing is sent before the app goes to the background")

        center.post(name: Notification.Name("UIApplicationDidEnterBackgroundNotification"), object: nil)

        XCTAssertTrue(collector.waitForRequests(1, timeout: 30), "no upload after entering the background")
        let bodies = collector.requests.map(\.bodyText).joined()
        XCTAssertTrue(bodies.contains("checkout/paid"), bodies)
        XCTAssertTrue(bodies.contains("app/installed"), bodies)
    }
}
