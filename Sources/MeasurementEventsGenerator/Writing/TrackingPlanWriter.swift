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
/// `category`, `owner` and `since` are `null` for events without one; `destinations` is `null`
/// for an event every destination receives, else the names of the only ones that may;
/// `deprecated` is `false` or `{"replacement": <name or null>}`; an arg's `values`, `minimum`,
/// `maximum`, `pattern` and `maxLength` are present only when its catalog gives them.
package enum TrackingPlanWriter {
    /// Who the plan is for.
    package enum Format: String, CaseIterable, Sendable {
        /// A table per module, for people.
        case markdown
        /// One stable JSON document, for tools.
        case json
        /// One JSON Schema (draft 2020-12) per event, shaped like Segment Protocols' and
        /// RudderStack's event rules.
        case jsonschema
        /// One self-contained HTML page with a search box and filters, for people.
        case html
    }

    /// The plan of `catalogs` in `format`.
    ///
    /// - Parameters:
    ///   - catalogs: valid catalogs, in any order.
    ///   - format: Markdown, JSON, JSON Schema or HTML.
    /// - Returns: the plan's text.
    package static func plan(_ catalogs: [Catalog], format: Format) -> String {
        switch format {
        case .markdown: return markdown(catalogs)
        case .json: return json(catalogs)
        case .jsonschema: return JSONSchemaPlanWriter.plan(catalogs)
        case .html: return HTMLPlanWriter.page(catalogs, coverage: nil)
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
                if let owner = event.owner { out += " · Owner: \(oneLine(owner))" }
                if let since = event.since { out += " · Since: \(oneLine(since))" }
                if let destinations = event.destinations {
                    out += " · Only to: " + destinations.map { "`\($0)`" }.joined(separator: ", ")
                }
                out += "\n"
                if let deprecation = event.deprecation {
                    out +=
                        "\n**Deprecated**" + (deprecation.replacement.map { ": post `\($0)` instead." } ?? ".") + "\n"
                }
                if event.args.isEmpty {
                    out += "\nNo args.\n"
                    continue
                }
                let hasRules = event.args.contains { !$0.constraints.isEmpty }
                out += "\n| Arg | Type | Optional | PII | Description |" + (hasRules ? " Rules |" : "") + "\n"
                out += "|---|---|---|---|---|" + (hasRules ? "---|" : "") + "\n"
                for arg in event.args {
                    out +=
                        "| `\(arg.name)` | \(arg.type.rawValue) | \(arg.isOptional ? "yes" : "no") | \(arg.isPersonalData ? "**yes**" : "no") | \(cell(arg.description)) |"
                        + (hasRules ? " \(cell(arg.rulesSummary)) |" : "") + "\n"
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
                                    pii: $0.isPersonalData, description: $0.description, rules: $0.constraints)
                            }, deprecation: event.deprecation, owner: event.owner, since: event.since,
                            destinations: event.destinations)
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
            var deprecation: CatalogDeprecation?
            var owner: String?
            var since: String?
            var destinations: [String]?

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(name, forKey: .name)
                try container.encode(type, forKey: .type)
                try container.encode(category, forKey: .category)  // null, not absent: a stable shape
                try container.encode(description, forKey: .description)
                try container.encode(args, forKey: .args)
                try container.encode(owner, forKey: .owner)
                try container.encode(since, forKey: .since)
                try container.encode(destinations, forKey: .destinations)
                if let deprecation {
                    var deprecated = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .deprecated)
                    try deprecated.encode(deprecation.replacement, forKey: .replacement)
                } else {
                    try container.encode(false, forKey: .deprecated)
                }
            }

            private enum CodingKeys: String, CodingKey {
                case name, type, category, description, args, owner, since, destinations, deprecated, replacement
            }
        }

        struct Arg: Encodable {
            var name: String
            var type: String
            var optional: Bool
            var pii: Bool
            var description: String
            var rules: CatalogConstraints

            /// The rules' keys are present only when the catalog gives them, as in the catalog.
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(name, forKey: .name)
                try container.encode(type, forKey: .type)
                try container.encode(optional, forKey: .optional)
                try container.encode(pii, forKey: .pii)
                try container.encode(description, forKey: .description)
                if !rules.allowedValues.isEmpty {
                    var values = container.nestedUnkeyedContainer(forKey: .values)
                    for value in rules.allowedValues {
                        switch value {
                        case .string(let text): try values.encode(text)
                        case .int(let number): try values.encode(number)
                        }
                    }
                }
                try container.encodeIfPresent(rules.minimum, forKey: .minimum)
                try container.encodeIfPresent(rules.maximum, forKey: .maximum)
                try container.encodeIfPresent(rules.pattern, forKey: .pattern)
                try container.encodeIfPresent(rules.maxLength, forKey: .maxLength)
            }

            private enum CodingKeys: String, CodingKey {
                case name, type, optional, pii, description, values, minimum, maximum, pattern, maxLength
            }
        }

        var modules: [Module]
    }
}
