import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsPlan
import XCTest

/// Each malformed plan is rejected as a whole, with exactly these messages, in file order.
final class MalformedTrackingPlanTests: XCTestCase {
    private func assertRejected(
        _ json: String,
        catalog: TrackingPlan.Catalog? = nil,
        _ expected: [String],
        file: StaticString = #filePath,
        line: UInt = #line
    ) {
        do {
            let accepted = try plan(json, catalog: catalog)
            XCTFail("accepted: \(accepted)", file: file, line: line)
        } catch let error as TrackingPlanError {
            XCTAssertEqual(error.problems.map(\.description), expected, file: file, line: line)
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
        }
    }

    func testSyntaxErrorGivesLineAndColumn() {
        assertRejected(
            """
            {"version": 1,
             "screens": {"Feed": "Feed",}}
            """, [#"plan.json:2:29: $: syntax error: found '}', expected a string key"#])
    }

    func testUnterminatedStringPointsAtItsStart() {
        assertRejected(
            """
            {"version": 1,
             "screens": {"Feed": "Feed}}
            """, [#"plan.json:2:22: $: syntax error: found a string that never ends, expected a closing '"'"#])
    }

    func testTrailingContentIsASyntaxError() {
        assertRejected(
            #"{"version": 1} {}"#,
            [
                "plan.json:1:16: $: syntax error: found '{' after the end of the JSON value, expected the end of the file"
            ])
    }

    func testTopLevelMustBeAnObject() {
        assertRejected(
            #"["feed/*"]"#,
            [
                #"plan.json:1:1: $: found an array, expected an object with "version", "destinations", "screens", "events", "allow", "deny""#
            ])
    }

    func testVersionIsRequiredAndMustBeOne() {
        assertRejected(#"{"screens": {}}"#, [#"plan.json:1:1: $: missing "version", expected "version": 1"#])
        assertRejected(#"{"version": 2}"#, ["plan.json:1:13: $.version: found version 2, expected 1"])
        assertRejected(#"{"version": "1"}"#, ["plan.json:1:13: $.version: found a string, expected the number 1"])
    }

    func testUnknownKeySuggestsTheNearestKnownOne() {
        assertRejected(
            #"{"version": 1, "scren": {}}"#,
            [
                #"plan.json:1:16: $.scren: found the unknown key "scren", expected one of "version", "destinations", "screens", "events", "allow", "deny"; did you mean "screens"?"#
            ])
    }

    func testControlCharactersInKeysAreShownEscaped() {
        assertRejected(
            #"{"version": 1, "bad\u0000key\nhere": 1}"#,
            [
                #"plan.json:1:16: $["bad\u{0}key\nhere"]: found the unknown key "bad\u{0}key\nhere", expected one of "version", "destinations", "screens", "events", "allow", "deny""#
            ])
    }

    func testSectionsOfTheWrongType() {
        assertRejected(
            #"{"version": 1, "screens": ["Feed"], "events": "feed/*", "allow": "feed/*", "destinations": {}}"#,
            [
                "plan.json:1:27: $.screens: found an array, expected an object mapping screen names to labels",
                "plan.json:1:47: $.events: found a string, expected an object mapping event names or wildcards to entries",
                "plan.json:1:66: $.allow: found a string, expected an array of event names or wildcards",
                "plan.json:1:92: $.destinations: found an object, expected an array of destination names",
            ])
    }

    func testEmptyLabelsAndScreenNames() {
        assertRejected(
            #"{"version": 1, "screens": {"Feed": "", "": "Home", "Tab": 3}, "events": {"a/b": {"label": "  "}}}"#,
            [
                "plan.json:1:36: $.screens.Feed: found an empty label, expected a non-empty string",
                #"plan.json:1:40: $.screens[""]: found an empty screen name, expected a non-empty string"#,
                "plan.json:1:59: $.screens.Tab: found the number 3, expected a label string",
                #"plan.json:1:91: $.events["a/b"].label: found an empty label, expected a non-empty string"#,
            ])
    }

    func testDuplicateScreensAndEventsAreRejected() {
        assertRejected(
            """
            {"version": 1,
             "screens": {"Feed": "Feed", "Feed": "Feed again"},
             "events": {"feed/*": {"label": "A"}, "feed/*": {"label": "B"}}}
            """,
            [
                #"plan.json:2:30: $.screens.Feed: found the key "Feed" a second time, expected each key once (the first is at line 2, column 14)"#,
                #"plan.json:3:39: $.events["feed/*"]: found the key "feed/*" a second time, expected each key once (the first is at line 3, column 13)"#,
            ])
    }

    func testDuplicateTopLevelKeyIsRejectedNotOverwritten() {
        assertRejected(
            #"{"version": 1, "allow": ["a/b"], "allow": ["c/d"]}"#,
            [
                #"plan.json:1:34: $.allow: found the key "allow" a second time, expected each key once (the first is at line 1, column 16)"#
            ])
    }

    func testInvalidPatterns() {
        assertRejected(
            #"{"version": 1, "events": {"feed/*/x": {"label": "X"}}, "deny": ["feed//a", 7]}"#,
            [
                #"plan.json:1:27: $.events["feed/*/x"]: found invalid event pattern "feed/*/x": a wildcard must be "*" alone or a final "/*", as in "feed/*", expected an event name or a wildcard ("feed/*", "*")"#,
                #"plan.json:1:65: $.deny[0]: found invalid event pattern "feed//a": the name has an empty component (a leading, trailing or double slash), expected an event name or a wildcard ("feed/*", "*")"#,
                "plan.json:1:76: $.deny[1]: found the number 7, expected an event name or wildcard",
            ])
    }

    func testEventEntryNeedsALabelAndKnowsItsKeys() {
        assertRejected(
            #"{"version": 1, "events": {"a/b": {"lable": "A"}, "c/d": "C"}}"#,
            [
                #"plan.json:1:34: $.events["a/b"]: missing "label", expected a non-empty label string"#,
                #"plan.json:1:35: $.events["a/b"].lable: found the unknown key "lable", expected one of "label", "destinations"; did you mean "label"?"#,
                #"plan.json:1:57: $.events["c/d"]: found a string, expected an object with "label" and optional "destinations""#,
            ])
    }

    func testUnknownDestinationsAreRejected() {
        assertRejected(
            """
            {"version": 1, "destinations": ["amplitude", "console"],
             "events": {"a/b": {"label": "A", "destinations": ["amplitud", "console", "console"]},
                        "c/d": {"label": "C", "destinations": []}}}
            """,
            [
                #"plan.json:2:52: $.events["a/b"].destinations[0]: found the undeclared destination "amplitud", expected one of "amplitude", "console"; did you mean "amplitude"?"#,
                #"plan.json:2:75: $.events["a/b"].destinations[2]: found "console" a second time, expected each destination once (the first is at line 2, column 64)"#,
                #"plan.json:3:51: $.events["c/d"].destinations: found an empty array, expected at least one destination (leave "destinations" out to send to all)"#,
            ])
        assertRejected(
            #"{"version": 1, "events": {"a/b": {"label": "A", "destinations": ["x"]}}}"#,
            [
                #"plan.json:1:66: $.events["a/b"].destinations[0]: found the undeclared destination "x", expected a destination declared in "destinations" (none are)"#
            ])
    }

    func testDuplicateAndContradictoryListEntries() {
        assertRejected(
            #"{"version": 1, "deny": ["feed/x"], "allow": ["feed/*", "feed/x", "feed/*"]}"#,
            [
                #"plan.json:1:25: $.deny[0]: found "feed/x" in both "allow" (at line 1, column 56) and "deny", expected it in one of them"#,
                #"plan.json:1:66: $.allow[2]: found "feed/*" a second time, expected each pattern once (the first is at line 1, column 46)"#,
            ])
    }

    func testUndeclaredEventsAreErrorsInStrictMode() {
        assertRejected(
            #"{"version": 1, "events": {"feed/item_taped": {"label": "T"}, "promo/*": {"label": "P"}}}"#,
            catalog: exampleCatalog,
            [
                #"plan.json:1:27: $.events["feed/item_taped"]: found the event "feed/item_taped", which no module's catalog declares, expected an event declared in a catalog (Events/<Module>.json); did you mean "feed/item_tapped"?"#,
                #"plan.json:1:62: $.events["promo/*"]: found the wildcard "promo/*", which matches no event a module's catalog declares, expected a wildcard that matches at least one declared event"#,
            ])
    }

    func testEveryProblemIsListedAtOnceInFileOrder() {
        assertRejected(
            """
            {"version": 3,
             "screens": {"Feed": ""},
             "colour": "blue",
             "allow": ["a//b"]}
            """,
            [
                "plan.json:1:13: $.version: found version 3, expected 1",
                "plan.json:2:22: $.screens.Feed: found an empty label, expected a non-empty string",
                #"plan.json:3:2: $.colour: found the unknown key "colour", expected one of "version", "destinations", "screens", "events", "allow", "deny""#,
                #"plan.json:4:12: $.allow[0]: found invalid event pattern "a//b": the name has an empty component (a leading, trailing or double slash), expected an event name or a wildcard ("feed/*", "*")"#,
            ])
    }

    func testDeepNestingIsRejectedWithoutCrashing() {
        let json =
            #"{"version": 1, "x": "# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
            + "}"
        assertRejected(
            json, ["plan.json:1:84: $: syntax error: found more than 64 nested arrays or objects, expected at most 64"])
    }

    func testErrorDescriptionListsEveryProblem() {
        XCTAssertThrowsError(try plan(#"{"version": 2, "x": 1}"#)) { error in
            XCTAssertEqual(
                "\(error)",
                """
                plan.json was rejected with 2 errors:
                  plan.json:1:13: $.version: found version 2, expected 1
                  plan.json:1:16: $.x: found the unknown key "x", expected one of "version", "destinations", "screens", "events", "allow", "deny"
                """)
        }
    }
}
