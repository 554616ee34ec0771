import Foundation

// `swift run measurement-demo [section…]`: every section by default, or the ones named.
let sections: KeyValuePairs<String, () throws -> Void> = [
    "bus": runBusDemo,
    "delivery": runDeliveryDemo,
    "identity": runIdentityDemo,
    "impressions": runImpressionsDemo,
    "standard": runStandardCallsDemo,
    "plan": runPlanConformanceDemo,
    "server": runServerDemo,
]
// Needs a running `measurement-events inspect`, so only when named.
let onRequest: KeyValuePairs<String, () throws -> Void> = ["inspect": runInspectorDemo]

let requested = Array(CommandLine.arguments.dropFirst())
let names = requested.isEmpty || requested == ["all"] ? sections.map(\.key) : requested
do {
    for name in names {
        guard let run = (sections.first { $0.key == name } ?? onRequest.first { $0.key == name })?.value else {
            let known = (sections.map(\.key) + onRequest.map(\.key)).joined(separator: "|")
            FileHandle.standardError.write(
                Data("error: unknown section '\(name)'\nusage: measurement-demo [all|\(known)]…\n".utf8))
            exit(64)
        }
        try run()
        print()
    }
} catch {
    FileHandle.standardError.write(Data("measurement-demo: \(error)\n".utf8))
    exit(1)
}
