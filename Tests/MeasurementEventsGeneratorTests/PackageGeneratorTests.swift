import Foundation
import MeasurementEventsGenerator
import XCTest

final class PackageGeneratorTests: XCTestCase {
    private var package: TemporaryPackage!
    private var generator: PackageGenerator { PackageGenerator(packageRoot: package.root) }

    override func setUpWithError() throws {
        package = try TemporaryPackage(copying: Repository.golden)
    }

    override func tearDown() {
        package.remove()
    }

    func testCheckPassesOnTheCommittedGoldenPackage() throws {
        let report = try generator.check()
        XCTAssertTrue(report.isUpToDate)
        XCTAssertEqual(
            report.upToDate,
            [
                "Sources/Empty/events_Empty.swift", "Sources/Minimal/events_Minimal.swift",
                "Sources/Shop/events_Shop.swift",
            ])
    }

    func testCheckFailsOnAHandEditedGeneratedFileAndPassesAfterGenerate() throws {
        let path = "Sources/Shop/events_Shop.swift"
        try package.write(
            path, try XCTUnwrap(package.read(path)).replacingOccurrences(of: "shop/opened", with: "shop/opend"))
        let before = try package.snapshot()

        let report = try generator.check()
        XCTAssertEqual(report.stale, [path])
        XCTAssertFalse(report.isUpToDate)
        XCTAssertEqual(try package.snapshot(), before, "check writes nothing")

        XCTAssertEqual(try generator.generate().written, [path])
        XCTAssertTrue(try generator.check().isUpToDate)
    }

    func testCheckFailsOnACatalogChangedWithoutRegenerating() throws {
        let catalog = try XCTUnwrap(package.read("Events/Minimal.json"))
        try package.write(
            "Events/Minimal.json",
            catalog.replacingOccurrences(of: "A deep link was opened.", with: "A universal link was opened."))
        XCTAssertEqual(try generator.check().stale, ["Sources/Minimal/events_Minimal.swift"])
        _ = try generator.generate()
        XCTAssertTrue(try generator.check().isUpToDate)
    }

    func testCheckListsMissingGeneratedFiles() throws {
        try FileManager.default.removeItem(at: package.root.appendingPathComponent("Sources/Empty/events_Empty.swift"))
        let report = try generator.check()
        XCTAssertEqual(report.missing, ["Sources/Empty/events_Empty.swift"])
        XCTAssertEqual(report.outdated, ["Sources/Empty/events_Empty.swift"])
    }

    func testCheckFlagsAGeneratedFileWhoseCatalogWasDeletedAndGenerateRemovesIt() throws {
        try FileManager.default.removeItem(at: package.root.appendingPathComponent("Events/Minimal.json"))
        try package.write("Sources/Handwritten/events_Handwritten.swift", "// Not ours: no generator header.\n")
        let report = try generator.check()
        XCTAssertEqual(report.orphaned, ["Sources/Minimal/events_Minimal.swift"])
        XCTAssertFalse(report.isUpToDate)
        XCTAssertNotNil(package.read("Sources/Minimal/events_Minimal.swift"), "check writes nothing")

        XCTAssertEqual(try generator.generate(modules: ["Shop"]).removed, [], "a partial generate removes nothing")
        XCTAssertEqual(try generator.generate().removed, ["Sources/Minimal/events_Minimal.swift"])
        XCTAssertNil(package.read("Sources/Minimal/events_Minimal.swift"))
        XCTAssertNotNil(package.read("Sources/Handwritten/events_Handwritten.swift"))
        XCTAssertTrue(try generator.check().isUpToDate)
    }

    /// `Events/Big.json` with `count` events, and the target's folder.
    private func writeBigCatalog(_ count: Int) throws {
        let events = (0..<count).map { #"{"name": "big/event_\#($0)", "description": "Event \#($0)."}"# }
        try package.write("Events/Big.json", #"{"module": "Big", "events": [\#(events.joined(separator: ", "))]}"#)
        try package.write("Sources/Big/Big.swift", "// The module's own code.\n")
    }

    func testGenerateAndCheckFollowTheNumberOfPartsOfALargeCatalog() throws {
        try writeBigCatalog(160)
        let written = try generator.generate(modules: ["Big"]).written
        XCTAssertEqual(
            written,
            ["Sources/Big/events_Big.swift"] + (1...4).map { "Sources/Big/events_Big+\($0).swift" })
        XCTAssertTrue(try generator.check().isUpToDate)

        // The catalog shrinks to two parts: the third and fourth are orphaned, and generating the
        // catalog alone removes them.
        try writeBigCatalog(70)
        try package.write("Sources/Big/events_Big+10.swift", "// Not ours: no generator header.\n")
        let report = try generator.check()
        XCTAssertEqual(report.orphaned, ["Sources/Big/events_Big+3.swift", "Sources/Big/events_Big+4.swift"])
        XCTAssertEqual(
            report.stale,
            ["Sources/Big/events_Big.swift", "Sources/Big/events_Big+1.swift", "Sources/Big/events_Big+2.swift"])
        XCTAssertEqual(
            try generator.generate(modules: ["Big"]).removed,
            ["Sources/Big/events_Big+3.swift", "Sources/Big/events_Big+4.swift"])
        XCTAssertTrue(try generator.check().isUpToDate)
        XCTAssertNotNil(package.read("Sources/Big/events_Big+10.swift"), "a file without the header is not ours")

        // The catalog is deleted: every file it generated is orphaned and removed.
        try FileManager.default.removeItem(at: package.root.appendingPathComponent("Events/Big.json"))
        let orphans = [
            "Sources/Big/events_Big+1.swift", "Sources/Big/events_Big+2.swift", "Sources/Big/events_Big.swift",
        ]
        XCTAssertEqual(try generator.check().orphaned, orphans)
        XCTAssertEqual(try generator.generate().removed, orphans)
        XCTAssertTrue(try generator.check().isUpToDate)
    }

    func testGenerateWritesOnlyFilesWhoseContentChanged() throws {
        let path = "Sources/Minimal/events_Minimal.swift"
        try package.write(path, "// stale\n")
        let before = try package.snapshot()

        let report = try generator.generate()
        XCTAssertEqual(report.written, [path])
        XCTAssertEqual(report.unchanged, ["Sources/Empty/events_Empty.swift", "Sources/Shop/events_Shop.swift"])
        let after = try package.snapshot()
        for (file, state) in before where file != path {
            XCTAssertEqual(after[file], state, "\(file) was rewritten")
        }
        XCTAssertNotEqual(after[path], before[path])
    }

    func testGenerateNamedCatalogsOnly() throws {
        for module in ["Empty", "Shop"] { try package.write("Sources/\(module)/events_\(module).swift", "// stale\n") }
        let report = try generator.generate(modules: ["Events/Shop.json"])
        XCTAssertEqual(report.written, ["Sources/Shop/events_Shop.swift"])
        XCTAssertEqual(package.read("Sources/Empty/events_Empty.swift"), "// stale\n")
    }

    func testGenerateRejectsAnUnknownCatalogName() {
        XCTAssertThrowsError(try generator.generate(modules: ["Shp"])) { error in
            XCTAssertEqual(error as? GeneratorFailure, .unknownCatalog("Shp", known: ["Empty", "Minimal", "Shop"]))
        }
    }

    func testAPackageWithoutAnEventsFolderIsAClearError() throws {
        try FileManager.default.removeItem(at: package.root.appendingPathComponent("Events"))
        XCTAssertThrowsError(try generator.check()) { error in
            XCTAssertEqual(
                (error as? GeneratorFailure)?.description,
                "found no Events/ folder in \(package.root.path), expected catalogs as Events/<Module>.json (is --package-path the package root?)"
            )
        }
    }

    func testTheDemoPackageIsUpToDate() throws {
        // The repository's own catalogs (Events/DemoFeed.json, …) against their committed files, in
        // the folders SwiftPM reads from Package.swift: the demo's feature modules are fixtures
        // (`path: "Tests/Fixtures/Demo/DemoFeed"`), the shipped modules are in Sources/.
        let folders = try ModuleFolders.read(packageRoot: Repository.root)
        XCTAssertEqual(folders.folder(of: "DemoFeed"), "Tests/Fixtures/Demo/DemoFeed")
        let report = try PackageGenerator(packageRoot: Repository.root, moduleFolders: folders).check()
        XCTAssertEqual(report.outdated, [])
        XCTAssertEqual(
            report.upToDate.filter { !$0.hasPrefix("Sources/") },
            [
                "Tests/Fixtures/Demo/DemoFeed/events_DemoFeed.swift",
                "Tests/Fixtures/Demo/DemoSettings/events_DemoSettings.swift",
            ])
        XCTAssertTrue(report.upToDate.contains("Sources/ImpressionTracking/events_ImpressionTracking.swift"))
    }
}
