import MeasurementEventsGenerator
import XCTest

@testable import MeasurementEventsGenerator

/// The tracking plan's rules in catalogs (`values`, `minimum`, `maximum`, `pattern`, `maxLength`,
/// `deprecated`, `owner`, `since`): read when valid, and each rule that no value could satisfy
/// reported with its file, line, column and JSON path.
final class CatalogConstraintTests: XCTestCase {
    /// Messages for a catalog with one event `feed/item_tapped` whose one arg `x` is `argBody`.
    private func messages(arg argBody: String) -> [String] {
        let text =
            #"{"module": "Feed", "events": [{"name": "feed/item_tapped", "description": "Tapped.", "args": {"x": "#
            + argBody + "}}]}"
        return CatalogReader.read(path: "Events/Feed.json", bytes: Array(text.utf8)).diagnostics.map(\.description)
    }

    private func readArg(_ argBody: String) throws -> CatalogArg {
        let text =
            #"{"module": "Feed", "events": [{"name": "feed/item_tapped", "description": "Tapped.", "args": {"x": "#
            + argBody + "}}]}"
        let result = CatalogReader.read(path: "Events/Feed.json", bytes: Array(text.utf8))
        XCTAssertEqual(result.diagnostics.map(\.description), [])
        return try XCTUnwrap(result.catalog?.events.first?.args.first)
    }

    // MARK: Valid rules are read

    func testValidRulesAreReadWithTheirTypes() throws {
        let position = try readArg(#"{"type": "int", "description": "d", "minimum": 0, "maximum": 500}"#)
        XCTAssertEqual(position.constraints.minimum, 0)
        XCTAssertEqual(position.constraints.maximum, 500)
        let query = try readArg(#"{"type": "string", "description": "d", "pattern": "^[a-z]+$", "maxLength": 8}"#)
        XCTAssertEqual(query.constraints.pattern, "^[a-z]+$")
        XCTAssertEqual(query.constraints.maxLength, 8)
        let source = try readArg(#"{"type": "string", "description": "d", "values": ["feed", "search"]}"#)
        XCTAssertEqual(source.constraints.allowedValues, [.string("feed"), .string("search")])
        let size = try readArg(#"{"type": "int", "description": "d", "values": [1, -2]}"#)
        XCTAssertEqual(size.constraints.allowedValues, [.int(1), .int(-2)])
    }

    func testACatalogWithoutRulesReadsAsBefore() throws {
        let arg = try readArg(#"{"type": "string", "description": "d"}"#)
        XCTAssertTrue(arg.constraints.isEmpty)
    }

    func testDeprecationOwnerAndSinceAreRead() throws {
        let text = """
            {"module": "Feed", "events": [
              {"name": "feed/opened", "description": "Opened.", "owner": "feed-team", "since": "4.2"},
              {"name": "feed/shown", "description": "Shown.", "deprecated": {"replacement": "feed/opened"}},
              {"name": "feed/old", "description": "Old.", "deprecated": true},
              {"name": "feed/kept", "description": "Kept.", "deprecated": false}]}
            """
        let set = CatalogSet.validate(sources: [("Events/Feed.json", Array(text.utf8))]) { _ in true }
        XCTAssertEqual(set.diagnostics.map(\.description), [])
        let events = try XCTUnwrap(set.catalogs.first?.events)
        XCTAssertEqual(events[0].owner, "feed-team")
        XCTAssertEqual(events[0].since, "4.2")
        XCTAssertNil(events[0].deprecation)
        XCTAssertEqual(events[1].deprecation?.replacement, "feed/opened")
        XCTAssertNil(events[1].deprecation?.replacementModule, "same catalog: the plain name")
        XCTAssertNotNil(events[2].deprecation)
        XCTAssertNil(events[2].deprecation?.replacement)
        XCTAssertNil(events[3].deprecation)
    }

    func testAReplacementInAnotherCatalogIsQualifiedByItsModule() throws {
        let feed =
            #"{"module": "Feed", "events": [{"name": "feed/old", "description": "Old.", "deprecated": {"replacement": "home/opened"}}]}"#
        let home = #"{"module": "Home", "events": [{"name": "home/opened", "description": "Opened."}]}"#
        let set = CatalogSet.validate(
            sources: [("Events/Feed.json", Array(feed.utf8)), ("Events/Home.json", Array(home.utf8))]
        ) { _ in true }
        XCTAssertEqual(set.diagnostics.map(\.description), [])
        let deprecation = try XCTUnwrap(set.catalogs.first { $0.module == "Feed" }?.events.first?.deprecation)
        XCTAssertEqual(deprecation.replacementModule, "Home")
        XCTAssertTrue(
            EventsFileWriter.source(for: set.catalogs[0]).contains(#"renamed: "HomeEvents.homeOpened""#))
    }

    // MARK: Rules no value can satisfy

    func testMinimumAboveMaximumIsAnError() {
        XCTAssertEqual(
            messages(arg: #"{"type": "int", "description": "d", "minimum": 10, "maximum": 2}"#),
            [
                #"Events/Feed.json:1:162: error: events[0].args.x.maximum: found a maximum (2) below the minimum, expected a maximum at least the minimum (10), so that a value can satisfy both"#
            ])
    }

    func testValuesOfTheWrongTypeAreErrorsAtEachValue() {
        XCTAssertEqual(
            messages(arg: #"{"type": "int", "description": "d", "values": [1, "two", 2.5]}"#),
            [
                #"Events/Feed.json:1:150: error: events[0].args.x.values[1]: found "two", expected a whole number, the arg's type (int)"#,
                #"Events/Feed.json:1:157: error: events[0].args.x.values[2]: found a number (2.5), expected a whole number from -2147483648 to 2147483647 (Int is 32 bits on Apple Watch)"#,
            ])
        XCTAssertEqual(
            messages(arg: #"{"type": "string", "description": "d", "values": ["a", 3]}"#),
            [
                #"Events/Feed.json:1:155: error: events[0].args.x.values[1]: found a number (3), expected a string, the arg's type (string)"#
            ])
    }

    func testAnInvalidPatternIsAnError() {
        XCTAssertEqual(
            messages(arg: #"{"type": "string", "description": "d", "pattern": "([a-z"}"#),
            [
                #"Events/Feed.json:1:150: error: events[0].args.x.pattern: found "([a-z", expected a regular expression that NSRegularExpression accepts"#
            ])
    }

    func testValuesOnABoolAreAnError() {
        XCTAssertEqual(
            messages(arg: #"{"type": "bool", "description": "d", "values": [true]}"#),
            [
                #"Events/Feed.json:1:147: error: events[0].args.x.values: found "values" on a bool arg, expected "values" only on string and int args"#
            ])
    }

    func testRulesOnTheWrongTypeOfArgAreErrors() {
        XCTAssertEqual(
            messages(arg: #"{"type": "string", "description": "d", "minimum": 1, "maxLength": 3}"#),
            [
                #"Events/Feed.json:1:150: error: events[0].args.x.minimum: found "minimum" on a string arg, expected "minimum" only on int and double args"#
            ])
        XCTAssertEqual(
            messages(arg: #"{"type": "int", "description": "d", "pattern": "^a$", "maxLength": 3}"#),
            [
                #"Events/Feed.json:1:147: error: events[0].args.x.pattern: found "pattern" on an int arg, expected "pattern" only on string args"#,
                #"Events/Feed.json:1:167: error: events[0].args.x.maxLength: found "maxLength" on an int arg, expected "maxLength" only on string args"#,
            ])
    }

    func testAFractionalBoundOfAnIntAndANegativeLengthAreErrors() {
        XCTAssertEqual(
            messages(arg: #"{"type": "int", "description": "d", "minimum": 0.5}"#),
            [
                #"Events/Feed.json:1:147: error: events[0].args.x.minimum: found a number (0.5), expected a whole number (at most 2^53 in magnitude, so that it stays exact)"#
            ])
        XCTAssertEqual(
            messages(arg: #"{"type": "string", "description": "d", "maxLength": -1}"#),
            [
                #"Events/Feed.json:1:152: error: events[0].args.x.maxLength: found -1, expected a length from 0 to 2147483647"#
            ])
    }

    func testAValueThatBreaksTheOtherRulesIsAnError() {
        XCTAssertEqual(
            messages(arg: #"{"type": "int", "description": "d", "maximum": 3, "values": [1, 9]}"#),
            [
                #"Events/Feed.json:1:164: error: events[0].args.x.values[1]: found 9, which is above the maximum, expected allowed values that satisfy the arg's other rules"#
            ])
        XCTAssertEqual(
            messages(arg: #"{"type": "string", "description": "d", "pattern": "^[a-z]+$", "values": ["ok", "NO"]}"#),
            [
                #"Events/Feed.json:1:179: error: events[0].args.x.values[1]: found "NO", which does not match the pattern, expected allowed values that satisfy the arg's other rules"#
            ])
    }

    func testDuplicateValuesAndValuesWithTheSameCaseNameAreErrors() {
        XCTAssertEqual(
            messages(
                arg: #"{"type": "string", "description": "d", "values": ["home-feed", "home_feed", "home-feed", "--"]}"#
            ),
            [
                #"Events/Feed.json:1:163: error: events[0].args.x.values[1]: found "home_feed", whose Swift case homeFeed is also "home-feed"'s, expected values that give distinct Swift case names"#,
                #"Events/Feed.json:1:176: error: events[0].args.x.values[2]: found "home-feed" again, expected each value once"#,
                #"Events/Feed.json:1:189: error: events[0].args.x.values[3]: found "--", expected a value with a letter or a digit, which names its Swift case"#,
            ])
    }

    func testEmptyValuesAreAnError() {
        XCTAssertEqual(
            messages(arg: #"{"type": "string", "description": "d", "values": []}"#),
            [
                #"Events/Feed.json:1:149: error: events[0].args.x.values: found an array, expected a non-empty array of allowed values (strings)"#
            ])
    }

    func testAReplacementThatIsNotPlannedIsAnError() {
        let text =
            #"{"module": "Feed", "events": [{"name": "feed/old", "description": "Old.", "deprecated": {"replacement": "feed/new"}}, {"name": "feed/gone", "description": "Gone.", "deprecated": {"replacement": "feed/gone"}}, {"name": "feed/odd", "description": "Odd.", "deprecated": "soon"}]}"#
        let set = CatalogSet.validate(sources: [("Events/Feed.json", Array(text.utf8))]) { _ in true }
        XCTAssertEqual(
            set.diagnostics.map(\.description),
            [
                #"Events/Feed.json:1:105: error: events[0].deprecated.replacement: found "feed/new", which no catalog declares, expected the name of another planned event"#,
                #"Events/Feed.json:1:195: error: events[1].deprecated.replacement: found the event itself, expected the name of another planned event"#,
                #"Events/Feed.json:1:268: error: events[2].deprecated: found "soon", expected true, false, or an object like {"replacement": "feed/item_opened"}"#,
            ])
    }

    func testAnEmptyOwnerIsAnError() {
        let text =
            #"{"module": "Feed", "events": [{"name": "feed/old", "description": "Old.", "owner": " ", "since": 4}]}"#
        XCTAssertEqual(
            CatalogReader.read(path: "Events/Feed.json", bytes: Array(text.utf8)).diagnostics.map(\.description),
            [
                #"Events/Feed.json:1:84: error: events[0].owner: found " ", expected the name of the team that owns the event"#,
                #"Events/Feed.json:1:98: error: events[0].since: found a number (4), expected a string: the app version that introduced the event, like "4.2""#,
            ])
    }
}
