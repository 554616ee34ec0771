import DemoFeed
import DemoSettings
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsGeneratorGolden
import XCTest

/// The generated code at work: the demo's `DemoFeedEvents` (generated from `Events/DemoFeed.json`)
/// and the compiled golden files.
final class GeneratedEventsTests: XCTestCase {
    /// Collects every measurement event posted to `center` while `body` runs.
    private func received(on center: NotificationCenter, _ body: () -> Void) throws -> [MeasurementEvent] {
        let events = LockedValue<[Result<MeasurementEvent, MalformedEventError>]>([])
        let token = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { note in
            let event = Result { () throws(MalformedEventError) in try MeasurementEvent(notification: note) }
            events.withLock { $0.append(event) }
        }
        body()
        center.removeObserver(token)
        return try events.withLock { $0 }.map { try $0.get() }
    }

    func testPostingThroughAGeneratedHelperRecoversTheTypedEvent() throws {
        let center = NotificationCenter()
        let events = try received(on: center) {
            DemoFeedEvents.postFeedItemTapped(itemID: "42", position: 3, to: center)
        }
        let event = try XCTUnwrap(events.first)
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(event.name, DemoFeedEvents.feedItemTapped)
        XCTAssertEqual(event.name, "feed/item_tapped")
        XCTAssertEqual(event.type, .click)
        XCTAssertEqual(event.args, ["item_id": "42", "position": 3])
        XCTAssertEqual(DemoFeedEvents.FeedItemTapped(event), DemoFeedEvents.FeedItemTapped(itemID: "42", position: 3))
        XCTAssertNil(DemoFeedEvents.FeedItemShared(event), "another event's typed form does not match")
    }

    func testTheDemoScreensPostExactlyTheirCatalogEvents() throws {
        let center = NotificationCenter()
        let events = try received(on: center) {
            FeedScreen(center: center).simulateVisit()
            SettingsScreen(center: center).simulateVisit()
        }
        XCTAssertEqual(events.map(\.name), DemoFeedEvents.allNames + DemoSettingsEvents.allNames)
        XCTAssertEqual(DemoSettingsEvents.AppPermissionPhotoLibraryGranted(events[6])?.prompted, true)
        XCTAssertEqual(DemoFeedEvents.FeedOpened(events[0])?.source, "launch")
    }

    func testRecoveringRejectsMissingOrMistypedArgsAndAcceptsOmittedOptionals() {
        typealias Viewed = ShopEvents.ShopProductViewed
        XCTAssertEqual(
            Viewed(MeasurementEvent("shop/product_viewed", args: ["product_id": "p1", "price": 3])),
            Viewed(productID: "p1", price: 3.0), "an int is accepted for a double; optionals may be absent")
        XCTAssertNil(Viewed(MeasurementEvent("shop/product_viewed", args: ["price": 3.5])), "missing required arg")
        XCTAssertNil(
            Viewed(MeasurementEvent("shop/product_viewed", args: ["product_id": 1, "price": 3.5])),
            "mistyped required arg")
        XCTAssertNil(
            Viewed(MeasurementEvent("shop/product_viewed", args: ["product_id": "p1", "price": 3.5, "position": "1"])),
            "mistyped optional arg")
    }

    func testTypedEventCarriesItsCatalogTypeCategoryAndOptionalArgs() throws {
        let center = NotificationCenter()
        let events = try received(on: center) {
            ShopEvents.postShopProductViewed(productID: "p1", imageURL: "https://x/p1.png", price: 9.5, to: center)
            ShopEvents.postShopPaymentRedirected(default: true, in: "eu", center: "north", type: "card", to: center)
        }
        XCTAssertEqual(events.map(\.type), [.impression, .redirect])
        XCTAssertEqual(events[0].category, "catalog")
        XCTAssertEqual(events[0].args, ["product_id": "p1", "image_url": "https://x/p1.png", "price": 9.5])
        XCTAssertEqual(ShopEvents.ShopPaymentRedirected(events[1])?.center, "north")
    }

    func testModuleTablesListNamesAndPersonalData() {
        XCTAssertEqual(ShopEvents.allNames.count, 7)
        XCTAssertEqual(
            ShopEvents.personalDataArgs,
            ["shop/checkout/completed": ["email", "phone"], "shop/legacy_banner_shown": ["email"]])
        XCTAssertEqual(EmptyEvents.allNames, [])
        XCTAssertEqual(DemoFeedEvents.personalDataArgs, [:])
    }

    func testAllNamesMakeAnAllowListForAWholeModule() {
        let patterns = DemoFeedEvents.allNames.map(EventPattern.init)
        XCTAssertTrue(patterns.contains { $0.matches("feed/item_tapped") })
        XCTAssertFalse(patterns.contains { $0.matches("settings/opened") })
    }

    func testTheDocumentedAllowListExpressionTypeChecks() {
        // The generated `allNames` doc comment shows this expression: it must compile and match.
        let allowList: [EventPattern] = ["settings/*"] + DemoFeedEvents.allNames.map(EventPattern.init)
        XCTAssertTrue(EventFilter(allow: allowList).allows("feed/item_tapped"))
        XCTAssertTrue(EventFilter(allow: allowList).allows("settings/opened"))
    }

    func testTheTypedFormIsRecoveredFromANotification() {
        let note = Notification(
            name: .measurementEvent, object: nil,
            userInfo: MeasurementEvent.userInfo(name: "feed/opened", type: .activity, args: ["source": "tab"]))
        XCTAssertEqual(DemoFeedEvents.FeedOpened(notification: note)?.source, "tab")
        XCTAssertNil(
            DemoFeedEvents.FeedOpened(notification: Notification(name: .measurementEvent)),
            "malformed: nil, not a crash")
    }

    func testAnArgWithValuesIsPostedAsItsRawValue() throws {
        let center = NotificationCenter()
        let events = try received(on: center) {
            ShopEvents.postShopProductViewed(productID: "P-1", price: 1, list: .homeFeed, to: center)
            ShopEvents.postShopCartItemAdded(productID: "P-1", quantity: ._minus1, gift: false, to: center)
        }
        XCTAssertEqual(events[0].args["list"], "home-feed")
        XCTAssertEqual(events[1].args["quantity"], -1)
        XCTAssertEqual(ShopEvents.ShopProductViewed(events[0])?.list, .homeFeed)
        XCTAssertEqual(ShopEvents.ShopCartItemAdded(events[1])?.quantity, ._minus1)
        XCTAssertEqual(
            ShopEvents.ShopProductViewed.List.allCases.map(\.rawValue), ["search", "home-feed", "default", "2for1"])
    }

    func testTheTypedFormRejectsAValueOutsideTheValues() {
        let event = MeasurementEvent(
            "shop/cart/item_added", args: ["product_id": "P-1", "quantity": 3, "gift": false])
        XCTAssertNil(ShopEvents.ShopCartItemAdded(event), "3 is not one of the planned quantities")
    }
}
