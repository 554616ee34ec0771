import Foundation
import XCTest

/// A throwaway package root (`Events/`, `Sources/<Module>/`) in the temporary directory.
struct TemporaryPackage {
    let root: URL

    init(modules: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("measurement-events-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("Events"), withIntermediateDirectories: true)
        for module in modules {
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("Sources/\(module)"), withIntermediateDirectories: true)
        }
    }

    /// A copy of a package folder (only `Events/` and `Sources/`).
    init(copying source: URL) throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("measurement-events-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for folder in ["Events", "Sources"] {
            try FileManager.default.copyItem(
                at: source.appendingPathComponent(folder), to: root.appendingPathComponent(folder))
        }
    }

    func write(_ relativePath: String, _ text: String) throws {
        let url = root.appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func read(_ relativePath: String) -> String? {
        FileManager.default.contents(atPath: root.appendingPathComponent(relativePath).path).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// Every file under the root with its bytes and modification date, to prove nothing was touched.
    func snapshot() throws -> [String: FileState] {
        var states: [String: FileState] = [:]
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            let relative = String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))
            states[relative] = FileState(
                contents: try Data(contentsOf: url), modified: attributes[.modificationDate] as? Date,
                inode: (attributes[.systemFileNumber] as? NSNumber)?.uint64Value)
        }
        return states
    }

    struct FileState: Equatable {
        var contents: Data
        var modified: Date?
        /// An atomic write replaces the file, so a new inode shows a write even within one clock tick.
        var inode: UInt64?
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}

/// The package this test file belongs to, and its golden fixture package.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let golden = root.appendingPathComponent("Tests/MeasurementEventsGeneratorGolden")
}
