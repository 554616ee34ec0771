import Foundation
import MeasurementEventsGenerator

// `measurement-events generate|check|plan [--package-path <root>]`; everything lives in the
// MeasurementEventsGenerator library so that it is tested in-process.

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

do {
    let command = try GeneratorCommand.parse(Array(CommandLine.arguments.dropFirst()))
    exit(command.run(output: { print($0) }, errorOutput: printError))
} catch {
    printError(error.description)
    exit(GeneratorCommand.exitUsage)
}
