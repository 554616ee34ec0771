import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsLifecycle
import MeasurementEventsTesting
import XCTest

/// The lifecycle events the observer posts conform to their own catalog.
final class LifecyclePlanConformanceTests: XCTestCase {
    private final class Problems: @unchecked Sendable {
        // @unchecked: appended on the delivery queue, read after waitUntilDelivered().
        var violations: [PlanViolation] = []
    }

    func testInstalledUpdatedOpenedAndBackgroundedConformToTheLifecycleCatalog() {
        let center = NotificationCenter()
        let store = InMemoryIdentityStore()
        let problems = Problems()
        var observers: [AppLifecycleObserver] = []
        defer { for observer in observers { observer.stop() } }
        var names: [EventName] = []
        for (version, build) in [("1.0", "1"), ("1.1", "2")] {
            let recorder = RecordingTracker()
            var configuration = EventAggregator.Configuration.testing
            configuration.identityStore = store
            configuration.catalogs = [MeasurementEventsLifecycleEvents.catalog]
            configuration.problemHandler = { problem in
                if case .planViolation(let violation) = problem { problems.violations.append(violation) }
            }
            let aggregator = EventAggregator(
                center: center, filter: .allowAll, trackers: [recorder], configuration: configuration)
            aggregator.start()
            observers.append(
                AppLifecycleObserver.start(
                    aggregator: aggregator, center: center,
                    bundleInfo: ["CFBundleShortVersionString": version, "CFBundleVersion": build]))
            center.post(name: Notification.Name("UIApplicationDidFinishLaunchingNotification"), object: nil)
            center.post(name: Notification.Name("UIApplicationDidBecomeActiveNotification"), object: nil)
            center.post(name: Notification.Name("UIApplicationDidEnterBackgroundNotification"), object: nil)
            aggregator.waitUntilDelivered()
            names += recorder.names
            observers.last?.stop()
        }
        XCTAssertEqual(
            Set(names), ["app/installed", "app/updated", "app/opened", "app/backgrounded"],
            "every lifecycle event was checked")
        XCTAssertEqual(problems.violations, [])
    }
}
