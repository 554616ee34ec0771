import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

final class LegacyAQSTests: XCTestCase {
    private func postLegacy(_ name: Any, args: Any, on center: NotificationCenter) {
        center.post(name: .legacyAQSEvent, object: nil, userInfo: ["event_name": name, "event_args": args])
    }

    func testLegacyNotificationsAreIgnoredByDefault() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        postLegacy("feed/opened", args: ["from": "objc"], on: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.diagnostics.received, 0)
    }

    func testLegacyNotificationsAreAcceptedWhenEnabledAndFilteredLikeAnyOther() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        var configuration = EventAggregator.Configuration.testing
        configuration.acceptsLegacyAQSNotifications = true
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["feed/*"]), trackers: [tracker], configuration: configuration)
        aggregator.start()
        postLegacy("feed/opened", args: ["from": "objc", "count": NSNumber(value: 2)], on: center)
        postLegacy("settings/opened", args: [:] as [String: Any], on: center)
        MeasurementEvent.post("feed/closed", to: center)
        postLegacy(7, args: [:] as [String: Any], on: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["feed/opened", "feed/closed"])
        XCTAssertEqual(tracker.events.first?.args, ["from": "objc", "count": 2])
        XCTAssertEqual(aggregator.diagnostics.filteredOut, 1)
        XCTAssertEqual(aggregator.diagnostics.malformed, 1)
        XCTAssertEqual(
            aggregator.diagnostics.recentMalformed.first?.description,
            "malformed measurement event notification (org.openaquamarine.measurement_event): the event name is an Int, expected a String"
        )
    }
}
