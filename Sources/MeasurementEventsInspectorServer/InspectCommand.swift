import Foundation

/// `measurement-events inspect [--port N] [--host H] [--allow-host NAME]… [--capacity N]
/// [--package-path P]`: starts the inspector and prints its address.
package struct InspectCommand: Sendable {
    package var configuration = InspectorServer.Configuration()
    package var packagePath: String?
    package var showsHelp = false

    package static let usage = """
        usage: measurement-events inspect [--port <n>] [--host <address>] [--allow-host <name>]… [--capacity <n>] [--package-path <root>]

        Serves the local event inspector: open the printed address in a browser, and in the app set
          configuration.trail = InspectorConnection.local()   (MeasurementEventsInspector; off in release builds)
        or point an HTTPTracker's encoder base URL at it (/v1/batch, /2/httpapi, /batch, /mp/collect, /debug/mp/collect, /v1/logs).

        options:
          --port <n>             the port (default 9400; 0 picks a free one)
          --host <address>       the IPv4 address to bind (default 127.0.0.1: this machine only)
          --allow-host <name>    a Host name or address the inspector also answers to (for a device on the network)
          --capacity <n>         how many events are kept (default 10000; older ones are evicted, counted)
          --package-path <root>  show each event's description and rules from the catalogs in <root>/Events
        JSON API: GET /api/events[?since=&name=&status=&limit=], GET /api/counts, POST /api/reset
        """

    /// A usage error: what is wrong.
    package struct UsageError: Error, CustomStringConvertible {
        package var description: String
    }

    /// Reads the arguments after `inspect`.
    package static func parse(_ arguments: [String]) throws(UsageError) -> InspectCommand {
        var command = InspectCommand()
        var index = 0
        func value(_ option: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(description: "\(option) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-h", "--help": command.showsHelp = true
            case "--port":
                let text = try value(argument)
                guard let port = UInt16(text) else { throw UsageError(description: "--port \(text): expected 0…65535") }
                command.configuration.port = port
            case "--host": command.configuration.host = try value(argument)
            case "--allow-host": command.configuration.allowedHostNames.append(try value(argument))
            case "--capacity":
                let text = try value(argument)
                guard let capacity = Int(text), capacity > 0 else {  // checked: nil
                    throw UsageError(description: "--capacity \(text): expected a positive number")
                }
                command.configuration.capacity = capacity
            case "--package-path": command.packagePath = try value(argument)
            default: throw UsageError(description: "unknown option '\(argument)' for 'inspect'")
            }
            index += 1
        }
        return command
    }

    /// Starts the server and blocks forever (until the process is stopped).
    ///
    /// - Returns: an exit code when it could not start.
    package func run(output: (String) -> Void, errorOutput: (String) -> Void) -> Int32 {
        if showsHelp {
            output(Self.usage)
            return 0
        }
        var catalog: InspectorCatalog?
        if let packagePath {
            do {
                let loaded = try InspectorCatalog.load(
                    packageRoot: URL(fileURLWithPath: packagePath, isDirectory: true))
                catalog = loaded.catalog
                for diagnostic in loaded.diagnostics { errorOutput("catalog: \(diagnostic)") }
            } catch {
                errorOutput("cannot read the catalogs in \(packagePath)/Events: \(error); going on without them")
            }
        }
        let server = InspectorServer(configuration: configuration, catalog: catalog)
        do {
            try server.start()
        } catch {
            errorOutput(error.description)
            return 1
        }
        output("MeasurementEvents inspector: \(server.baseURL.absoluteString)/")
        if configuration.host != "127.0.0.1" {
            output(
                "listening on \(configuration.host): a device reaches it at http://<this machine's address>:\(server.port)/ "
                    + "once that name is allowed with --allow-host <address> (other Host headers are refused, against DNS rebinding); "
                    + "anyone on the network can then post and read events")
        }
        while true { Thread.sleep(forTimeInterval: 3_600) }
    }
}
