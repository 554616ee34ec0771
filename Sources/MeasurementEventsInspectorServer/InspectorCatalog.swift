import Foundation
import MeasurementEventsGA4
import MeasurementEventsGenerator

/// The descriptions and rules of a package's catalogs (`Events/*.json`, read with the
/// generator's reader), shown beside each event of that name.
package struct InspectorCatalog: Sendable {
    private var events: [String: InspectedEvent.CatalogInfo]

    /// Reads the catalogs under `packageRoot`.
    ///
    /// - Parameter packageRoot: the folder holding `Events/`.
    /// - Throws: the generator's error when the catalogs cannot be read.
    /// - Returns: the catalog, and how many of its files had problems (they are still used where readable).
    package static func load(packageRoot: URL) throws -> (catalog: InspectorCatalog, diagnostics: [String]) {
        // Only the catalogs are read: whether each module has a folder is the generator's concern.
        let set = try CatalogSet.load(packageRoot: packageRoot, moduleFolders: nil)
        var events: [String: InspectedEvent.CatalogInfo] = [:]
        for catalog in set.catalogs {
            for event in catalog.events {
                var rules = ["type: \(event.type.name)"]
                if let category = event.category { rules.append("category: \(category)") }
                for arg in event.args {
                    var rule = "\(arg.name) (\(arg.type.rawValue)): \(arg.description)"
                    let constraints = arg.constraints
                    if !constraints.allowedValues.isEmpty {
                        rule += "; one of \(constraints.allowedValues.map { "\($0)" }.joined(separator: ", "))"
                    }
                    if let minimum = constraints.minimum { rule += "; at least \(minimum)" }
                    if let maximum = constraints.maximum { rule += "; at most \(maximum)" }
                    if let pattern = constraints.pattern { rule += "; matches \(pattern)" }
                    if let maxLength = constraints.maxLength { rule += "; at most \(maxLength) characters" }
                    rules.append(rule)
                }
                if event.deprecation != nil { rules.append("deprecated") }
                let info = InspectedEvent.CatalogInfo(
                    module: catalog.module, description: event.description, rules: rules)
                events[event.name] = info
                // As GA4 receives it (GA4Encoder: every character but letters, digits and `_` becomes `_`).
                let adapted = String(event.name.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
                if events[adapted] == nil { events[adapted] = info }
            }
        }
        return (InspectorCatalog(events: events), set.diagnostics.map { "\($0)" })
    }

    /// A catalog from ready-made entries (for tests).
    package init(events: [String: InspectedEvent.CatalogInfo]) {
        self.events = events
    }

    /// What the catalogs say about `name`, if they declare it.
    package func info(for name: String) -> InspectedEvent.CatalogInfo? { events[name] }
}
