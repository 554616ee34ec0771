import Foundation

/// The whole tracking plan, every event of every catalog, for people (Markdown) or for tools (JSON).
///
/// The JSON shape is stable (keys sorted, modules by name, events and args in file order):
///
/// ```json
/// {"modules":[{"catalog":"Events/DemoFeed.json","events":[{"args":[{"description":"…","name":"item_id",
///   "optional":false,"pii":false,"type":"string"}],"category":"feed","description":"…",
///   "name":"feed/item_tapped","type":"click"}],"module":"DemoFeed"}]}
/// ```
///
/// `category` is `null` for events without one.
package enum TrackingPlanWriter {
    /// Who the plan is for.
    package enum Format: String, CaseIterable, Sendable {
        /// A table per module, for people.
        case markdown
        /// One stable JSON document, for tools.
        case json
    }

    /// The plan of `catalogs` in `format`.
    ///
    /// - Parameters:
    ///   - catalogs: valid catalogs, in any order.
    ///   - format: Markdown or JSON.
    /// - Returns: the plan's text.
    package static func plan(_ catalogs: [Catalog], format: Format) -> String {
        switch format {
        case .markdown: return markdown(catalogs)
        case .json: return json(catalogs)
        }
    }

    // MARK: Markdown

    /// The plan as Markdown: a heading and a table of events per module.
    ///
    /// - Parameter catalogs: valid catalogs, in any order; modules are sorted by name.
    /// - Returns: the Markdown text.
    package static func markdown(_ catalogs: [Catalog]) -> String {
        let catalogs = catalogs.sorted { $0.module < $1.module }
        let eventCount = catalogs.reduce(0) { $0 + $1.events.count }
        var out = "# Tracking plan\n\n"
        out += "\(count(catalogs.count, "module")), \(count(eventCount, "event")).\n"
        for catalog in catalogs {
            out += "\n## \(catalog.module)\n\n"
            if let description = catalog.description { out += "\(oneLine(description))\n\n" }
            out += "Catalog: `\(catalog.path)`, generated file: `\(catalog.generatedFilePath)`.\n"
            if catalog.events.isEmpty { out += "\nNo events.\n" }
            for event in catalog.events {
                out += "\n### `\(event.name)`\n\n"
                out += "\(oneLine(event.description))\n\n"
                out += "Type: \(event.type.name)"
                if let category = event.category { out += " · Category: \(oneLine(category))" }
                out += "\n"
                if event.args.isEmpty {
                    out += "\nNo args.\n"
                    continue
                }
                out += "\n| Arg | Type | Optional | PII | Description |\n|---|---|---|---|---|\n"
                for arg in event.args {
                    out +=
                        "| `\(arg.name)` | \(arg.type.rawValue) | \(arg.isOptional ? "yes" : "no") | \(arg.isPersonalData ? "**yes**" : "no") | \(cell(arg.description)) |\n"
                }
            }
        }
        return out
    }

    private static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }

    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    private static func cell(_ text: String) -> String { oneLine(text).replacingOccurrences(of: "|", with: "\\|") }

    // MARK: JSON

    /// The plan as one JSON document, in the stable shape shown above.
    ///
    /// - Parameter catalogs: valid catalogs, in any order; modules are sorted by name.
    /// - Returns: the JSON text.
    package static func json(_ catalogs: [Catalog]) -> String {
        let plan = Plan(
            modules: catalogs.sorted { $0.module < $1.module }.map { catalog in
                Plan.Module(
                    module: catalog.module, catalog: catalog.path,
                    events: catalog.events.map { event in
                        Plan.Event(
                            name: event.name, type: event.type.name, category: event.category,
                            description: event.description,
                            args: event.args.map {
                                Plan.Arg(
                                    name: $0.name, type: $0.type.rawValue, optional: $0.isOptional,
                                    pii: $0.isPersonalData, description: $0.description)
                            })
                    })
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings, bools and arrays cannot fail.
        let data = (try? encoder.encode(plan)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private struct Plan: Encodable {
        struct Module: Encodable {
            var module: String
            var catalog: String
            var events: [Event]
        }

        struct Event: Encodable {
            var name: String
            var type: String
            var category: String?
            var description: String
            var args: [Arg]

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(name, forKey: .name)
                try container.encode(type, forKey: .type)
                try container.encode(category, forKey: .category)  // null, not absent: a stable shape
                try container.encode(description, forKey: .description)
                try container.encode(args, forKey: .args)
            }

            private enum CodingKeys: String, CodingKey { case name, type, category, description, args }
        }

        struct Arg: Encodable {
            var name: String
            var type: String
            var optional: Bool
            var pii: Bool
            var description: String
        }

        var modules: [Module]
    }
}
