import Foundation

/// Where each module's sources are, relative to the package root, as the package's manifest says:
/// `Sources/<Module>` unless the target names a folder with `path:`. The generator writes
/// `events_<Module>.swift` into that folder and checks it is there.
///
/// ```swift
/// // .target(name: "DemoFeed", path: "Tests/Fixtures/Demo/DemoFeed") in Package.swift:
/// let folders = try ModuleFolders.read(packageRoot: URL(fileURLWithPath: "."))
/// folders.folder(of: "DemoFeed")  // "Tests/Fixtures/Demo/DemoFeed"
/// folders.folder(of: "Checkout")  // "Sources/Checkout"
/// ```
///
/// The command plugin passes every target's folder as SwiftPM resolved it (`--module-folder`);
/// the command line, run on its own, asks SwiftPM for the manifest (``read(packageRoot:)``).
package struct ModuleFolders: Hashable, Sendable {
    /// The folders that differ from `Sources/<Module>`, by module name, relative to the package root.
    package var custom: [String: String]

    /// Makes the folders of a package.
    ///
    /// - Parameter custom: the folders that differ from `Sources/<Module>`, by module name,
    ///   relative to the package root.
    package init(custom: [String: String] = [:]) {
        self.custom = custom
    }

    /// The folder of a module's sources, relative to the package root: `Sources/DemoFeed`.
    ///
    /// - Parameter module: the module (target) name.
    package func folder(of module: String) -> String {
        custom[module] ?? "Sources/\(module)"
    }

    /// A folder as the manifest or the command line writes it, relative to the package root
    /// without `./` or a trailing `/`; `nil` for an absolute path or one that leaves the package.
    ///
    /// - Parameter text: the folder as written.
    package static func relativeFolder(_ text: String) -> String? {
        var parts = text.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        parts.removeAll { $0 == "." }
        guard !text.hasPrefix("/"), !parts.isEmpty, !parts.contains("..") else { return nil }
        return parts.joined(separator: "/")
    }

    /// Reads the targets' folders from the JSON that `swift package dump-package` prints.
    ///
    /// SwiftPM writes `"path": null` for a target in its conventional folder and the folder the
    /// manifest gives otherwise (`PackageDescription.Target.path`, documented at
    /// https://developer.apple.com/documentation/packagedescription/target/path).
    ///
    /// - Parameters:
    ///   - data: the printed JSON.
    ///   - manifest: the manifest's path, for messages.
    /// - Returns: the folders of the targets with a `path:`.
    /// - Throws: ``GeneratorError`` when the JSON has no `targets` array of named targets.
    package static func fromManifestDump(_ data: Data, manifest: String) throws(GeneratorError) -> ModuleFolders {
        let targets =
            ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["targets"] as? [[String: Any]]
        guard let targets else {
            throw GeneratorError(
                "cannot read the targets of \(manifest): `swift package dump-package` printed no \"targets\" array, expected the manifest as JSON"
            )
        }
        var custom: [String: String] = [:]
        for (index, target) in targets.enumerated() {
            guard let name = target["name"] as? String else {
                throw GeneratorError(
                    "cannot read the targets of \(manifest): targets[\(index)] has no \"name\", expected a string")
            }
            guard let path = target["path"] as? String else { continue }
            guard let folder = relativeFolder(path) else {
                throw GeneratorError(
                    "cannot use the folder of target \(name) in \(manifest): found path \"\(path)\", expected a folder inside the package"
                )
            }
            custom[name] = folder
        }
        return ModuleFolders(custom: custom)
    }

    /// Asks SwiftPM for the folders of the package at `packageRoot`: runs
    /// `swift package dump-package`, which evaluates `Package.swift` and builds nothing.
    ///
    /// A folder without `Package.swift` (a bare `Events/` and `Sources/`) has the conventional
    /// folders. SwiftPM runs with a scratch folder of its own: the package's `.build` may be held
    /// by the command that runs this one (`swift run measurement-events check`, `swift test`).
    ///
    /// - Parameter packageRoot: the folder holding `Package.swift`.
    /// - Returns: the folders of the targets with a `path:`.
    /// - Throws: ``GeneratorError`` when SwiftPM cannot be run or fails, with what it said.
    package static func read(packageRoot: URL) throws(GeneratorError) -> ModuleFolders {
        let manifest = packageRoot.appendingPathComponent("Package.swift")
        guard FileManager.default.fileExists(atPath: manifest.path) else { return ModuleFolders() }
        #if os(macOS) || os(Linux)
            let scratch = FileManager.default.temporaryDirectory
                .appendingPathComponent("measurement-events-manifest-\(UUID().uuidString)", isDirectory: true)
            defer { try? FileManager.default.removeItem(at: scratch) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "swift", "package", "--package-path", packageRoot.path, "--scratch-path", scratch.path, "dump-package",
            ]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            do { try process.run() } catch {
                throw GeneratorError(
                    "cannot run `swift package dump-package` to read the targets' folders of \(manifest.path): \(error.localizedDescription); pass --module-folder <Module>=<folder> for each target instead"
                )
            }
            // Both pipes are read to their end before waiting: a full pipe would block SwiftPM.
            let errorData = LockedData()
            let errorReader = Thread { errorData.set(errors.fileHandleForReading.readDataToEndOfFile()) }
            errorReader.start()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let said = String(decoding: errorData.wait(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                throw GeneratorError(
                    "cannot read the targets' folders of \(manifest.path): `swift package dump-package` exited with status \(process.terminationStatus)\(said.isEmpty ? "" : ": \(said)"); pass --module-folder <Module>=<folder> for each target instead"
                )
            }
            return try fromManifestDump(data, manifest: manifest.path)
        #else
            throw GeneratorError(
                "cannot run SwiftPM on this platform to read the targets' folders of \(manifest.path); pass --module-folder <Module>=<folder> for each target instead"
            )
        #endif
    }
}

#if os(macOS) || os(Linux)
    /// The standard error of a child process, read on a thread of its own and handed over once.
    private final class LockedData: @unchecked Sendable {  // Sendable: `data` is read and written under `condition`.
        private let condition = NSCondition()
        private var data: Data?

        func set(_ value: Data) {
            condition.lock()
            data = value
            condition.signal()
            condition.unlock()
        }

        func wait() -> Data {
            condition.lock()
            defer { condition.unlock() }
            while data == nil { condition.wait() }
            return data ?? Data()
        }
    }
#endif
