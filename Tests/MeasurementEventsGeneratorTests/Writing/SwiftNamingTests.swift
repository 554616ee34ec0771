import MeasurementEventsGenerator
import XCTest

final class SwiftNamingTests: XCTestCase {
    func testEventNamesBecomeLowerCamelCaseConstants() {
        XCTAssertEqual(SwiftNaming.lowerCamelCase("feed/item_tapped"), "feedItemTapped")
        XCTAssertEqual(
            SwiftNaming.lowerCamelCase("app/permission/photo_library/granted"), "appPermissionPhotoLibraryGranted")
        XCTAssertEqual(SwiftNaming.lowerCamelCase("feed/v2/item_3_shown"), "feedV2Item3Shown")
    }

    func testEventNamesBecomeUpperCamelCaseTypes() {
        XCTAssertEqual(SwiftNaming.upperCamelCase("feed/item_tapped"), "FeedItemTapped")
        XCTAssertEqual(SwiftNaming.upperCamelCase("id/changed"), "IDChanged")
    }

    func testAcronymsAreCapitalizedExceptAsTheFirstWord() {
        XCTAssertEqual(SwiftNaming.lowerCamelCase("item_id"), "itemID")
        XCTAssertEqual(SwiftNaming.lowerCamelCase("image_url"), "imageURL")
        XCTAssertEqual(SwiftNaming.lowerCamelCase("item_ids"), "itemIDs")
        XCTAssertEqual(SwiftNaming.lowerCamelCase("url_opened"), "urlOpened")
        XCTAssertEqual(SwiftNaming.lowerCamelCase("id"), "id")
        XCTAssertEqual(SwiftNaming.lowerCamelCase("app/ui/json_http_uri"), "appUIJSONHTTPURI")
        XCTAssertEqual(
            SwiftNaming.lowerCamelCase("identity_provider"), "identityProvider", "only whole words are acronyms")
    }

    func testMixedCaseArgNamesKeepTheirInnerCapitals() {
        XCTAssertEqual(SwiftNaming.lowerCamelCase("itemId"), "itemId")
        XCTAssertEqual(SwiftNaming.lowerCamelCase("ItemCount"), "itemCount")
    }

    func testKeywordsAreEscapedWithBackticks() {
        XCTAssertEqual(SwiftNaming.escaped("default"), "`default`")
        XCTAssertEqual(SwiftNaming.escaped("in"), "`in`")
        XCTAssertEqual(SwiftNaming.escaped("type"), "type")
        XCTAssertEqual(SwiftNaming.escaped("itemID"), "itemID")
    }

    func testOnlyInoutIsEscapedAsAnArgumentLabel() {
        XCTAssertEqual(SwiftNaming.argumentLabel("inout"), "`inout`")
        XCTAssertEqual(SwiftNaming.argumentLabel("default"), "default")
        XCTAssertEqual(SwiftNaming.argumentLabel("in"), "in")
    }
}
