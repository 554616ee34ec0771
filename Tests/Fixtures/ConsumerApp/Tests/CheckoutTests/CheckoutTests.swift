import Checkout
import Foundation
import MeasurementEvents
import MeasurementEventsTesting
import Onboarding
import XCTest

final class CheckoutTests: XCTestCase {
    func testPayPostsTheCatalogEvents() throws {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        CheckoutScreen(center: center).pay(cartID: "c1", email: "a@example.com")
        recorder.stop()
        let events = recorder.events
        XCTAssertEqual(events.map(\.name), CheckoutEvents.allNames)
        XCTAssertEqual(
            CheckoutEvents.CheckoutPaid(events[1]),
            CheckoutEvents.CheckoutPaid(cartID: "c1", email: "a@example.com", express: true))
        XCTAssertEqual(CheckoutEvents.personalDataArgs, ["checkout/paid": ["email", "phone"]])
    }

    func testTrackersReceiveTheEmailHashedOnceTheCatalogsAreRegistered() throws {
        let center = NotificationCenter()
        let received = RecordingTracker()
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = .inMemory  // a test never shares the app's identity file
        configuration.catalogs = [CheckoutEvents.catalog, OnboardingEvents.catalog]
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["checkout/*"]),
            trackers: [received],
            configuration: configuration)
        aggregator.start()
        CheckoutScreen(center: center).pay(cartID: "c1", email: "a@example.com")
        aggregator.waitUntilDelivered()
        let paid = try XCTUnwrap(received.events.first { $0.name == CheckoutEvents.checkoutPaid })
        XCTAssertEqual(paid.args["cart_id"], "c1")
        XCTAssertEqual(paid.args["email"]?.stringValue?.hasPrefix("sha256:"), true)
    }
}
