#if os(macOS) || os(Linux)
    import Foundation
    import XCTest

    /// Compiles generated files with the `swiftc` of this toolchain against the `MeasurementEvents`
    /// module this test run was built with, to prove that the generator's output is valid Swift.
    ///
    /// All files go into one module and one compiler run (each catalog has its own `<Module>Events`
    /// enum, so they do not clash): one run checks hundreds of catalogs in seconds. The run goes up
    /// to SIL (`-emit-sil`), so definite-initialisation errors in initialisers count too, and
    /// warnings count as errors, as in the consumer package's CI build.
    struct GeneratedSourceCompiler {
        /// The folder of this build's `.swiftmodule` files: `.build/<configuration>/Modules`.
        let modulesFolder: URL

        /// The compiler's complaints, empty when every file compiled without a warning.
        struct Result {
            var exitCode: Int32
            var diagnostics: String
        }

        init(file: StaticString = #filePath, line: UInt = #line) throws {
            // The test binary lives in `.build/<triple>/<configuration>/`, beside `Modules/`.
            var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
                .deletingLastPathComponent()
            for _ in 0..<4
            where !FileManager.default.fileExists(
                atPath: folder.appendingPathComponent("Modules/MeasurementEvents.swiftmodule").path)
            {
                folder.deleteLastPathComponent()
            }
            modulesFolder = folder.appendingPathComponent("Modules")
            guard
                FileManager.default.fileExists(
                    atPath: modulesFolder.appendingPathComponent("MeasurementEvents.swiftmodule").path)
            else {
                throw XCTSkip(
                    "found no MeasurementEvents.swiftmodule near \(CommandLine.arguments[0]), expected a SwiftPM build folder",
                    file: file, line: line)
            }
        }

        /// Writes `sources` (file name → text) into a temporary folder and compiles them as one module.
        func compile(_ sources: [String: String], moduleName: String = "GeneratedEvents") throws -> Result {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "generated-sources-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            var paths: [String] = []
            for (name, text) in sources.sorted(by: { $0.key < $1.key }) {
                let url = folder.appendingPathComponent(name)
                try Data(text.utf8).write(to: url)
                paths.append(url.path)
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments =
                [
                    "swiftc", "-swift-version", "6", "-parse-as-library", "-warnings-as-errors", "-wmo", "-emit-sil",
                    "-o", "/dev/null",
                    "-module-name", moduleName, "-I", modulesFolder.path,
                    // MeasurementEvents' own C target (atomics), as SwiftPM shows it to every client.
                    "-Xcc",
                    "-fmodule-map-file="
                        + modulesFolder.deletingLastPathComponent()
                        .appendingPathComponent("CMeasurementAtomics.build/module.modulemap").path,
                ] + paths
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            // Read before waiting: a full pipe would block the compiler.
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return Result(exitCode: process.terminationStatus, diagnostics: text)
        }
    }
#endif
