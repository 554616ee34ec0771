import Foundation

/// The `measurement-events` command line, parsed and run in-process so that tests need no process.
///
/// ```swift
/// let command = try GeneratorCommand.parse(["plan", "--format", "json", "--package-path", "App"])
/// exit(command.run(output: { print($0) }, errorOutput: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }))
/// ```
package struct GeneratorCommand: Hashable, Sendable {
    /// What the command does.
    package enum Subcommand: Hashable, Sendable {
        /// Generate all catalogs, or the named ones.
        case generate([String])
        /// List the generated files that are out of date; write nothing.
        case check
        /// Print every event of every catalog in a format.
        case plan(TrackingPlanWriter.Format)
        /// Print which planned events the coverage files list; fail below `minimum` percent.
        case coverage([String], minimum: Double?)
        /// List the raw posts in `Sources/` of names no catalog declares.
        case lint
        /// Print the usage.
        case help
    }

    /// What the command does.
    package var subcommand: Subcommand
    /// The package root: holds `Events/` and `Sources/`. Defaults to the current directory.
    package var packagePath: String
    /// Coverage files for `plan --format html` (`--coverage <file>`, repeatable).
    package var coverageFiles: [String] = []
    /// Each module's folder relative to the package root (`--module-folder <Module>=<folder>`,
    /// repeatable, as the command plugin passes them); `nil` asks SwiftPM for the manifest.
    package var moduleFolders: [String: String]?

    /// Makes a command without parsing.
    ///
    /// - Parameters:
    ///   - subcommand: what the command does.
    ///   - packagePath: the package root, relative to the current directory or absolute.
    package init(subcommand: Subcommand, packagePath: String = ".") {
        self.subcommand = subcommand
        self.packagePath = packagePath
    }

    /// The exit code of a run that did what was asked.
    package static let exitSuccess: Int32 = 0
    /// The exit code of a failure of the input: invalid or stale catalogs, an unwritable file.
    package static let exitFailure: Int32 = 1
    /// The exit code of a command line that cannot be run as written (`EX_USAGE`).
    package static let exitUsage: Int32 = 64

    /// The help text `--help` prints.
    package static let usage = """
        usage: measurement-events <subcommand> [--package-path <root>]

        subcommands:
          generate [catalog…]             write Sources/<Module>/events_<Module>.swift (and, past 50 events,
                                          its parts events_<Module>+N.swift) for every catalog in
                                          Events/, or for the named ones (DemoFeed or Events/DemoFeed.json)
          check                           exit 1 and list the generated files that are stale, missing or orphaned; writes nothing
          plan [--format markdown|json|jsonschema|html] [--coverage <file>]…
                                          print every event of every catalog; html takes the coverage
                                          files the test kit wrote
          coverage <file>… [--minimum <percent>]
                                          print how many planned events the tests posted and which never;
                                          exit 1 below the minimum
          lint                            exit 1 and list, with file and line, the MeasurementEvent.post("…") calls in Sources/
                                          whose name no catalog declares
          inspect [--port <n>] [--host <address>] [--allow-host <name>]… [--capacity <n>]
                                          serve the local event inspector (see `inspect --help`)

        options:
          --package-path <root>           the package holding Events/ and Sources/ (default: the current directory)
          --module-folder <Module>=<folder>
                                          where a module's sources are, relative to the root (repeatable);
                                          without it, the targets' path: is read from Package.swift with SwiftPM
          -h, --help                      show this help
        """

    static let subcommandNames = ["generate", "check", "plan", "coverage", "lint", "inspect", "help"]

    /// Reads the arguments after the program name.
    ///
    /// - Parameter arguments: the command line without the program name.
    /// - Returns: the command to run.
    /// - Throws: ``UsageError`` for an unknown subcommand or option, or a missing value, with a
    ///   "did you mean" suggestion when one is close.
    package static func parse(_ arguments: [String]) throws(UsageError) -> GeneratorCommand {
        var packagePath = "."
        var format: TrackingPlanWriter.Format?
        var coverageFiles: [String] = []
        var minimum: Double?
        var moduleFolders: [String: String]?
        var positionals: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            let (option, inlineValue) = splitOption(argument)
            switch option {
            case "-h", "--help":
                return GeneratorCommand(subcommand: .help, packagePath: packagePath)
            case "--package-path":
                packagePath = try value(inlineValue, &remaining, for: "--package-path <root>")
            case "--format":
                let formats = TrackingPlanWriter.Format.allCases.map(\.rawValue).joined(separator: "|")
                let text = try value(inlineValue, &remaining, for: "--format <\(formats)>")
                guard let parsed = TrackingPlanWriter.Format(rawValue: text) else {
                    throw UsageError(
                        "the value '\(text)' is invalid for '--format <\(formats)>'",
                        suggestion: closestMatch(to: text, among: TrackingPlanWriter.Format.allCases.map(\.rawValue)))
                }
                format = parsed
            case "--coverage":
                coverageFiles.append(try value(inlineValue, &remaining, for: "--coverage <file>"))
            case "--module-folder":
                let option = "--module-folder <Module>=<folder>"
                let text = try value(inlineValue, &remaining, for: option)
                guard let equals = text.firstIndex(of: "="), equals != text.startIndex,
                    let folder = ModuleFolders.relativeFolder(String(text[text.index(after: equals)...]))
                else {
                    throw UsageError(
                        "the value '\(text)' is invalid for '\(option)', expected a module name, '=' and a folder inside the package"
                    )
                }
                moduleFolders = (moduleFolders ?? [:]).merging([String(text[..<equals]): folder]) { _, new in new }
            case "--minimum":
                let text = try value(inlineValue, &remaining, for: "--minimum <percent>")
                guard let percent = Double(text), percent >= 0, percent <= 100 else {
                    throw UsageError("the value '\(text)' is invalid for '--minimum <percent>', expected 0 to 100")
                }
                minimum = percent
            case "--":
                positionals += remaining
                remaining = []
            default:
                if argument.hasPrefix("-") && argument.count > 1 {
                    throw UsageError(
                        "unknown option '\(argument)'",
                        suggestion: closestMatch(
                            to: option,
                            among: [
                                "--package-path", "--format", "--coverage", "--minimum", "--module-folder", "--help",
                            ]))
                }
                positionals.append(argument)
            }
        }
        guard let name = positionals.first else { throw UsageError("missing subcommand") }
        let operands = Array(positionals.dropFirst())
        let subcommand: Subcommand
        switch name {
        case "generate":
            subcommand = .generate(operands)
        case "check":
            try expectNoOperands(operands, for: "check")
            subcommand = .check
        case "plan":
            try expectNoOperands(operands, for: "plan")
            subcommand = .plan(format ?? .markdown)
        case "coverage":
            guard !operands.isEmpty else { throw UsageError("missing coverage file for 'coverage'") }
            subcommand = .coverage(operands, minimum: minimum)
        case "lint":
            try expectNoOperands(operands, for: "lint")
            subcommand = .lint
        case "help":
            subcommand = .help
        default:
            throw UsageError("unknown subcommand '\(name)'", suggestion: closestMatch(to: name, among: subcommandNames))
        }
        if format != nil, name != "plan" {
            throw UsageError("'--format' applies to 'plan' only")
        }
        if !coverageFiles.isEmpty, !(name == "plan" && format == .html) {
            throw UsageError("'--coverage' applies to 'plan --format html' only")
        }
        if minimum != nil, name != "coverage" {
            throw UsageError("'--minimum' applies to 'coverage' only")
        }
        var command = GeneratorCommand(subcommand: subcommand, packagePath: packagePath)
        command.coverageFiles = coverageFiles
        command.moduleFolders = moduleFolders
        return command
    }

    private static func splitOption(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    private static func value(_ inline: String?, _ remaining: inout ArraySlice<String>, for option: String)
        throws(UsageError) -> String
    {
        if let inline { return inline }
        guard let next = remaining.popFirst(), !next.hasPrefix("--") else {
            throw UsageError("missing value for '\(option)'")
        }
        return next
    }

    private static func expectNoOperands(_ operands: [String], for subcommand: String) throws(UsageError) {
        if let first = operands.first { throw UsageError("unexpected argument '\(first)' for '\(subcommand)'") }
    }

    // MARK: Running

    /// Runs the command.
    ///
    /// - Parameters:
    ///   - currentDirectory: what a relative ``packagePath`` is relative to.
    ///   - output: receives the results, a line or a block at a time.
    ///   - errorOutput: receives the problems.
    /// - Returns: ``exitSuccess``, ``exitFailure`` or ``exitUsage``.
    package func run(
        currentDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
        output: (String) -> Void, errorOutput: (String) -> Void
    ) -> Int32 {
        let root = URL(fileURLWithPath: packagePath, relativeTo: currentDirectory).standardizedFileURL
        if case .help = subcommand {
            output(Self.usage)
            return Self.exitSuccess
        }
        let folders: ModuleFolders
        if let moduleFolders {
            folders = ModuleFolders(custom: moduleFolders.filter { $0.value != "Sources/\($0.key)" })
        } else {
            do { folders = try ModuleFolders.read(packageRoot: root) } catch {
                errorOutput("error: \(error)")
                return Self.exitFailure
            }
        }
        let generator = PackageGenerator(packageRoot: root, moduleFolders: folders)
        do {
            switch subcommand {
            case .help:
                output(Self.usage)
            case .generate(let modules):
                let report = try generator.generate(modules: modules)
                for path in report.written { output("wrote \(path)") }
                for path in report.removed { output("removed \(path) (no catalog generates it any more)") }
                output(
                    "\(report.written.count + report.unchanged.count) generated files: \(report.written.count) written, \(report.unchanged.count) unchanged"
                )
            case .check:
                let report = try generator.check()
                for path in report.stale { errorOutput("stale: \(path) differs from what generate would write") }
                for path in report.missing { errorOutput("missing: \(path)") }
                for path in report.orphaned {
                    errorOutput(
                        "orphaned: \(path) is generated by no catalog any more (its catalog is gone or moved, or it was a part of a larger catalog)"
                    )
                }
                guard report.isUpToDate else {
                    errorOutput(
                        "\(report.outdated.count) generated file\(report.outdated.count == 1 ? " is" : "s are") out of date; run: swift run measurement-events generate"
                    )
                    return Self.exitFailure
                }
                output("\(report.upToDate.count) generated files are up to date")
            case .plan(.html) where !coverageFiles.isEmpty:
                let files = coverageFiles.map { URL(fileURLWithPath: $0, relativeTo: currentDirectory) }
                output(try generator.htmlPlan(coverageFiles: files).trimmingCharacters(in: .newlines))
            case .plan(let format):
                output(try generator.plan(format: format).trimmingCharacters(in: .newlines))
            case .coverage(let paths, let minimum):
                let files = paths.map { URL(fileURLWithPath: $0, relativeTo: currentDirectory) }
                let coverage = try generator.coverage(files: files)
                output(coverage.summary)
                if let minimum, coverage.percent < minimum {
                    errorOutput(
                        "error: plan coverage \(numberText(coverage.percent.rounded(.down)))% is below the minimum of \(numberText(minimum))%"
                    )
                    return Self.exitFailure
                }
            case .lint:
                let report = try generator.lint()
                for post in report.undeclared { errorOutput(post.description) }
                guard report.undeclared.isEmpty else {
                    let count = report.undeclared.count
                    errorOutput(
                        "\(count) post\(count == 1 ? "" : "s") of undeclared names in \(report.scannedFiles) Swift files under \(report.scannedFolders.joined(separator: " and "))"
                    )
                    return Self.exitFailure
                }
                output(
                    "\(report.scannedFiles) Swift files under \(report.scannedFolders.joined(separator: " and ")) post only declared names"
                )
            }
            return Self.exitSuccess
        } catch {
            switch error {
            case .invalidCatalogs:
                // Diagnostics are already in the compilers' `file:line:column: error:` form.
                errorOutput(
                    error.description.split(separator: "\n").map {
                        $0.contains(": error: ") ? String($0) : "error: \($0)"
                    }.joined(separator: "\n"))
                return Self.exitFailure
            case .unknownCatalog(let name, let known):
                let list = known.isEmpty ? "none" : known.joined(separator: ", ")
                errorOutput(
                    UsageError(
                        "found no catalog '\(name)', expected one of the package's catalogs (\(list))",
                        suggestion: closestMatch(to: moduleName(fromPath: name), among: known)
                    ).description)
                return Self.exitUsage
            case .environment(let problem):
                errorOutput("error: \(problem)")
                return Self.exitFailure
            }
        }
    }
}

/// A command line that cannot be run as written: exit code 64, with a usage line.
package struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the command line: `unknown subcommand 'genrate'`.
    package var message: String
    /// The valid spelling closest to what was written, if any.
    var suggestion: String?

    /// Makes a usage error.
    ///
    /// - Parameters:
    ///   - message: what is wrong with the command line.
    ///   - suggestion: the valid spelling closest to what was written.
    package init(_ message: String, suggestion: String? = nil) {
        self.message = message
        self.suggestion = suggestion
    }

    /// `error: unknown subcommand 'genrate'`, `Did you mean 'generate'?`, and the usage line.
    package var description: String {
        var lines = ["error: \(message)"]
        if let suggestion { lines.append("Did you mean '\(suggestion)'?") }
        lines.append(String(GeneratorCommand.usage.prefix { $0 != "\n" }))
        lines.append("Run 'measurement-events --help' for more.")
        return lines.joined(separator: "\n")
    }
}
