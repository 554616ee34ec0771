import Foundation
import MeasurementEvents
import MeasurementEventsStandard
import XCTest

/// What MeasurementEventsStandardValues writes and reads agrees with this module's catalog
/// (`Events/MeasurementEventsStandard.json`), which declares the same events: the values module
/// cannot use the generated types, so these tests hold the two together.
final class StandardValuesExportsTests: XCTestCase {
    private typealias Catalog = MeasurementEventsStandardEvents

    func testTheNamesAndTypesAreTheCatalogs() {
        XCTAssertEqual(Order.eventName, Catalog.OrderCompleted.eventName)
        XCTAssertEqual(Order.eventType, Catalog.OrderCompleted.eventType)
        XCTAssertEqual(ScreenView.eventName, Catalog.ScreenViewed.eventName)
        XCTAssertEqual(ScreenView.eventType, Catalog.ScreenViewed.eventType)
        XCTAssertEqual(StandardEventNames.userAliased, Catalog.UserAliased.eventName)
    }

    func testTheCampaignArgsAreTheDeepLinksUTMArgs() throws {
        // The catalog declares them on app/deep_link_opened; `DeepLink.utmArgs` is defined as
        // `campaignArgs`, so comparing those two would hold whatever the list said.
        let declared = try XCTUnwrap(spec(Catalog.appDeepLinkOpened)).args.map(\.name)
        XCTAssertEqual(Set(StandardEventNames.campaignArgs), Set(declared.filter { $0.hasPrefix("utm_") }))
    }

    func testAnOrdersArgsAreTheCatalogsAndTheCatalogsAreAnOrders() throws {
        let order = Order(
            currency: "EUR", orderID: "T-1", revenueType: "purchase", receipt: "r",
            products: [.init(productID: "sku", name: "Mug", price: Decimal(string: "9.99")!, quantity: 2)])
        let event = MeasurementEvent(Order.eventName, type: Order.eventType, args: order.args)
        let typed = try XCTUnwrap(Catalog.OrderCompleted(event))
        XCTAssertEqual(
            typed,
            Catalog.OrderCompleted(
                revenue: "19.98", currency: "EUR", productCount: 1, orderID: "T-1", revenueType: "purchase",
                receipt: "r"))
        // The catalog's own args, with the products' args beside them, make the same order.
        var args = typed.args
        for (key, value) in order.args where key.hasPrefix("products.") { args[key] = value }
        XCTAssertEqual(try Order(validating: MeasurementEvent(Order.eventName, args: args)), order)
        // Every arg an order writes, but the products', is declared.
        let declared = Set(try XCTUnwrap(spec(Order.eventName)).args.map(\.name))
        XCTAssertEqual(Set(order.args.keys.filter { !$0.hasPrefix("products.") }), declared)
    }

    func testAScreenViewsArgsAreTheCatalogs() throws {
        let view = ScreenView("Feed", screenClass: "FeedViewController")
        let event = MeasurementEvent(ScreenView.eventName, type: ScreenView.eventType, args: view.args)
        XCTAssertEqual(
            Catalog.ScreenViewed(event), Catalog.ScreenViewed(screen: "Feed", screenClass: "FeedViewController"))
        let labelled = Catalog.ScreenViewed(screen: "FeedView", screenClass: nil, label: "Feed")
        XCTAssertEqual(ScreenView(MeasurementEvent(ScreenView.eventName, args: labelled.args)), ScreenView("Feed"))
        XCTAssertEqual(Set(try XCTUnwrap(spec(ScreenView.eventName)).args.map(\.name)), Set(ScreenView.reservedArgs))
    }

    func testTheAliasArgsTheEncodersReadAreTheCatalogs() {
        XCTAssertEqual(
            Catalog.UserAliased(previousID: "a", userID: "b").args, ["previous_id": "a", "user_id": "b"])
    }

    private func spec(_ name: EventName) -> EventSpec? {
        Catalog.catalog.events.first { $0.name == name }
    }
}
