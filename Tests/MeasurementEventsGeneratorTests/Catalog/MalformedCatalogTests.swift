import Foundation
import MeasurementEventsGenerator
import XCTest

/// Every rule of the catalog format, broken once: the exact message, and no file touched.
final class MalformedCatalogTests: XCTestCase {
    /// A valid catalog whose generated file exists before each malformed run, to prove that
    /// nothing — not even a valid module's file — is written when any catalog is invalid.
    private static let validCatalog = """
        {"module": "Valid", "events": [{"name": "valid/opened", "description": "Opened."}]}
        """

    /// Writes `catalogs` next to the valid one, runs generate, check and plan, and expects
    /// exactly `messages`, with every file left as it was.
    private func assertRejected(
        _ catalogs: [String: String], modules: [String] = [], messages expected: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let package = try TemporaryPackage(modules: ["Valid"] + modules)
        defer { package.remove() }
        try package.write("Events/Valid.json", Self.validCatalog)
        let generator = PackageGenerator(packageRoot: package.root)
        _ = try generator.generate()
        try package.write("Sources/Valid/events_Valid.swift", "// hand-edited, stale\n")
        for (path, text) in catalogs { try package.write(path, text) }
        let before = try package.snapshot()

        for (operation, run) in [
            ("generate", { _ = try generator.generate() }), ("check", { _ = try generator.check() }),
            ("plan", { _ = try generator.plan(format: .json) }),
        ] as [(String, () throws -> Void)] {
            do {
                try run()
                XCTFail("\(operation) accepted invalid catalogs", file: file, line: line)
            } catch {
                guard case .invalidCatalogs(let diagnostics)? = error as? GeneratorFailure else {
                    XCTFail("\(operation): \(error)", file: file, line: line)
                    continue
                }
                XCTAssertEqual(diagnostics.map(\.description), expected, operation, file: file, line: line)
            }
        }
        XCTAssertEqual(try package.snapshot(), before, "a file was touched", file: file, line: line)
    }

    private func event(_ body: String) -> String {
        """
        {
          "module": "Feed",
          "events": [
            \(body)
          ]
        }
        """
    }

    func testUnknownArgTypeNamesThePathTheValueAndTheTypes() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(
                    #"{"name": "feed/item_tapped", "description": "Tapped.", "args": {"position": {"type": "integer", "description": "Where."}}}"#
                )
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:4:90: error: events[0].args.position.type: found "integer", expected one of "string", "int", "double", "bool""#
            ])
    }

    func testUnknownEventTypeSuggestsTheClosestType() throws {
        try assertRejected(
            ["Events/Feed.json": event(#"{"name": "feed/item_tapped", "description": "Tapped.", "type": "clik"}"#)],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:4:68: error: events[0].type: found "clik", expected one of "activity", "click", "impression", "redirect", "user_action" (did you mean "click"?)"#
            ])
    }

    func testDuplicateEventNameWithinACatalogNamesBothPlaces() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(
                    #"""
                    {"name": "feed/opened", "description": "Opened."},
                        {"name": "feed/opened", "description": "Opened again."}
                    """#)
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:5:14: error: events[1].name: found "feed/opened" again, expected each event declared once (it is first declared at Events/Feed.json:4:14)"#
            ])
    }

    func testDuplicateEventNameAcrossCatalogsNamesBothFiles() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(#"{"name": "app/opened", "description": "Opened."}"#),
                "Events/Settings.json":
                    #"{"module": "Settings", "events": [{"name": "app/opened", "description": "Also opened."}]}"#,
            ],
            modules: ["Feed", "Settings"],
            messages: [
                #"Events/Settings.json:1:44: error: events[0].name: found "app/opened", which Events/Feed.json:4:14 (events[0].name) declares too, expected each event declared in one catalog only"#
            ])
    }

    func testEmptyAndNonNamespacedNamesAreAllReported() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(
                    #"""
                    {"name": "", "description": "Empty."},
                        {"name": "opened", "description": "One part."},
                        {"name": "Feed/ItemTapped", "description": "Upper case."},
                        {"name": "feed//tapped", "description": "Empty part."}
                    """#)
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:4:14: error: events[0].name: found "", expected a lowercase slash-namespaced name like "feed/item_tapped" (^[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)+$, at most 256 bytes)"#,
                #"Events/Feed.json:5:14: error: events[1].name: found "opened", expected a lowercase slash-namespaced name like "feed/item_tapped" (^[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)+$, at most 256 bytes)"#,
                #"Events/Feed.json:6:14: error: events[2].name: found "Feed/ItemTapped", expected a lowercase slash-namespaced name like "feed/item_tapped" (^[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)+$, at most 256 bytes)"#,
                #"Events/Feed.json:7:14: error: events[3].name: found "feed//tapped", expected a lowercase slash-namespaced name like "feed/item_tapped" (^[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)+$, at most 256 bytes)"#,
            ])
    }

    func testArgNameThatCannotBecomeASwiftIdentifier() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(
                    #"{"name": "feed/item_tapped", "description": "Tapped.", "args": {"item-id": {"type": "string", "description": "Id."}, "2nd": {"type": "int", "description": "Second."}}}"#
                )
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:4:69: error: events[0].args["item-id"]: found the arg name "item-id", expected letters, digits and underscores starting with a letter (^[A-Za-z][A-Za-z0-9_]*$), so that it can become a Swift identifier"#,
                #"Events/Feed.json:4:122: error: events[0].args["2nd"]: found the arg name "2nd", expected letters, digits and underscores starting with a letter (^[A-Za-z][A-Za-z0-9_]*$), so that it can become a Swift identifier"#,
            ])
    }

    func testSyntaxErrorHasLineAndColumn() throws {
        try assertRejected(
            [
                "Events/Feed.json": """
                {
                  "module": "Feed"
                  "events": []
                }
                """
            ],
            modules: ["Feed"],
            messages: [#"Events/Feed.json:3:3: error: JSON syntax: found the string "events", expected "," or "}""#])
    }

    func testTruncatedJSONSaysWhatIsStillOpen() throws {
        try assertRejected(
            [
                "Events/Feed.json": """
                {
                  "module": "Feed",
                  "events": [
                    {"name": "feed/opened", "description": "Opened."}
                """
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:4:54: error: JSON syntax: found the end of the file, expected "," or "]" (the array opened at 3:13 is never closed)"#
            ])
    }

    func testWrongTopLevelType() throws {
        try assertRejected(
            ["Events/Feed.json": #"[{"name": "feed/opened", "description": "Opened."}]"#],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:1:1: error: (top level): found an array, expected an object with "module" and "events""#
            ])
    }

    func testUnknownKeysAreReportedWithASuggestion() throws {
        try assertRejected(
            [
                "Events/Feed.json": #"""
                {
                  "module": "Feed",
                  "owner": "feed team",
                  "events": [
                    {"name": "feed/opened", "description": "Opened.", "categry": "feed",
                     "args": {"source": {"type": "string", "description": "From.", "required": true}}}
                  ]
                }
                """#
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:3:3: error: owner: found an unknown key "owner", expected one of "module", "description", "events""#,
                #"Events/Feed.json:5:55: error: events[0].categry: found an unknown key "categry", expected one of "name", "description", "type", "category", "args", "deprecated", "owner", "since", "destinations" (did you mean "category"?)"#,
                #"Events/Feed.json:6:68: error: events[0].args.source.required: found an unknown key "required", expected one of "type", "description", "optional", "pii", "values", "minimum", "maximum", "pattern", "maxLength""#,
            ])
    }

    func testModuleNameMustEqualTheFileName() throws {
        try assertRejected(
            ["Events/Feed.json": #"{"module": "Fed", "events": []}"#],
            modules: ["Feed", "Fed"],
            messages: [#"Events/Feed.json:1:12: error: module: found "Fed", expected "Feed", the catalog's file name"#])
    }

    func testModuleWithoutASourcesFolder() throws {
        try assertRejected(
            ["Events/Feed.json": #"{"module": "Feed", "events": []}"#],
            messages: [
                #"Events/Feed.json:1:12: error: module: found "Feed", but the package has no folder Sources/Feed/, expected a module with a Sources/Feed/ folder to write events_Feed.swift into (Sources/<Module>/, or the target's path: in Package.swift)"#
            ])
    }

    func testDuplicateKeysInAnObject() throws {
        try assertRejected(
            ["Events/Feed.json": event(#"{"name": "feed/opened", "description": "Opened.", "description": "Again."}"#)],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:4:55: error: events[0].description: found a second "description" key, expected each key once (the first is at 4:29)"#
            ])
    }

    func testWrongValueKindsAndMissingKeys() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(
                    #"{"name": "feed/opened", "args": {"source": {"type": "string", "description": "From.", "optional": "yes", "pii": 1}, "tab": {"description": "Which."}}}"#
                )
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:4:5: error: events[0]: found no "description" key, expected a "description" key saying what the event records"#,
                #"Events/Feed.json:4:103: error: events[0].args.source.optional: found "yes", expected true or false"#,
                #"Events/Feed.json:4:117: error: events[0].args.source.pii: found a number (1), expected true or false"#,
                #"Events/Feed.json:4:128: error: events[0].args.tab: found no "type" key, expected a "type" key: one of "string", "int", "double", "bool""#,
            ])
    }

    func testPersonalDataOfAnotherTypeThanTextIsRejected() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(
                    #"{"name": "feed/opened", "description": "O.", "args": {"age": {"type": "int", "description": "Years.", "pii": true}, "adult": {"type": "bool", "description": "Over 18.", "pii": true}}}"#
                )
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:4:114: error: events[0].args.age.pii: found "pii": true on an arg of type "int", expected "pii" on string args only: personal data is sent hashed, as a "sha256:…" string; declare the arg "type": "string" or remove "pii""#,
                #"Events/Feed.json:4:181: error: events[0].args.adult.pii: found "pii": true on an arg of type "bool", expected "pii" on string args only: personal data is sent hashed, as a "sha256:…" string; declare the arg "type": "string" or remove "pii""#,
            ])
    }

    func testNamesWhoseSwiftIdentifiersCollide() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(
                    #"""
                    {"name": "feed/item_tapped", "description": "Tapped.", "args": {"item_id": {"type": "string", "description": "Id."}, "itemID": {"type": "string", "description": "Id again."}, "args": {"type": "int", "description": "Reserved."}}},
                        {"name": "feed/item/tapped", "description": "Tapped, nested."},
                        {"name": "event/name", "description": "Hides EventName."}
                    """#)
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:4:122: error: events[0].args.itemID: found the arg name "itemID", whose Swift name itemID is already used by "item_id", expected arg names that give distinct Swift identifiers"#,
                #"Events/Feed.json:4:180: error: events[0].args.args: found the arg name "args", whose Swift name args is reserved, expected another name (reserved: Protocol, Self, Type, args, self)"#,
                #"Events/Feed.json:5:14: error: events[1].name: found "feed/item/tapped", whose constant feedItemTapped is already the constant of "feed/item_tapped" (Events/Feed.json:4:14), expected names that give distinct Swift identifiers"#,
                #"Events/Feed.json:5:14: error: events[1].name: found "feed/item/tapped", whose type FeedItemTapped and helper postFeedItemTapped are already those of "feed/item_tapped" (Events/Feed.json:4:14), expected names that give distinct Swift identifiers"#,
                #"Events/Feed.json:6:14: error: events[2].name: found "event/name", whose type name EventName would hide a type the generated code uses, expected another name"#,
            ])
    }

    func testNamesThatGiveTheSameTypeAndHelperNameBothEventsAndTheirPlaces() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(
                    #"""
                    {"name": "ui/shown", "description": "Shown."},
                        {"name": "u_i/shown", "description": "Shown, split."}
                    """#)
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:5:14: error: events[1].name: found "u_i/shown", whose type UIShown and helper postUIShown are already those of "ui/shown" (Events/Feed.json:4:14), expected names that give distinct Swift identifiers"#
            ])
    }

    func testAConstantThatIsAnotherEventsHelperIsRejected() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(
                    #"""
                    {"name": "feed/shown", "description": "Shown."},
                        {"name": "post/feed_shown", "description": "A post was shown."}
                    """#)
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:5:14: error: events[1].name: found "post/feed_shown", whose constant postFeedShown is already the helper of "feed/shown" (Events/Feed.json:4:14), expected names that give distinct Swift identifiers"#
            ])
    }

    func testAModuleNamedLikeAnotherModulesEnumIsRejected() throws {
        try assertRejected(
            [
                "Events/Feed.json": #"{"module": "Feed", "events": []}"#,
                "Events/FeedEvents.json": #"{"module": "FeedEvents", "events": []}"#,
            ],
            modules: ["Feed", "FeedEvents"],
            messages: [
                #"Events/Feed.json:1:12: error: module: found "Feed", whose enum FeedEvents has the name of the module FeedEvents (Events/FeedEvents.json), expected module names that differ from every module's <Module>Events enum"#
            ])
    }

    func testEveryProblemOfEveryCatalogIsListedInOneRun() throws {
        try assertRejected(
            [
                "Events/Feed.json": event(#"{"name": "feed/opened", "description": "Opened.", "type": "tap"}"#),
                "Events/Settings.json":
                    #"{"module": "Settings", "events": [{"name": "settings", "description": "One part."}"#,
                "Events/Profile.json":
                    #"{"module": "Profile", "events": [{"name": "profile/opened", "description": ""}]}"#,
            ],
            modules: ["Feed", "Profile", "Settings"],
            messages: [
                #"Events/Feed.json:4:63: error: events[0].type: found "tap", expected one of "activity", "click", "impression", "redirect", "user_action""#,
                #"Events/Profile.json:1:76: error: events[0].description: found "", expected a description of the event"#,
                #"Events/Settings.json:1:83: error: JSON syntax: found the end of the file, expected "," or "]" (the array opened at 1:34 is never closed)"#,
            ])
    }

    func testEveryBadDestinationOfEveryEventIsListedAndNothingIsWritten() throws {
        try assertRejected(
            [
                "Events/Feed.json": #"""
                {
                  "module": "Feed",
                  "events": [
                    {"name": "feed/opened", "description": "Opened.", "destinations": [], "categry": "feed"},
                    {"name": "feed/closed", "description": "Closed.", "destinations": ["Debug", "debug", "debug", 7]},
                    {"name": "feed/shown", "description": "Shown.", "destinations": "debug"}
                  ]
                }
                """#
            ],
            modules: ["Feed"],
            messages: [
                #"Events/Feed.json:4:71: error: events[0].destinations: found an empty array, expected at least one destination name, like ["amplitude", "debug"] (leave "destinations" out to send the event to every destination)"#,
                #"Events/Feed.json:4:75: error: events[0].categry: found an unknown key "categry", expected one of "name", "description", "type", "category", "args", "deprecated", "owner", "since", "destinations" (did you mean "category"?)"#,
                #"Events/Feed.json:5:72: error: events[1].destinations[0]: found "Debug", expected a destination name: 1 to 64 lowercase letters, digits, "-" and "_" (^[a-z0-9_-]{1,64}$), like "amplitude" (did you mean "debug"?)"#,
                #"Events/Feed.json:5:90: error: events[1].destinations[2]: found "debug" again, expected each destination once (the first is at 5:81)"#,
                #"Events/Feed.json:5:99: error: events[1].destinations[3]: found a number (7), expected a string: a destination name like "amplitude""#,
                #"Events/Feed.json:6:69: error: events[2].destinations: found "debug", expected a non-empty array of destination names, like ["amplitude", "debug"]"#,
            ])
    }

    func testInvalidUTF8IsReportedNotReplaced() throws {
        let package = try TemporaryPackage(modules: ["Feed"])
        defer { package.remove() }
        var bytes = Array(#"{"module": "Feed", "events": [{"name": "feed/opened", "description": "Op"#.utf8)
        bytes += [0xFF, 0xFE] + Array(#"ned."}]}"#.utf8)
        let result = CatalogReader.read(path: "Events/Feed.json", bytes: bytes)
        XCTAssertEqual(
            result.diagnostics.map(\.description),
            [
                #"Events/Feed.json:1:73: error: JSON syntax: found bytes that are not UTF-8, expected a UTF-8 text file"#
            ])
    }
}
