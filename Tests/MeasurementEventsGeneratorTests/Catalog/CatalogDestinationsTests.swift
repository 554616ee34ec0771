import MeasurementEvents
import XCTest

@testable import MeasurementEventsGenerator

/// An event's `"destinations"`: the names of the only destinations it may be sent to, read in
/// file order into the catalog and its `EventSpec` when valid, and every bad value reported with
/// its file, line, column and JSON path.
final class CatalogDestinationsTests: XCTestCase {
    /// The catalog text of one event `feed/opened` whose `"destinations"` is `value`; the value
    /// starts at column 97.
    private func catalog(destinations value: String) -> String {
        #"{"module": "Feed", "events": [{"name": "feed/opened", "description": "Opened.", "destinations": "#
            + value + "}]}"
    }

    private func messages(destinations value: String) -> [String] {
        let text = catalog(destinations: value)
        return CatalogReader.read(path: "Events/Feed.json", bytes: Array(text.utf8)).diagnostics.map(\.description)
    }

    private func readEvent(destinations value: String) throws -> CatalogEvent {
        let result = CatalogReader.read(path: "Events/Feed.json", bytes: Array(catalog(destinations: value).utf8))
        XCTAssertEqual(result.diagnostics.map(\.description), [])
        return try XCTUnwrap(result.catalog?.events.first)
    }

    // MARK: Valid destinations are read

    func testDestinationsAreReadInFileOrder() throws {
        let event = try readEvent(destinations: #"["segment_eu", "amplitude", "otlp-collector", "ga4"]"#)
        XCTAssertEqual(event.destinations, ["segment_eu", "amplitude", "otlp-collector", "ga4"])
    }

    func testAnEventWithoutDestinationsIsNotRestricted() throws {
        let text = #"{"module": "Feed", "events": [{"name": "feed/opened", "description": "Opened."}]}"#
        let result = CatalogReader.read(path: "Events/Feed.json", bytes: Array(text.utf8))
        XCTAssertEqual(result.diagnostics.map(\.description), [])
        let catalog = try XCTUnwrap(result.catalog)
        XCTAssertNil(catalog.events.first?.destinations)
        XCTAssertNil(catalog.eventCatalog.events.first?.destinations)
    }

    func testTheDestinationsReachTheEventSpec() throws {
        let event = try readEvent(destinations: #"["amplitude", "debug"]"#)
        let catalog = Catalog(path: "Events/Feed.json", module: "Feed", events: [event])
        XCTAssertEqual(catalog.eventCatalog.events.first?.destinations, ["amplitude", "debug"])
    }

    func testANameOfSixtyFourCharactersIsValid() throws {
        let name = String(repeating: "a", count: 64)
        XCTAssertEqual(try readEvent(destinations: "[\"\(name)\"]").destinations, [name])
    }

    // MARK: Each kind of bad value

    func testAValueThatIsNotAnArrayIsAnError() {
        XCTAssertEqual(
            messages(destinations: #""amplitude""#),
            [
                #"Events/Feed.json:1:97: error: events[0].destinations: found "amplitude", expected a non-empty array of destination names, like ["amplitude", "debug"]"#
            ])
        XCTAssertEqual(
            messages(destinations: #"{"amplitude": true}"#),
            [
                #"Events/Feed.json:1:97: error: events[0].destinations: found an object, expected a non-empty array of destination names, like ["amplitude", "debug"]"#
            ])
    }

    func testAnEmptyArrayIsAnError() {
        XCTAssertEqual(
            messages(destinations: "[]"),
            [
                #"Events/Feed.json:1:97: error: events[0].destinations: found an empty array, expected at least one destination name, like ["amplitude", "debug"] (leave "destinations" out to send the event to every destination)"#
            ])
    }

    func testAnElementThatIsNotAStringIsAnErrorAtThatElement() {
        XCTAssertEqual(
            messages(destinations: #"["amplitude", 3, null]"#),
            [
                #"Events/Feed.json:1:111: error: events[0].destinations[1]: found a number (3), expected a string: a destination name like "amplitude""#,
                #"Events/Feed.json:1:114: error: events[0].destinations[2]: found null, expected a string: a destination name like "amplitude""#,
            ])
    }

    func testAnEmptyNameIsAnError() {
        XCTAssertEqual(
            messages(destinations: #"["", " "]"#),
            [
                #"Events/Feed.json:1:98: error: events[0].destinations[0]: found "", expected a destination name: 1 to 64 lowercase letters, digits, "-" and "_" (^[a-z0-9_-]{1,64}$), like "amplitude""#,
                #"Events/Feed.json:1:102: error: events[0].destinations[1]: found " ", expected a destination name: 1 to 64 lowercase letters, digits, "-" and "_" (^[a-z0-9_-]{1,64}$), like "amplitude""#,
            ])
    }

    func testAnInvalidNameIsAnErrorAndAnUppercaseOneSuggestsItsLowercase() {
        let long = String(repeating: "a", count: 65)
        let quotedLong = "\"" + String(repeating: "a", count: 60) + "…\""
        XCTAssertEqual(
            messages(destinations: #"["Amplitude", "google analytics", ""# + long + #"", "ga4!"]"#),
            [
                #"Events/Feed.json:1:98: error: events[0].destinations[0]: found "Amplitude", expected a destination name: 1 to 64 lowercase letters, digits, "-" and "_" (^[a-z0-9_-]{1,64}$), like "amplitude" (did you mean "amplitude"?)"#,
                #"Events/Feed.json:1:111: error: events[0].destinations[1]: found "google analytics", expected a destination name: 1 to 64 lowercase letters, digits, "-" and "_" (^[a-z0-9_-]{1,64}$), like "amplitude""#,
                #"Events/Feed.json:1:131: error: events[0].destinations[2]: found "# + quotedLong
                    + #", expected a destination name: 1 to 64 lowercase letters, digits, "-" and "_" (^[a-z0-9_-]{1,64}$), like "amplitude""#,
                #"Events/Feed.json:1:200: error: events[0].destinations[3]: found "ga4!", expected a destination name: 1 to 64 lowercase letters, digits, "-" and "_" (^[a-z0-9_-]{1,64}$), like "amplitude""#,
            ])
    }

    func testADuplicateNameIsAnErrorAtEachRepeatNamingTheFirst() {
        XCTAssertEqual(
            messages(destinations: #"["debug", "amplitude", "debug", "debug"]"#),
            [
                #"Events/Feed.json:1:120: error: events[0].destinations[2]: found "debug" again, expected each destination once (the first is at 1:98)"#,
                #"Events/Feed.json:1:129: error: events[0].destinations[3]: found "debug" again, expected each destination once (the first is at 1:98)"#,
            ])
    }

    func testTheNameRule() {
        for valid in ["amplitude", "ga4", "segment", "otlp", "debug", "segment_eu", "otlp-collector", "4", "-", "_x"] {
            XCTAssertTrue(CatalogReader.isDestinationName(valid), valid)
        }
        for invalid in [
            "", "Amplitude", "GA4", "google analytics", "ga4!", "amplitude/eu", "é", String(repeating: "a", count: 65),
        ] {
            XCTAssertFalse(CatalogReader.isDestinationName(invalid), invalid)
        }
    }
}
