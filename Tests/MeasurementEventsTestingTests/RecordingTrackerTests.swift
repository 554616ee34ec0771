import Foundation
import MeasurementEventsTesting
import XCTest

/// What the recording tracker keeps, and its expectations on identity and sessions.
final class RecordingTrackerTests: XCTestCase {
    private let center = NotificationCenter()
    private let clock = ManualEventClock()
    private let tracker = RecordingTracker()

    func testRecordsIdentityEventsInOrder() {
        let aggregator = makeAggregator()
        MeasurementIdentity.identify(userID: "u1", to: center)
        MeasurementIdentity.reset(to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.identityEvents.map(\.change), [.identify(userID: "u1", traits: [:]), .reset])
        XCTAssertEqual(tracker.identityEvents.first?.attribution.identity.userID, "u1")
    }

    func testRecordsConsentAnnouncements() {
        let aggregator = makeAggregator()
        aggregator.setConsent(.denied)
        aggregator.setConsent(.granted)
        XCTAssertEqual(tracker.consentChanges, [.granted, .denied, .granted])
    }

    func testExpectEventFindsTheUserIDEachEventWasPostedWith() throws {
        let aggregator = makeAggregator()
        MeasurementIdentity.identify(userID: "u1", to: center)
        MeasurementEvent.post("account/signed_out", to: center)
        MeasurementIdentity.reset(to: center)
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(try tracker.expectEvent("account/signed_out", userID: "u1").userID, "u1")
        XCTAssertNil(try tracker.expectEvent("feed/opened", userID: .signedOut).userID)
        XCTAssertThrowsError(try tracker.expectEvent("feed/opened", userID: "u1"))
    }

    func testExpectEventMatchesSessionAndArgs() throws {
        let aggregator = makeAggregator()
        MeasurementEvent.post("checkout/paid", args: ["amount": 12], to: center)
        aggregator.waitUntilDelivered()
        let session = try XCTUnwrap(tracker.events.first?.sessionID)
        XCTAssertNoThrow(try tracker.expectEvent("checkout/paid", sessionID: session, args: ["amount": 12]))
        XCTAssertThrowsError(try tracker.expectEvent("checkout/paid", sessionID: session + 1))
        XCTAssertThrowsError(try tracker.expectEvent("checkout/paid", args: ["amount": 13]))
    }

    func testExpectEventErrorListsWhatWasTrackedWithItsIdentity() {
        let aggregator = makeAggregator()
        MeasurementIdentity.identify(userID: "u1", to: center)
        MeasurementEvent.post("checkout/paid", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertThrowsError(try tracker.expectEvent("checkout/paid", userID: "u2")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("expected \"checkout/paid\" with user id \"u2\"; tracked (1):"), text)
            XCTAssertTrue(text.contains("checkout/paid user_id=\"u1\" anonymous_id=\""), text)
            XCTAssertTrue(text.contains("session=1714566600000"), text)
            XCTAssertTrue(
                text.contains("identity changes (1):\n  - identify \"u1\" (0 traits) -> user id \"u1\""), text)
        }
    }

    func testExpectEventErrorSaysWhenNothingWasTracked() {
        XCTAssertThrowsError(try tracker.expectEvent("checkout/paid")) { error in
            XCTAssertEqual("\(error)", "expected \"checkout/paid\" with any user id; nothing was tracked")
        }
    }

    func testExpectSameSessionReturnsTheSharedSession() throws {
        let aggregator = makeAggregator()
        MeasurementEvent.post("cart/opened", to: center)
        clock.advance(by: 29 * 60)
        MeasurementEvent.post("checkout/paid", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(try tracker.expectSameSession("cart/opened", "checkout/paid"), 1_714_566_600_000)
    }

    func testExpectSameSessionThrowsForEventsOfDifferentSessions() {
        let aggregator = makeAggregator()
        MeasurementEvent.post("cart/opened", to: center)
        clock.advance(by: 31 * 60)
        MeasurementEvent.post("checkout/paid", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertThrowsError(try tracker.expectSameSession("cart/opened", "checkout/paid")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("session=1714566600000"), text)
            XCTAssertTrue(text.contains("session=1714568460000"), text)
        }
    }

    func testExpectSameSessionThrowsForAnEventNotTracked() {
        let aggregator = makeAggregator()
        MeasurementEvent.post("cart/opened", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertThrowsError(try tracker.expectSameSession("cart/opened", "checkout/paid"))
    }

    private func makeAggregator() -> EventAggregator {
        var configuration = EventAggregator.Configuration.testing
        configuration.clock = clock
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["*"]), trackers: [tracker], configuration: configuration)
        aggregator.start()
        return aggregator
    }
}
