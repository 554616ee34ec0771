import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsPlan
import XCTest

final class TrackingPlanCatalogTests: XCTestCase {
    /// The generator's `plan --format json` shape.
    private let generatorOutput = """
        {"modules":[
          {"module":"DemoFeed","catalog":"Events/DemoFeed.json","events":[
            {"name":"feed/item_tapped","type":"click","category":"feed","description":"A feed item was tapped.",
             "args":[{"name":"item_id","type":"string","optional":false,"pii":false,"description":"The item."}]},
            {"name":"feed/opened","type":"activity","category":"feed","description":"","args":[]}]},
          {"module":"DemoSettings","catalog":"Events/DemoSettings.json","events":[
            {"name":"settings/opened","type":"activity","category":"settings","description":"","args":[]}]}]}
        """

    func testReadsTheNamesOfEveryModuleFromGeneratorOutput() throws {
        let catalog = try TrackingPlan.Catalog(generatorOutput: Data(generatorOutput.utf8))
        XCTAssertEqual(catalog.names, ["feed/item_tapped", "feed/opened", "settings/opened"])
        XCTAssertTrue(catalog.declaresAny(matching: "feed/*"))
        XCTAssertFalse(catalog.declaresAny(matching: "promo/*"))
    }

    /// The generator writes each event's `destinations` (issue 45): names for a routed event,
    /// `null` for one every destination receives. The plan reads only the names.
    func testGeneratorOutputWithDestinationsIsRead() throws {
        let output = """
            {"modules":[{"catalog":"Events/Shop.json","events":[
              {"args":[],"category":null,"deprecated":false,"description":"Opened.",
               "destinations":["amplitude","debug"],"name":"shop/opened","owner":null,"since":null,"type":"user_action"},
              {"args":[],"category":null,"deprecated":false,"description":"Closed.",
               "destinations":null,"name":"shop/closed","owner":null,"since":null,"type":"user_action"}],
             "module":"Shop"}]}
            """
        let catalog = try TrackingPlan.Catalog(generatorOutput: Data(output.utf8))
        XCTAssertEqual(catalog.names, ["shop/opened", "shop/closed"])
    }

    func testAGeneratorCatalogChecksAPlan() throws {
        let catalog = try TrackingPlan.Catalog(generatorOutput: Data(generatorOutput.utf8))
        XCTAssertNoThrow(
            try plan(
                #"{"version": 1, "events": {"feed/*": {"label": "Feed"}}, "allow": ["settings/opened"]}"#,
                catalog: catalog))
        XCTAssertThrowsError(try plan(#"{"version": 1, "allow": ["settings/opend"]}"#, catalog: catalog)) { error in
            XCTAssertEqual(
                (error as? TrackingPlanError)?.problems.map(\.description),
                [
                    #"plan.json:1:26: $.allow[0]: found the event "settings/opend", which no module's catalog declares, expected an event declared in a catalog (Events/<Module>.json); did you mean "settings/opened"?"#
                ])
        }
    }

    func testNameListsFromGeneratedCodeMerge() {
        let feed = TrackingPlan.Catalog(names: ["feed/opened"])
        let settings = TrackingPlan.Catalog(names: ["settings/opened"])
        XCTAssertEqual(feed.merging(settings).names, ["feed/opened", "settings/opened"])
        XCTAssertTrue(feed.declares("feed/opened"))
        XCTAssertFalse(feed.declares("settings/opened"))
    }

    func testMalformedGeneratorOutputIsRejectedWithEveryProblem() {
        let malformed =
            #"{"modules": [{"module": "A", "events": [{"name": 3}, {"type": "click"}, {"name": "a//b"}]}, "B", {"module": "C"}]}"#
        XCTAssertThrowsError(try TrackingPlan.Catalog(generatorOutput: Data(malformed.utf8), file: "plan-output.json"))
        { error in
            XCTAssertEqual(
                (error as? TrackingPlanError)?.problems.map(\.description),
                [
                    "plan-output.json:1:50: $.modules[0].events[0].name: found the number 3, expected an event name string",
                    #"plan-output.json:1:54: $.modules[0].events[1]: missing "name", expected an event name string"#,
                    #"plan-output.json:1:82: $.modules[0].events[2].name: found the invalid event name "a//b": the name has an empty component (a leading, trailing or double slash)"#,
                    #"plan-output.json:1:93: $.modules[1]: found a string, expected an object with "module" and "events""#,
                    #"plan-output.json:1:98: $.modules[2].events: missing "events", expected an array"#,
                ])
        }
        XCTAssertThrowsError(try TrackingPlan.Catalog(generatorOutput: Data("[]".utf8), file: "x.json")) { error in
            XCTAssertEqual(
                (error as? TrackingPlanError)?.problems.map(\.description),
                [
                    #"x.json:1:1: $: found an array, expected an object with "modules""#
                ])
        }
        XCTAssertThrowsError(try TrackingPlan.Catalog(generatorOutput: Data(#"{"modules": "#.utf8), file: "x.json")) {
            error in
            XCTAssertEqual(
                (error as? TrackingPlanError)?.problems.map(\.description),
                [
                    "x.json:1:13: $: syntax error: found the end of the file, expected a value"
                ])
        }
    }

    func testReadsACatalogFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString).json")
        try Data(generatorOutput.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        XCTAssertEqual(try TrackingPlan.Catalog(contentsOf: url).names.count, 3)
    }

    /// Captured from `swift run measurement-events plan --format json` on the demo catalogs,
    /// to keep this reader in step with the generator's real output.
    private let capturedGeneratorOutput =
        "{\"modules\":[{\"catalog\":\"Events/DemoFeed.json\",\"events\":[{\"args\":[{\"description\":\"What opened it: launch, tab or deep_link.\",\"name\":\"source\",\"optional\":false,\"pii\":false,\"type\":\"string\"}],\"category\":null,\"description\":\"The feed became visible.\",\"name\":\"feed/opened\",\"type\":\"activity\"},{\"args\":[{\"description\":\"How many cells were laid out.\",\"name\":\"cells\",\"optional\":false,\"pii\":false,\"type\":\"int\"}],\"category\":null,\"description\":\"The feed laid out its cells; for debugging, denied by the demo app.\",\"name\":\"feed/debug/layout_pass\",\"type\":\"activity\"},{\"args\":[{\"description\":\"The item's id.\",\"name\":\"item_id\",\"optional\":false,\"pii\":false,\"type\":\"string\"},{\"description\":\"Zero-based position in the feed.\",\"name\":\"position\",\"optional\":false,\"pii\":false,\"type\":\"int\"}],\"category\":null,\"description\":\"The user tapped an item.\",\"name\":\"feed/item_tapped\",\"type\":\"click\"},{\"args\":[{\"description\":\"The item's id.\",\"name\":\"item_id\",\"optional\":false,\"pii\":false,\"type\":\"string\"},{\"description\":\"Where it was shared: messages, mail, copy_link.\",\"name\":\"channel\",\"optional\":false,\"pii\":false,\"type\":\"string\"}],\"category\":null,\"description\":\"The user shared an item.\",\"name\":\"feed/item_shared\",\"type\":\"user_action\"}],\"module\":\"DemoFeed\"},{\"catalog\":\"Events/DemoSettings.json\",\"events\":[{\"args\":[],\"category\":null,\"description\":\"The settings screen became visible.\",\"name\":\"settings/opened\",\"type\":\"activity\"},{\"args\":[{\"description\":\"The new theme: light, dark or system.\",\"name\":\"theme\",\"optional\":false,\"pii\":false,\"type\":\"string\"}],\"category\":null,\"description\":\"The user picked another theme.\",\"name\":\"settings/theme_changed\",\"type\":\"user_action\"},{\"args\":[{\"description\":\"Whether the system prompt was shown (false: granted earlier).\",\"name\":\"prompted\",\"optional\":false,\"pii\":false,\"type\":\"bool\"}],\"category\":null,\"description\":\"The user granted access to the photo library.\",\"name\":\"app/permission/photo_library/granted\",\"type\":\"user_action\"}],\"module\":\"DemoSettings\"}]}"

    func testReadsTheGeneratorsRealOutput() throws {
        let catalog = try TrackingPlan.Catalog(generatorOutput: Data(capturedGeneratorOutput.utf8))
        XCTAssertEqual(
            catalog.names,
            [
                "feed/opened", "feed/debug/layout_pass", "feed/item_tapped", "feed/item_shared",
                "settings/opened", "settings/theme_changed", "app/permission/photo_library/granted",
            ])
    }
}
