import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// The package declares its version once (`PackageVersion.current`); everything that
/// sends or shows it reads that declaration.
final class PackageVersionTests: XCTestCase {
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The package's files, or a skip where the tests run without them (on a device).
    private func packageFile(_ relativePath: String) throws -> String {
        let url = Self.packageRoot.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("\(relativePath) is not beside the tests (run from the package)")
        }
        return try String(contentsOf: url, encoding: .utf8)
    }

    func testTheContextAndTheHTTPTrackerReportTheOneVersion() {
        XCTAssertEqual(EventContext.Library.measurementEvents.version, PackageVersion.current)
        XCTAssertEqual(EventContext.Library.measurementEvents.name, "MeasurementEvents")
    }

    func testTheVersionIsSemantic() {
        let parts = PackageVersion.current.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3, PackageVersion.current)
        XCTAssertTrue(parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
    }

    /// A string literal holding X.Y.Z in code (comments, which show app and OS versions as
    /// examples, are not code) is a second version of the package waiting to disagree.
    func testNoOtherVersionStringInSources() throws {
        let sources = Self.packageRoot.appendingPathComponent("Sources")
        guard let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else {
            throw XCTSkip("Sources/ is not beside the tests (run from the package)")
        }
        // Three numbers, not part of four (an IPv4 address is not a version).
        let literal = try NSRegularExpression(pattern: #""[^"\n]*(?<![\d.])\d+\.\d+\.\d+(?![\d.])[^"\n]*""#)
        var found: [String] = []
        for case let url as URL in files where url.pathExtension == "swift" {
            let relative = String(url.path.dropFirst(Self.packageRoot.path.count + 1))
            let text = try String(contentsOf: url, encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = String(line)
                if code.trimmingCharacters(in: .whitespaces).hasPrefix("//") { continue }
                let range = NSRange(code.startIndex..., in: code)
                guard literal.firstMatch(in: code, range: range) != nil else { continue }
                if relative == "Sources/MeasurementEvents/PackageVersion.swift" { continue }
                found.append("\(relative):\(index + 1): \(code.trimmingCharacters(in: .whitespaces))")
            }
        }
        XCTAssertEqual(found, [], "declare the version once, in PackageVersion.current")
    }

    func testTheReadmeInstallsTheCurrentVersion() throws {
        let readme = try packageFile("README.md")
        XCTAssertTrue(
            readme.contains("from: \"\(PackageVersion.current)\""),
            "README.md's installation section should depend on from: \"\(PackageVersion.current)\"")
    }

    func testTheChangelogHasAnEntryForTheCurrentVersion() throws {
        let changelog = try packageFile("CHANGELOG.md")
        XCTAssertTrue(
            changelog.contains("## [\(PackageVersion.current)]"),
            "CHANGELOG.md has no '## [\(PackageVersion.current)]' entry")
    }
}
