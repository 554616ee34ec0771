import Foundation
import XCTest

@testable import MeasurementEventsGenerator

/// `plan --format jsonschema` and `plan --format html`, and `coverage`: what each export holds
/// beyond the goldens' bytes. (`Scripts/check-plan-jsonschema.py` validates events against the
/// schemas with Python's `jsonschema`; `Scripts/check-plan-html.py` drives the page in Chromium.)
final class PlanExportTests: XCTestCase {
    private func goldenCatalogs() throws -> [Catalog] {
        try CatalogSet.load(packageRoot: Repository.golden).catalogs
    }

    func testTheJSONSchemaPlanHasOneDraft2020SchemaPerEvent() throws {
        let catalogs = try goldenCatalogs()
        let text = TrackingPlanWriter.plan(catalogs, format: .jsonschema)
        let document = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let events = try XCTUnwrap(document["events"] as? [[String: Any]])
        XCTAssertEqual(events.count, catalogs.reduce(0) { $0 + $1.events.count })
        for event in events {
            let rules = try XCTUnwrap(event["rules"] as? [String: Any])
            XCTAssertEqual(rules["$schema"] as? String, "https://json-schema.org/draft/2020-12/schema")
        }
    }

    func testTheJSONSchemaOfAnEventStatesEveryRule() throws {
        let event = try XCTUnwrap(try goldenCatalogs().flatMap(\.events).first { $0.name == "shop/product_viewed" })
        let schema = JSONSchemaPlanWriter.schema(for: event).pretty
        for fragment in [
            #""pattern": "^[A-Z0-9-]+$""#, #""maxLength": 32"#, #""minimum": 0"#, #""maximum": 500"#,
            #""type": "integer""#, #""additionalProperties": false"#,
        ] {
            XCTAssertTrue(schema.contains(fragment), fragment)
        }
        XCTAssertTrue(schema.contains(#""enum": ["#))
    }

    func testTheJSONSchemaOfAnEventCarriesItsDestinationsOnlyWhenItsCatalogNamesThem() throws {
        let text = TrackingPlanWriter.plan(try goldenCatalogs(), format: .jsonschema)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let events = try XCTUnwrap(document["events"] as? [[String: Any]])
        var destinations: [String: [String]] = [:]
        for event in events {
            let rules = try XCTUnwrap(event["rules"] as? [String: Any])
            if let names = rules["x-destinations"] {
                destinations[try XCTUnwrap(event["name"] as? String)] = try XCTUnwrap(names as? [String])
            }
        }
        XCTAssertEqual(
            destinations,
            [
                "shop/product_viewed": ["amplitude", "ga4", "debug"], "shop/opened": ["debug"],
                "shop/tab_opened": ["segment_eu", "otlp-collector"],
            ])
    }

    func testTheHTMLPageShowsTheDestinationsOfEachRoutedEvent() throws {
        let page = TrackingPlanWriter.plan(try goldenCatalogs(), format: .html)
        let rows = page.split(separator: "\n").filter { $0.hasPrefix("<tr class=\"event\"") }
        let routed = rows.filter { $0.contains("only to: ") }
        XCTAssertEqual(routed.count, 3)
        let viewed = try XCTUnwrap(rows.first { $0.contains("<code>shop/product_viewed</code>") })
        XCTAssertTrue(
            viewed.contains(
                #"only to: <code class="destination">amplitude</code>, <code class="destination">ga4</code>, <code class="destination">debug</code>"#
            ))
        XCTAssertTrue(viewed.contains("data-search=\"shop/product_viewed shop impression"), "searchable")
        XCTAssertTrue(viewed.contains(" amplitude ga4 debug "), "the destinations are searchable")
    }

    func testTheHTMLPageFetchesNothing() throws {
        let page = TrackingPlanWriter.plan(try goldenCatalogs(), format: .html)
        for external in ["<script src", "<link", "@import", "url(", "http://", "https://", "@font-face"] {
            XCTAssertFalse(page.contains(external), "the page must work offline: found \(external)")
        }
    }

    func testTheHTMLPageEscapesCatalogText() throws {
        var event = CatalogEvent(name: "feed/opened", description: "<script>alert(1)</script> & \"quotes\"")
        event.owner = "<b>team</b>"
        event.destinations = ["<i>debug</i>"]
        let page = HTMLPlanWriter.page(
            [Catalog(path: "Events/Feed.json", module: "Feed", events: [event])], coverage: nil)
        XCTAssertFalse(page.contains("<script>alert"))
        XCTAssertFalse(page.contains("<b>team"))
        XCTAssertFalse(page.contains("<i>debug"))
        XCTAssertTrue(page.contains(#"<code class="destination">&lt;i&gt;debug&lt;/i&gt;</code>"#))
        XCTAssertTrue(page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;"))
    }

    func testTheHTMLPageShowsCoverageWhenGiven() throws {
        let catalogs = try goldenCatalogs()
        let coverage = PlanCoverage(catalogs: catalogs, posted: ["shop/opened"])
        let page = HTMLPlanWriter.page(catalogs, coverage: coverage)
        XCTAssertTrue(page.contains("1 of 9 planned events posted by tests"))
        XCTAssertEqual(page.components(separatedBy: "<td class=\"posted\">").count - 1, 1)
        XCTAssertEqual(page.components(separatedBy: "<td class=\"never\">").count - 1, 8)
    }

    // MARK: Coverage

    func testCoverageNamesTheEventsNeverPosted() throws {
        let catalogs = try goldenCatalogs()
        let coverage = PlanCoverage(catalogs: catalogs, posted: ["shop/opened", "url/opened", "feed/unplanned"])
        XCTAssertEqual(
            coverage.summary,
            """
            2 of 9 planned events posted by tests (22%); never posted: app/ui/json_ids_loaded, shop/product_viewed, shop/cart/item_added, shop/checkout/completed, shop/payment/redirected, shop/tab_opened, shop/legacy_banner_shown
            posted but not planned: feed/unplanned
            """)
    }

    func testTheCoverageCommandFailsBelowTheMinimum() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("coverage-\(UUID()).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("# from a test run\nshop/opened\nurl/opened\nshop/opened\n".utf8).write(to: file)
        var output: [String] = []
        var errors: [String] = []
        let passing = try GeneratorCommand.parse(
            ["coverage", file.path, "--minimum", "20", "--package-path", Repository.golden.path])
        XCTAssertEqual(passing.run(output: { output.append($0) }, errorOutput: { errors.append($0) }), 0)
        XCTAssertTrue(output.first?.hasPrefix("2 of 9 planned events posted by tests (22%); never posted: ") ?? false)
        let failing = try GeneratorCommand.parse(
            ["coverage", file.path, "--minimum", "90", "--package-path", Repository.golden.path])
        XCTAssertEqual(failing.run(output: { _ in }, errorOutput: { errors.append($0) }), 1)
        XCTAssertEqual(errors, ["error: plan coverage 22% is below the minimum of 90%"])
    }

    func testACoverageFileWithSomethingElseIsAnErrorNamingTheLine() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("coverage-\(UUID()).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("shop/opened\nnot an event\n".utf8).write(to: file)
        XCTAssertThrowsError(try PlanCoverage.postedNames(in: [file])) { error in
            XCTAssertEqual(
                (error as? GeneratorError)?.message,
                "\(file.path):2: found \"not an event\", expected an event name a line (a coverage file the test kit writes)"
            )
        }
    }

    func testCoverageOptionsBelongToTheirSubcommands() {
        XCTAssertThrowsError(try GeneratorCommand.parse(["plan", "--coverage", "x.txt"]))
        XCTAssertThrowsError(try GeneratorCommand.parse(["plan", "--minimum", "50"]))
        XCTAssertThrowsError(try GeneratorCommand.parse(["coverage"]))
        XCTAssertThrowsError(try GeneratorCommand.parse(["coverage", "x.txt", "--minimum", "101"]))
        XCTAssertEqual(
            try GeneratorCommand.parse(["plan", "--format", "html", "--coverage", "a.txt", "--coverage", "b.txt"])
                .coverageFiles, ["a.txt", "b.txt"])
    }
}
