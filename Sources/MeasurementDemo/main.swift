import Foundation

// `swift run measurement-demo [section…]`: the bus loop by default, `all` for every section.
let sections: KeyValuePairs<String, () throws -> Void> = [
    "bus": runBusDemo,
    "delivery": runDeliveryDemo,
    // Each module's demo adds its line here.
]

let requested = Array(CommandLine.arguments.dropFirst())
let names = requested.isEmpty ? ["bus"] : requested == ["all"] ? sections.map(\.key) : requested
do {
    for name in names {
        guard let run = sections.first(where: { $0.key == name })?.value else {
            let known = sections.map(\.key).joined(separator: "|")
            FileHandle.standardError.write(Data("error: unknown section '\(name)'\nusage: measurement-demo [all|\(known)]…\n".utf8))
            exit(64)
        }
        try run()
        print()
    }
} catch {
    FileHandle.standardError.write(Data("measurement-demo: \(error)\n".utf8))
    exit(1)
}
