import Foundation
import MeasurementEventsGenerator
import XCTest

/// The generated output of the sample catalogs in `Tests/MeasurementEventsGeneratorGolden/Events`
/// equals the committed files next to them (which the `MeasurementEventsGeneratorGolden` target
/// compiles). `RECORD_GOLDEN=1 swift test --filter GoldenFileTests` re-records them.
final class GoldenFileTests: XCTestCase {
    private var recording: Bool { ProcessInfo.processInfo.environment["RECORD_GOLDEN"] == "1" }

    func testGeneratedSwiftFilesMatchTheGoldens() throws {
        let set = try CatalogSet.load(packageRoot: Repository.golden)
        XCTAssertEqual(set.diagnostics, [])
        XCTAssertEqual(set.catalogs.map(\.module), ["Empty", "Minimal", "Shop"])
        for catalog in set.catalogs {
            try assertMatchesGolden(EventsFileWriter.source(for: catalog), at: catalog.generatedFilePath)
        }
    }

    func testMarkdownPlanMatchesTheGolden() throws {
        let catalogs = try CatalogSet.load(packageRoot: Repository.golden).catalogs
        try assertMatchesGolden(TrackingPlanWriter.plan(catalogs, format: .markdown), at: "plan.md")
    }

    func testJSONPlanMatchesTheGolden() throws {
        let catalogs = try CatalogSet.load(packageRoot: Repository.golden).catalogs
        try assertMatchesGolden(TrackingPlanWriter.plan(catalogs, format: .json), at: "plan.json")
    }

    func testJSONSchemaPlanMatchesTheGolden() throws {
        let catalogs = try CatalogSet.load(packageRoot: Repository.golden).catalogs
        try assertMatchesGolden(TrackingPlanWriter.plan(catalogs, format: .jsonschema), at: "plan.schema.json")
    }

    func testHTMLPlanMatchesTheGolden() throws {
        let catalogs = try CatalogSet.load(packageRoot: Repository.golden).catalogs
        try assertMatchesGolden(TrackingPlanWriter.plan(catalogs, format: .html), at: "plan.html")
    }

    private func assertMatchesGolden(
        _ actual: String, at relativePath: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let url = Repository.golden.appendingPathComponent(relativePath)
        if recording {
            try Data(actual.utf8).write(to: url)
            return
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        guard actual != expected else { return }
        let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let index =
            Array(zip(actualLines, expectedLines)).firstIndex { $0 != $1 }
            ?? min(actualLines.count, expectedLines.count)
        let got = index < actualLines.count ? String(actualLines[index]) : "<end of output>"
        let want = index < expectedLines.count ? String(expectedLines[index]) : "<end of golden>"
        XCTFail(
            "\(relativePath) differs from the golden at line \(index + 1):\n  golden:    \(want)\n  generated: \(got)\n"
                + "Re-record with RECORD_GOLDEN=1 if the change is intended.",
            file: file, line: line)
    }
}
