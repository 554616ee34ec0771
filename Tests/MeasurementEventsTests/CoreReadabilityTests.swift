import Foundation
import XCTest

/// The core stays small enough to verify by reading: short files, and few unsafe constructs,
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

    func testNoCoreFileIsLongerThan300Lines() throws {
        let long = try files(in: ["Sources/MeasurementEvents"], extensions: ["swift"])
            .filter { $0.lines.count > 301 }  // the last line ends with a newline
            .map { "\($0.path): \($0.lines.count - 1) lines" }
        XCTAssertEqual(long, [], "split the concept, or move what is not the core out of it")
    }

    func testFewerThanTenLinesOfTheCoreUseUnsafeConstructs() throws {
        let unsafe = try NSRegularExpression(
            pattern:
                #"unsafeBitCast|assumingMemoryBound|unowned\(unsafe\)|@exclusivity\(unchecked\)|withUnsafeBytes\(of:|_Thread_local|withUnsafePointer\(to:|Unmanaged|UnsafeRawPointer|UnsafePointer<|unsafeAddress"#
        )
        var found: [String] = []
        for file in try files(
            in: ["Sources/MeasurementEvents", "Sources/CMeasurementAtomics"], extensions: ["swift", "c", "h"])
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
