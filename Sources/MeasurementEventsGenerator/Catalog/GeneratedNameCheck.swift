import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsJSON

/// The rule that a catalog's generated file compiles: every Swift identifier it declares in one
/// scope is declared once.
///
/// In `<Module>Events` each event declares a constant (`feedItemTapped`), a type
/// (`FeedItemTapped`) and a helper (`postFeedItemTapped(…)`), beside the module's tables
/// (`allNames`, `personalDataArgs`, `catalog`). Names that differ only in where the words break give the
/// same identifiers: `ui/shown` and `u_i/shown` both make `UIShown` and `postUIShown`, and
/// `post/feed_shown`'s constant is `feed/shown`'s helper. Inside each event's type, its args'
/// properties (which are also the labels of its initialiser and helper) must differ from each
/// other and from the type's own members.
enum GeneratedNameCheck {
    /// Types the generated file refers to by their plain names; an event struct of that name would hide them.
    static let typeNamesUsedByGeneratedCode: Set<String> = [
        "ArgSpec", "Bool", "Double", "EventArgs", "EventCatalog", "EventName", "EventSpec", "EventType", "EventValue",
        "Int", "MeasurementEvent",
        "NotificationCenter",
        "Optional", "Set", "StaticString", "String", "TypedMeasurementEvent", "UInt",
    ]

    /// Identifiers an arg cannot have: members of every generated struct, or names Swift forbids as properties.
    static let reservedArgIdentifiers: Set<String> = ["args", "self", "Self", "Type", "Protocol"]

    /// Every collision in `catalog`, one diagnostic per event and identifier, naming the first owner.
    static func diagnostics(for catalog: Catalog) -> [CatalogDiagnostic] {
        var diagnostics: [CatalogDiagnostic] = []
        func report(_ event: CatalogEvent, _ path: [JSONPathComponent], found: String, expected: String) {
            diagnostics.append(
                CatalogDiagnostic(
                    file: catalog.path, position: event.namePosition, path: path, found: found, expected: expected))
        }
        var firstByName: [String: SourcePosition] = [:]
        var owners: [String: Owner] = [
            "allNames": Owner(kind: nil, name: "the list of all names"),
            "personalDataArgs": Owner(kind: nil, name: "the personal-data table"),
            "catalog": Owner(kind: nil, name: "the catalog value"),
        ]
        for event in catalog.events {
            let path: [JSONPathComponent] = [.key("events"), .index(event.indexInCatalog), .key("name")]
            if let first = firstByName[event.name] {
                report(
                    event, path, found: "\(quoted(event.name)) again",
                    expected: "each event declared once (it is first declared at \(catalog.path):\(first))")
                continue
            }
            firstByName[event.name] = event.namePosition
            let constant = SwiftNaming.lowerCamelCase(event.name)
            let type = SwiftNaming.upperCamelCase(event.name)
            let helper = "post" + type
            let owner = "\(quoted(event.name)) (\(catalog.path):\(event.namePosition))"
            let distinct = "names that give distinct Swift identifiers"
            if let first = owners[constant] {
                report(
                    event, path, found: "\(quoted(event.name)), whose constant \(constant) is already \(first)",
                    expected: distinct)
            }
            if let first = owners[type] {
                // The helper is `post` + the type: it collides with the same event's helper.
                report(
                    event, path,
                    found:
                        "\(quoted(event.name)), whose type \(type) and helper \(helper) are already those of \(first.name)",
                    expected: distinct)
            } else if let first = owners[helper] {
                report(
                    event, path, found: "\(quoted(event.name)), whose helper \(helper) is already \(first)",
                    expected: distinct)
            }
            if typeNamesUsedByGeneratedCode.contains(type) {
                report(
                    event, path,
                    found: "\(quoted(event.name)), whose type name \(type) would hide a type the generated code uses",
                    expected: "another name")
            }
            for (identifier, kind) in [(constant, "constant"), (type, "type"), (helper, "helper")]
            where owners[identifier] == nil {
                owners[identifier] = Owner(kind: kind, name: owner)
            }
            diagnostics += argDiagnostics(event, in: catalog)
        }
        return diagnostics
    }

    /// What declares an identifier: `the type of "ui/shown" (Events/Feed.json:4:14)`.
    private struct Owner: CustomStringConvertible {
        /// `constant`, `type` or `helper`; `nil` for the module's tables.
        var kind: String?
        var name: String
        var description: String { kind.map { "the \($0) of \(name)" } ?? name }
    }

    /// Args whose properties collide with each other or with the struct's own members.
    private static func argDiagnostics(_ event: CatalogEvent, in catalog: Catalog) -> [CatalogDiagnostic] {
        var diagnostics: [CatalogDiagnostic] = []
        var firstByIdentifier: [String: String] = [:]
        let path: [JSONPathComponent] = [.key("events"), .index(event.indexInCatalog), .key("args")]
        for arg in event.args {
            func report(found: String, expected: String) {
                diagnostics.append(
                    CatalogDiagnostic(
                        file: catalog.path, position: arg.namePosition, path: path + [.key(arg.name)], found: found,
                        expected: expected))
            }
            let identifier = SwiftNaming.lowerCamelCase(arg.name)
            if reservedArgIdentifiers.contains(identifier) {
                report(
                    found: "the arg name \(quoted(arg.name)), whose Swift name \(identifier) is reserved",
                    expected: "another name (reserved: \(reservedArgIdentifiers.sorted().joined(separator: ", ")))")
            } else if let owner = firstByIdentifier[identifier] {
                report(
                    found:
                        "the arg name \(quoted(arg.name)), whose Swift name \(identifier) is already used by \(owner)",
                    expected: "arg names that give distinct Swift identifiers")
            } else {
                firstByIdentifier[identifier] = quoted(arg.name)
            }
        }
        return diagnostics
    }
}
