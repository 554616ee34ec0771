import Foundation
import XCTest

/// Apple requires every SDK that calls a "required reason" API to ship a `PrivacyInfo.xcprivacy`
/// declaring it, with a documented reason. These tests read each library module's sources, find
/// the APIs it calls, and check its manifest, so that a new call cannot ship undeclared.
final class PrivacyManifestTests: XCTestCase {
    private static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// The modules that ship in a library product (the JSON parser as a dependency of the plan and HTTP).
    private static let libraryModules = [
        "MeasurementEvents", "MeasurementEventsTesting", "MeasurementEventsPlan", "MeasurementEventsJSON",
        "ImpressionTracking", "EventTriggers", "MeasurementEventsHTTP",
    ]

    /// Apple's categories, the Swift spellings of their APIs, and the reasons that fit what this
    /// package does with them (none fits disk space or active keyboards: using them needs a decision).
    private static let categories: [(category: String, pattern: String, reasons: Set<String>)] = [
        (
            "NSPrivacyAccessedAPICategoryFileTimestamp",
            #"\b(attributesOfItem|creationDate|modificationDate|fileModificationDate|contentModificationDateKey|creationDateKey|getattrlist\w*|fgetattrlist|f?stat|fstatat|lstat)\b"#,
            ["C617.1"]
        ),
        (
            "NSPrivacyAccessedAPICategorySystemBootTime",
            #"\b(systemUptime|mach_absolute_time|mach_continuous_time|uptimeNanoseconds|CLOCK_BOOTTIME)\b"#,
            ["35F9.1", "8FFB.1"]
        ),
        (
            "NSPrivacyAccessedAPICategoryDiskSpace",
            #"\b(volumeAvailableCapacity\w*|volumeTotalCapacity\w*|systemFreeSize|systemSize|f?statv?fs)\b"#, []
        ),
        ("NSPrivacyAccessedAPICategoryActiveKeyboards", #"\bactiveInputModes\b"#, []),
        ("NSPrivacyAccessedAPICategoryUserDefaults", #"\b(UserDefaults|NSUserDefaults)\b"#, ["CA92.1"]),
    ]

    private struct Manifest {
        var tracking: Bool
        var collectedDataTypes: [Any]
        var reasons: [String: [String]]
    }

    private func manifest(of module: String) throws -> Manifest? {
        let url = Self.sources.appendingPathComponent(module).appendingPathComponent("PrivacyInfo.xcprivacy")
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil)
        let root = try XCTUnwrap(plist as? [String: Any], "\(module): the manifest is not a dictionary")
        let types = try XCTUnwrap(
            root["NSPrivacyAccessedAPITypes"] as? [[String: Any]], "\(module): NSPrivacyAccessedAPITypes")
        var reasons: [String: [String]] = [:]
        for entry in types {
            let category = try XCTUnwrap(
                entry["NSPrivacyAccessedAPIType"] as? String, "\(module): NSPrivacyAccessedAPIType")
            reasons[category] = try XCTUnwrap(
                entry["NSPrivacyAccessedAPITypeReasons"] as? [String], "\(module): reasons")
        }
        return Manifest(
            tracking: try XCTUnwrap(root["NSPrivacyTracking"] as? Bool, "\(module): NSPrivacyTracking"),
            collectedDataTypes: try XCTUnwrap(
                root["NSPrivacyCollectedDataTypes"] as? [Any], "\(module): NSPrivacyCollectedDataTypes"),
            reasons: reasons)
    }

    /// The categories whose APIs the module's sources call.
    private func categoriesUsed(by module: String) throws -> Set<String> {
        let directory = Self.sources.appendingPathComponent(module)
        var text = ""
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            // Comments name APIs without calling them.
            text += try String(contentsOf: file, encoding: .utf8)
                .split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                .joined(separator: "\n")
        }
        return Set(
            try Self.categories.filter { item in
                try NSRegularExpression(pattern: item.pattern).firstMatch(
                    in: text, range: NSRange(text.startIndex..., in: text)) != nil
            }.map(\.category))
    }

    func testEveryRequiredReasonAPIAModuleCallsIsDeclaredWithADocumentedReason() throws {
        for module in Self.libraryModules {
            let used = try categoriesUsed(by: module)
            guard let manifest = try manifest(of: module) else {
                XCTAssertEqual(used, [], "\(module) calls required-reason APIs but ships no PrivacyInfo.xcprivacy")
                continue
            }
            for category in used {
                let declared = Set(manifest.reasons[category] ?? [])
                let expected = Self.categories.first { $0.category == category }?.reasons ?? []
                XCTAssertFalse(declared.isEmpty, "\(module): \(category) is used but not declared")
                XCTAssertTrue(
                    declared.isSubset(of: expected),
                    "\(module): \(category) reasons \(declared.sorted()), expected among \(expected.sorted())")
            }
            XCTAssertEqual(Set(manifest.reasons.keys), used, "\(module): declared categories the module does not use")
        }
    }

    func testTheModulesThatReadFileMetadataOrBootTimeShipAManifest() throws {
        XCTAssertEqual(
            try manifest(of: "MeasurementEventsHTTP")?.reasons,
            [
                "NSPrivacyAccessedAPICategoryFileTimestamp": ["C617.1"],
                "NSPrivacyAccessedAPICategorySystemBootTime": ["35F9.1"],
            ])
        XCTAssertEqual(
            try manifest(of: "ImpressionTracking")?.reasons,
            ["NSPrivacyAccessedAPICategorySystemBootTime": ["35F9.1", "8FFB.1"]])
    }

    func testManifestsDeclareNoTrackingAndNoCollectedData() throws {
        // The package sends only what the app posts, to the endpoint the app configures; the app declares that data.
        for module in Self.libraryModules {
            guard let manifest = try manifest(of: module) else { continue }
            XCTAssertFalse(manifest.tracking, module)
            XCTAssertTrue(manifest.collectedDataTypes.isEmpty, module)
        }
    }

    func testEachManifestIsAResourceOfItsTargetInThePackage() throws {
        let package = try String(
            contentsOf: Self.sources.deletingLastPathComponent().appendingPathComponent("Package.swift"),
            encoding: .utf8)
        for module in Self.libraryModules where try manifest(of: module) != nil {
            let declaration =
                package.range(of: "name: \"\(module)\"").map { package[$0.upperBound...].prefix(200) } ?? ""
            XCTAssertTrue(
                declaration.contains(#"resources: [.copy("PrivacyInfo.xcprivacy")]"#),
                "\(module): not a resource in Package.swift")
        }
    }
}
