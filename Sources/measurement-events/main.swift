import Foundation
import MeasurementEventsGenerator
import MeasurementEventsInspectorServer

// `measurement-events generate|check|plan|lint|inspect [--package-path <root>]`; everything lives in the
// MeasurementEventsGenerator library so that it is tested in-process.

// Both unbuffered: with the two streams joined (`2>&1 | …`, the command plugin), lines stay in order.
func printOutput(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

// `inspect` serves until stopped; it lives with the inspector, not the generator.
if CommandLine.arguments.dropFirst().first == "inspect" {
    do {
        let command = try InspectCommand.parse(Array(CommandLine.arguments.dropFirst(2)))
        exit(command.run(output: printOutput, errorOutput: printError))
    } catch {
        printError(error.description + "\n" + InspectCommand.usage)
        exit(GeneratorCommand.exitUsage)
    }
}

do {
    let command = try GeneratorCommand.parse(Array(CommandLine.arguments.dropFirst()))
    exit(command.run(output: printOutput, errorOutput: printError))
} catch {
    printError(error.description)
    exit(GeneratorCommand.exitUsage)
}
