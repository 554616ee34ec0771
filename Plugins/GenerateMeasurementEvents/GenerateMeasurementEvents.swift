import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory generate-measurement-events [catalog…]`
///
/// Runs `measurement-events generate` on the package the command is run in — this package or
/// any package that depends on MeasurementEvents: it reads that package's `Events/*.json` and
/// writes `Sources/<Module>/events_<Module>.swift`. The generated files are ordinary, committed
/// sources (so that code review sees them and builds need no plugin), which is why the plugin
/// asks to write into the package directory.
@main
struct GenerateMeasurementEvents: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "measurement-events")
        let root = context.package.directoryURL
        // One stream for everything, in order: the tool's problems and its summary share the
        // plugin's standard output, so that through a pipe the summary still comes last.
        let output = FileHandle.standardOutput
        output.write(
            Data(
                "measurement-events: generating from \(root.path)/Events into \(root.path)/Sources/<Module>/ (the generated files are committed sources)\n"
                    .utf8))
        let process = Process()
        process.executableURL = tool.url
        process.arguments = ["generate", "--package-path", root.path] + arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw GenerationFailed(status: process.terminationStatus, root: root.path)
        }
    }
}

struct GenerationFailed: Error, CustomStringConvertible {
    var status: Int32
    var root: String

    var description: String {
        "measurement-events generate failed (exit status \(status)) for \(root); see the problems listed above — no generated file was written when a catalog is invalid"
    }
}
