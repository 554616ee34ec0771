import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory generate-measurement-events [catalog…]`
///
/// Runs `measurement-events generate` on the package the command is run in — this package or
/// any package that depends on MeasurementEvents: it reads that package's `Events/*.json` and
/// writes `events_<Module>.swift` (and its parts `events_<Module>+N.swift` past 50 events) into
/// each module's folder: `Sources/<Module>/`, or the folder the target names with `path:` (the plugin passes every target's folder as SwiftPM resolved it, with
/// `--module-folder`, so the tool need not ask SwiftPM again). The generated files are ordinary, committed
/// sources (so that code review sees them and builds need no plugin), which is why the plugin
/// asks to write into the package directory.
///
/// What it says stays in order through a pipe. The tool's two streams are read from one pipe.
/// When it succeeds, its lines are printed (standard output, nothing else competes); when it
/// fails, every line and the failure summary, last, go out as the plugin's error diagnostics, one
/// channel: printing the problems and throwing an error made SwiftPM show the error first.
@main
struct GenerateMeasurementEvents: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "measurement-events")
        let root = context.package.directoryURL
        let header =
            "measurement-events: generating from \(root.path)/Events into each module's folder (Sources/<Module>/ or the target's path:) in \(root.path) (the generated files are committed sources)"
        // Every source module's folder, relative to the package root, as SwiftPM resolved it.
        var folders: [String] = []
        // (`Target.directoryURL` needs tools 6.1; the concrete targets' has been there since 6.0.)
        for target in context.package.targets {
            let directory: URL
            if let swift = target as? SwiftSourceModuleTarget {
                directory = swift.directoryURL
            } else if let clang = target as? ClangSourceModuleTarget {
                directory = clang.directoryURL
            } else {
                continue
            }
            let folder = directory.standardizedFileURL.path
            let prefix = root.standardizedFileURL.path + "/"
            guard folder.hasPrefix(prefix) else { continue }
            folders += ["--module-folder", "\(target.name)=\(folder.dropFirst(prefix.count))"]
        }
        let pipe = Pipe()
        let process = Process()
        process.executableURL = tool.url
        process.arguments = ["generate", "--package-path", root.path] + folders + arguments
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let failed = process.terminationReason != .exit || process.terminationStatus != 0
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        guard failed else {
            print(([header] + lines).joined(separator: "\n"))
            return
        }
        // SwiftPM writes "error: " before each diagnostic.
        for line in lines { Diagnostics.error(line.hasPrefix("error: ") ? String(line.dropFirst(7)) : line) }
        Diagnostics.error(
            "measurement-events generate failed (exit status \(process.terminationStatus)) for \(root.path); see the problems listed above — no generated file was written when a catalog is invalid"
        )
    }
}
