import Checkout
import Foundation
import MeasurementEvents
import Onboarding
import XCTest

final class CheckoutTests: XCTestCase {
    func testPayPostsTheCatalogEvents() throws {
        let center = NotificationCenter()
        let received = LockedValue<[MeasurementEvent]>([])
        let token = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { note in
            if let event = try? MeasurementEvent(notification: note) { received.withLock { $0.append(event) } }
        }
        CheckoutScreen(center: center).pay(cartID: "c1", email: "a@example.com")
        center.removeObserver(token)
        let events = received.withLock { $0 }
        XCTAssertEqual(events.map(\.name), CheckoutEvents.allNames)
        XCTAssertEqual(
            CheckoutEvents.CheckoutPaid(events[1]),
            CheckoutEvents.CheckoutPaid(cartID: "c1", email: "a@example.com", express: true))
        XCTAssertEqual(CheckoutEvents.personalDataArgs, ["checkout/paid": ["email", "phone"]])
    }

    func testTrackersReceiveTheEmailHashedOnceTheCatalogsAreRegistered() throws {
        let center = NotificationCenter()
        let received = LockedValue<[MeasurementEvent]>([])
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = .inMemory  // a test never shares the app's identity file
        configuration.catalogs = [CheckoutEvents.catalog, OnboardingEvents.catalog]
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["checkout/*"]),
            trackers: [ClosureTracker { event in received.withLock { $0.append(event) } }],
            configuration: configuration)
        aggregator.start()
        CheckoutScreen(center: center).pay(cartID: "c1", email: "a@example.com")
        aggregator.waitUntilDelivered()
        let paid = try XCTUnwrap(received.withLock { $0 }.first { $0.name == CheckoutEvents.checkoutPaid })
        XCTAssertEqual(paid.args["cart_id"], "c1")
        XCTAssertEqual(paid.args["email"]?.stringValue?.hasPrefix("sha256:"), true)
    }
}
