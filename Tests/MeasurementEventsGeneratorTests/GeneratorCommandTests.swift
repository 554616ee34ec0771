import Foundation
import MeasurementEventsGenerator
import XCTest

final class GeneratorCommandTests: XCTestCase {
    private func parse(_ arguments: [String]) throws -> GeneratorCommand { try GeneratorCommand.parse(arguments) }

    private func usageError(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let command = try GeneratorCommand.parse(arguments)
            XCTFail("parsed \(command)", file: file, line: line)
            return ""
        } catch {
            return error.description
        }
    }

    func testSubcommandsAndOptions() throws {
        XCTAssertEqual(try parse(["generate"]), GeneratorCommand(subcommand: .generate([]), packagePath: "."))
        XCTAssertEqual(
            try parse(["generate", "DemoFeed", "Events/DemoSettings.json"]).subcommand,
            .generate(["DemoFeed", "Events/DemoSettings.json"]))
        XCTAssertEqual(
            try parse(["check", "--package-path", "App"]), GeneratorCommand(subcommand: .check, packagePath: "App"))
        XCTAssertEqual(try parse(["--package-path=App", "plan"]).packagePath, "App")
        XCTAssertEqual(try parse(["plan"]).subcommand, .plan(.markdown))
        XCTAssertEqual(try parse(["plan", "--format", "json"]).subcommand, .plan(.json))
        XCTAssertEqual(try parse(["--help"]).subcommand, .help)
    }

    func testNearMissSubcommandGetsADidYouMean() {
        XCTAssertEqual(
            usageError(["genrate"]),
            """
            error: unknown subcommand 'genrate'
            Did you mean 'generate'?
            usage: measurement-events <subcommand> [--package-path <root>]
            Run 'measurement-events --help' for more.
            """)
        XCTAssertTrue(usageError(["chek"]).contains("Did you mean 'check'?"))
        XCTAssertFalse(usageError(["deploy"]).contains("Did you mean"))
    }

    func testInvalidOptionValuesAndMissingArgumentsAreUsageErrors() {
        XCTAssertTrue(
            usageError(["plan", "--format", "jsn"]).hasPrefix(
                "error: the value 'jsn' is invalid for '--format <markdown|json|jsonschema|html>'\nDid you mean 'json'?"
            ))
        XCTAssertTrue(usageError([]).hasPrefix("error: missing subcommand\nusage: "))
        XCTAssertTrue(
            usageError(["check", "--package-path"]).hasPrefix("error: missing value for '--package-path <root>'"))
        XCTAssertTrue(usageError(["check", "DemoFeed"]).hasPrefix("error: unexpected argument 'DemoFeed' for 'check'"))
        XCTAssertTrue(
            usageError(["generate", "--format", "json"]).hasPrefix("error: '--format' applies to 'plan' only"))
        XCTAssertTrue(usageError(["check", "--pakage-path", "."]).contains("Did you mean '--package-path'?"))
    }

    func testExitCodes() throws {
        let package = try TemporaryPackage(copying: Repository.golden)
        defer { package.remove() }
        func run(_ arguments: [String]) throws -> (code: Int32, output: String, errors: String) {
            var output: [String] = []
            var errors: [String] = []
            let code = try GeneratorCommand.parse(arguments + ["--package-path", package.root.path])
                .run(output: { output.append($0) }, errorOutput: { errors.append($0) })
            return (code, output.joined(separator: "\n"), errors.joined(separator: "\n"))
        }
        XCTAssertEqual(try run(["check"]).code, GeneratorCommand.exitSuccess)
        try package.write("Sources/Empty/events_Empty.swift", "// edited\n")
        let stale = try run(["check"])
        XCTAssertEqual(stale.code, GeneratorCommand.exitFailure)
        XCTAssertEqual(
            stale.errors,
            """
            stale: Sources/Empty/events_Empty.swift differs from what generate would write
            1 generated file is out of date; run: swift run measurement-events generate
            """)
        XCTAssertEqual(
            try run(["generate"]).output,
            "wrote Sources/Empty/events_Empty.swift\n3 generated files: 1 written, 2 unchanged")
        XCTAssertEqual(try run(["generate", "Shpo"]).code, GeneratorCommand.exitUsage)
        try package.write("Events/Empty.json", "{")
        let invalid = try run(["generate"])
        XCTAssertEqual(invalid.code, GeneratorCommand.exitFailure)
        XCTAssertEqual(
            invalid.errors,
            """
            Events/Empty.json:1:2: error: JSON syntax: found the end of the file, expected a string key (the object opened at 1:1 is never closed)
            error: 1 problem in 1 catalog; no file was written
            """)
    }

    func testPlanPrintsEveryEventOfEveryCatalog() throws {
        var output = ""
        let code = try GeneratorCommand.parse(["plan", "--package-path", Repository.golden.path]).run(
            output: { output += $0 }, errorOutput: { _ in })
        XCTAssertEqual(code, 0)
        for catalog in try CatalogSet.load(packageRoot: Repository.golden).catalogs {
            XCTAssertTrue(output.contains("## \(catalog.module)\n"))
            for event in catalog.events { XCTAssertTrue(output.contains("### `\(event.name)`"), event.name) }
        }
    }
}
