import Foundation
import MeasurementEventsGenerator
import XCTest

/// A target with `path:` in its manifest gets its generated file in that folder, wherever the
/// folder is: the command line reads the folders from SwiftPM, the plugin passes them.
final class ModuleFoldersTests: XCTestCase {
    private var package: TemporaryPackage!

    override func setUpWithError() throws {
        // Shop is a module at `Fixtures/Shop` (its manifest says `path: "Fixtures/Shop"`).
        package = try TemporaryPackage(copying: Repository.golden)
        try FileManager.default.createDirectory(
            at: package.root.appendingPathComponent("Fixtures"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(
            at: package.root.appendingPathComponent("Sources/Shop"),
            to: package.root.appendingPathComponent("Fixtures/Shop"))
    }

    override func tearDown() {
        package.remove()
    }

    private let shopFolders = ModuleFolders(custom: ["Shop": "Fixtures/Shop"])

    func testTheFoldersOfADumpedManifest() throws {
        let dump = Data(
            #"""
            {"name": "App", "targets": [
              {"name": "Feed", "path": null, "type": "regular"},
              {"name": "Shop", "path": "Fixtures/Shop/", "type": "regular"},
              {"name": "Demo", "path": "./Tests/Fixtures/Demo", "type": "regular"}]}
            """#.utf8)
        let folders = try ModuleFolders.fromManifestDump(dump, manifest: "App/Package.swift")
        XCTAssertEqual(folders.custom, ["Shop": "Fixtures/Shop", "Demo": "Tests/Fixtures/Demo"])
        XCTAssertEqual(folders.folder(of: "Feed"), "Sources/Feed")
        XCTAssertEqual(folders.folder(of: "Shop"), "Fixtures/Shop")
    }

    func testAManifestDumpThatCannotBeUsedIsAClearError() {
        XCTAssertThrowsError(try ModuleFolders.fromManifestDump(Data("[]".utf8), manifest: "App/Package.swift")) {
            XCTAssertEqual(
                "\($0)",
                #"cannot read the targets of App/Package.swift: `swift package dump-package` printed no "targets" array, expected the manifest as JSON"#
            )
        }
        let outside = Data(#"{"targets": [{"name": "Shop", "path": "../Shop"}]}"#.utf8)
        XCTAssertThrowsError(try ModuleFolders.fromManifestDump(outside, manifest: "App/Package.swift")) {
            XCTAssertEqual(
                "\($0)",
                #"cannot use the folder of target Shop in App/Package.swift: found path "../Shop", expected a folder inside the package"#
            )
        }
    }

    func testGenerateAndCheckUseTheTargetsFolder() throws {
        let generator = PackageGenerator(packageRoot: package.root, moduleFolders: shopFolders)
        try package.write("Fixtures/Shop/events_Shop.swift", "// stale\n")
        XCTAssertEqual(try generator.check().stale, ["Fixtures/Shop/events_Shop.swift"])
        XCTAssertEqual(try generator.generate().written, ["Fixtures/Shop/events_Shop.swift"])
        XCTAssertEqual(
            package.read("Fixtures/Shop/events_Shop.swift"),
            try String(
                contentsOf: Repository.golden.appendingPathComponent("Sources/Shop/events_Shop.swift"), encoding: .utf8)
        )
        XCTAssertTrue(try generator.check().isUpToDate)
        XCTAssertNil(package.read("Sources/Shop/events_Shop.swift"))
    }

    func testWithoutItsFolderTheCatalogIsRejectedNamingTheFolderItExpects() throws {
        XCTAssertThrowsError(try PackageGenerator(packageRoot: package.root).check()) { error in
            XCTAssertTrue(
                "\(error)".contains(
                    #"module: found "Shop", but the package has no folder Sources/Shop/, expected a module with a Sources/Shop/ folder"#
                ), "\(error)")
        }
    }

    func testAGeneratedFileLeftInACustomFolderIsOrphanedWhenItsCatalogGoes() throws {
        let generator = PackageGenerator(packageRoot: package.root, moduleFolders: shopFolders)
        try FileManager.default.removeItem(at: package.root.appendingPathComponent("Events/Shop.json"))
        XCTAssertEqual(try generator.check().orphaned, ["Fixtures/Shop/events_Shop.swift"])
    }

    func testTheCommandTakesTheFoldersThePluginPasses() throws {
        let command = try GeneratorCommand.parse([
            "check", "--package-path", package.root.path, "--module-folder", "Shop=Fixtures/Shop/",
            "--module-folder=Empty=Sources/Empty",
        ])
        XCTAssertEqual(command.moduleFolders, ["Shop": "Fixtures/Shop", "Empty": "Sources/Empty"])
        var output: [String] = []
        XCTAssertEqual(
            command.run(output: { output.append($0) }, errorOutput: { XCTFail($0) }), GeneratorCommand.exitSuccess)
        XCTAssertEqual(output, ["3 generated files are up to date"])
        for value in ["Shop", "=Fixtures/Shop", "Shop=/tmp/Shop", "Shop=../Shop"] {
            XCTAssertThrowsError(try GeneratorCommand.parse(["check", "--module-folder", value])) { error in
                XCTAssertTrue(
                    "\(error)".contains(
                        "the value '\(value)' is invalid for '--module-folder <Module>=<folder>', expected a module name, '=' and a folder inside the package"
                    ), "\(error)")
            }
        }
    }

    func testWithoutFoldersTheCommandAsksSwiftPMForTheManifest() throws {
        // Shop's folder is known from Package.swift alone, through `swift package dump-package`.
        try package.write(
            "Package.swift",
            """
            // swift-tools-version: 6.0
            import PackageDescription

            let package = Package(
                name: "App",
                targets: [
                    .target(name: "Empty"), .target(name: "Minimal"), .target(name: "Shop", path: "Fixtures/Shop"),
                ]
            )
            """)
        var output: [String] = []
        var errors: [String] = []
        let code = GeneratorCommand(subcommand: .check, packagePath: package.root.path).run(
            output: { output.append($0) }, errorOutput: { errors.append($0) })
        XCTAssertEqual(errors, [])
        XCTAssertEqual(code, GeneratorCommand.exitSuccess)
        XCTAssertEqual(output, ["3 generated files are up to date"])
    }
}
