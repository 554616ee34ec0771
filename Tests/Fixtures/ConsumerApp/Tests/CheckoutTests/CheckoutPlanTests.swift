import Checkout
import Foundation
import MeasurementEvents
import MeasurementEventsPlan
import MeasurementEventsTesting
import XCTest

/// The tracking plan is its own product: an app adds `MeasurementEventsPlan` and imports it next
/// to the core.
final class CheckoutPlanTests: XCTestCase {
    func testAnAggregatorBuiltFromAPlanLabelsAndRoutesTheCatalogEvents() throws {
        let plan = try TrackingPlan(
            data: Data(
                #"""
                {
                  "version": 1,
                  "destinations": ["analytics", "console"],
                  "events": {
                    "checkout/paid": { "label": "Paid", "destinations": ["analytics"] },
                    "checkout/*": { "label": "Checkout" }
                  }
                }
                """#.utf8),
            file: "plan.json", catalog: TrackingPlan.Catalog(names: CheckoutEvents.allNames))
        let analytics = RecordingTracker()
        let console = RecordingTracker()
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = .inMemory  // a test never shares the app's identity file
        configuration.delivery = .synchronous
        let aggregator = try EventAggregator(
            plan: plan,
            destinations: [
                "analytics": analytics, "console": console,
            ],
            center: center, configuration: configuration)
        aggregator.start()
        CheckoutScreen(center: center).pay(cartID: "c1", email: "a@example.com")
        aggregator.stop()

        XCTAssertEqual(analytics.events.map(\.name), CheckoutEvents.allNames)
        XCTAssertEqual(analytics.events.map(\.label), ["Checkout", "Paid"])
        XCTAssertEqual(console.events.map(\.name), ["checkout/started"])
    }
}
