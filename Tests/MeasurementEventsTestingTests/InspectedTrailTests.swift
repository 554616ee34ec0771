import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// The test kit's trail shows each event's purposes of consent and each destination's decision
/// (issue 46), as the inspector does.
final class InspectedTrailTests: XCTestCase {
    func testEachEventShowsItsPurposesAndEachDestinationsDecision() {
        let trail = TrailRecorder()
        var configuration = EventAggregator.Configuration.testing
        configuration.trail = trail
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll,
            destinations: [
                Destination(RecordingTracker(), name: "amplitude", purposes: [.analytics]),
                Destination(RecordingTracker(), name: "ads", purposes: [.analytics, .advertising]),
            ], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("checkout/started", to: center)
        aggregator.setConsents([.analytics: .granted, .advertising: .denied])
        MeasurementEvent.post("checkout/completed", to: center)
        aggregator.waitUntilDelivered()

        let events = trail.inspectedEvents()
        XCTAssertEqual(events.map(\.name), ["checkout/started", "checkout/completed"])
        XCTAssertEqual(events.map(\.purposes), [[:], ["analytics": "granted", "advertising": "denied"]])
        XCTAssertEqual(events.first?.decisions, ["amplitude": "forwarded", "ads": "forwarded"])
        XCTAssertEqual(
            events.last?.decisions, ["amplitude": "forwarded", "ads": "not sent: purpose advertising denied"])
        aggregator.stop()
    }
}
