import Foundation
import XCTest

/// The core and the aggregator stay verifiable by reading: each concept in one place, and few unsafe constructs,
/// each one with a measured reason (Benchmarks/README.md) and its invariant beside it.
final class CoreReadabilityTests: XCTestCase {
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The lines of every file under `folders` with one of `extensions`, by path from the root.
    private func files(in folders: [String], extensions: Set<String>) throws -> [(path: String, lines: [Substring])] {
        var result: [(path: String, lines: [Substring])] = []
        for folder in folders {
            let url = Self.packageRoot.appendingPathComponent(folder)
            guard let found = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) else {
                throw XCTSkip("\(folder) is not beside the tests (run from the package)")
            }
            for case let file as URL in found where extensions.contains(file.pathExtension) {
                let text = try String(contentsOf: file, encoding: .utf8)
                let path = String(file.path.dropFirst(Self.packageRoot.path.count + 1))
                result.append((path, text.split(separator: "\n", omittingEmptySubsequences: false)))
            }
        }
        return result.sorted { $0.path < $1.path }
    }

    /// Where an extension of a core type may live: the file that declares the type, or a file
    /// named for one capability of it (`Type+Capability.swift`). Extensions of types the core
    /// does not declare (`Int`, `Notification.Name`) are capabilities of the core's own
    /// protocols and may live with them, as may a core type's conformance to the protocol a
    /// file is named for (`EventValueConvertible.swift`). One concept, one file, however long (issue 31).
    func testEveryExtensionOfACoreTypeLivesWithItOrInAFileNamedForOneOfItsCapabilities() throws {
        let sources = try files(
            in: ["Sources/MeasurementEvents", "Sources/MeasurementEventsAggregator"], extensions: ["swift"])
        let declaration = try NSRegularExpression(
            pattern:
                #"^(?:(?:public|package|internal|private|fileprivate|final|indirect|@\w+) )*(?:struct|class|enum|protocol|actor) (\w+)"#,
            options: .anchorsMatchLines)
        let extensionPattern = try NSRegularExpression(
            pattern: #"^(?:(?:public|package|internal|private|fileprivate) )*extension (\w+)([^{]*)"#,
            options: .anchorsMatchLines)
        func names(_ pattern: NSRegularExpression, in lines: [Substring], group: Int = 1) -> [String] {
            let text = lines.joined(separator: "\n")
            return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
                Range($0.range(at: group), in: text).map { String(text[$0]) } ?? ""
            }
        }
        var declaredIn: [String: Set<String>] = [:]
        for file in sources {
            for name in names(declaration, in: file.lines) { declaredIn[name, default: []].insert(file.path) }
        }
        var misplaced: [String] = []
        for file in sources {
            let base = URL(fileURLWithPath: file.path).deletingPathExtension().lastPathComponent
            let conformances = names(extensionPattern, in: file.lines, group: 2)
            for (type, conformance) in zip(names(extensionPattern, in: file.lines), conformances) {
                guard let homes = declaredIn[type], !homes.contains(file.path) else { continue }
                if base == type || base.hasPrefix(type + "+") { continue }
                // A conformance to the protocol the file is named for: that protocol's capability.
                if conformance.contains(": \(base)") || conformance.contains(", \(base)") { continue }
                misplaced.append("\(file.path): extension \(type)")
            }
        }
        // Still to fold into their types' files (issue 31, point 1); this list only shrinks.
        let known: Set<String> = [
            "Sources/MeasurementEventsAggregator/Conformance/PlanChecker.swift: extension EventValue",
            "Sources/MeasurementEventsAggregator/Consent.swift: extension EventAggregator",
            "Sources/MeasurementEvents/EventAttribution.swift: extension MeasurementEvent",
            "Sources/MeasurementEvents/MalformedIdentityError.swift: extension IdentityChange",
            "Sources/MeasurementEvents/Matching.swift: extension MeasurementEvent",
            "Sources/MeasurementEvents/Posting.swift: extension MeasurementEvent",
            "Sources/MeasurementEventsAggregator/Privacy/ProcessSalt.swift: extension PersonalDataProcessor",
            "Sources/MeasurementEventsAggregator/Trackers/PersonalDataInClearTracker.swift: extension EventTracker",
        ]
        XCTAssertEqual(
            Set(misplaced).subtracting(known).sorted(), [],
            "put the extension in its type's file, or name the file Type+Capability.swift")
    }

    /// The operations that step outside Swift's safety: reinterpreting memory or a type,
    /// lifetimes managed by hand, exclusivity unchecked, thread-local storage by hand. A pointer
    /// type in a signature is not counted; the operation that makes or reads through it is.
    func testFewerThanTenUnsafeOperationsInTheCoreAndTheAggregator() throws {
        let unsafe = try NSRegularExpression(
            pattern:
                #"unsafeBitCast|unsafeDowncast|assumingMemoryBound|unowned\(unsafe\)|@exclusivity\(unchecked\)|withUnsafeBytes\(of:|_Thread_local|withUnsafe(?:Mutable)?Pointer\(to:|Unmanaged|unsafeAddress"#
        )
        var found: [String] = []
        for file in try files(
            in: ["Sources/MeasurementEvents", "Sources/MeasurementEventsAggregator", "Sources/CMeasurementAtomics"],
            extensions: ["swift", "c", "h"])
        {
            for (index, line) in file.lines.enumerated() {
                let code = String(line)
                if code.trimmingCharacters(in: .whitespaces).hasPrefix("//") { continue }
                if unsafe.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil {
                    found.append("\(file.path):\(index + 1)")
                }
            }
        }
        XCTAssertLessThan(found.count, 10, "each unsafe construct needs a measured saving: \(found)")
    }
}
