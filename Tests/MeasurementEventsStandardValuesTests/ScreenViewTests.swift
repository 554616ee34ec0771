import MeasurementEvents
import XCTest

@testable import MeasurementEventsStandardValues

final class ScreenViewTests: XCTestCase {
    func testArgsRoundTripWithTheirProperties() {
        let view = ScreenView("Feed", screenClass: "FeedViewController", properties: ["tab": "home"])
        XCTAssertEqual(view.args, ["screen": "Feed", "screen_class": "FeedViewController", "tab": "home"])
        XCTAssertEqual(ScreenView(MeasurementEvent("screen/viewed", args: view.args)), view)
    }

    func testThePlansLabelNamesTheScreen() {
        let event = MeasurementEvent("screen/viewed", args: ["screen": "FeedView", "label": "Feed", "tab": "home"])
        XCTAssertEqual(ScreenView(event), ScreenView("Feed", properties: ["tab": "home"]))
    }

    func testPropertiesCannotOverrideTheEventsOwnArgs() {
        let view = ScreenView("Feed", properties: ["screen": "Other", "label": "Other", "tab": "home"])
        XCTAssertEqual(view.args, ["screen": "Feed", "tab": "home"])
    }

    func testAnotherEventOrAMistypedArgIsNotAScreenView() {
        XCTAssertNil(ScreenView(MeasurementEvent("screen/closed", args: ["screen": "Feed"])))
        XCTAssertNil(ScreenView(MeasurementEvent("screen/viewed", args: ["screen": 1])))
        XCTAssertNil(ScreenView(MeasurementEvent("screen/viewed", args: ["screen": "Feed", "screen_class": 2])))
        XCTAssertNil(ScreenView(MeasurementEvent("screen/viewed", args: ["screen": "Feed", "label": true])))
        XCTAssertNil(ScreenView(MeasurementEvent("screen/viewed", args: [:])))
    }
}
