import MeasurementEvents

/// The catalogs an aggregator was given (``EventAggregator/Configuration/catalogs``), merged:
/// what each event name declares, and which of its args are personal data.
///
/// Registering is forgiving and says what it did: a catalog given twice counts once, and an
/// arg that one catalog marks personal and another does not is treated as personal. Each such
/// case is listed in ``problems`` and reported to the aggregator's problem handler.
public struct RegisteredCatalogs: Sendable, Equatable {
    /// The catalogs, each once, in registration order.
    public private(set) var catalogs: [EventCatalog] = []
    /// What was odd about the registration, in the order it was found.
    public private(set) var problems: [CatalogRegistrationProblem] = []
    /// The personal-data args of each event that has any: the union of every catalog's marks.
    public private(set) var personalDataArgs: [EventName: Set<String>] = [:]
    private var specs: [EventName: EventSpec] = [:]

    /// None: what an aggregator without catalogs has.
    init() {}

    /// Merges `catalogs`.
    ///
    /// - Parameter catalogs: the app's catalogs, typically `[FeatureEvents.catalog, …]`.
    public init(_ catalogs: [EventCatalog]) {
        // The modules that declare each event, with their marks, for conflict messages.
        var declarations: [EventName: [(module: String, spec: EventSpec)]] = [:]
        var order: [EventName] = []
        for catalog in catalogs {
            if self.catalogs.contains(catalog) {
                problems.append(.registeredTwice(module: catalog.module))
                continue
            }
            if self.catalogs.contains(where: { $0.module == catalog.module }) {
                problems.append(.moduleRegisteredTwice(module: catalog.module))
            }
            self.catalogs.append(catalog)
            for spec in catalog.events {
                if declarations[spec.name] == nil { order.append(spec.name) }
                declarations[spec.name, default: []].append((catalog.module, spec))
                if specs[spec.name] == nil { specs[spec.name] = spec }
                for arg in spec.args where arg.isPersonalData {
                    personalDataArgs[spec.name, default: []].insert(arg.name)
                    if arg.type != .string {
                        problems.append(
                            .personalDataNotText(
                                module: catalog.module, event: spec.name, arg: arg.name, type: arg.type))
                    }
                }
            }
        }
        for name in order {
            guard let declared = declarations[name], declared.count > 1, let personal = personalDataArgs[name] else {
                continue
            }
            for arg in personal.sorted() {
                let unmarked = declared.filter { declaration in
                    declaration.spec.args.contains { $0.name == arg && !$0.isPersonalData }
                }
                guard !unmarked.isEmpty else { continue }
                let marked = declared.filter { declaration in
                    declaration.spec.args.contains { $0.name == arg && $0.isPersonalData }
                }
                problems.append(
                    .conflictingPersonalDataMarks(
                        event: name, arg: arg, markedIn: marked.map(\.module), unmarkedIn: unmarked.map(\.module)))
            }
        }
    }

    /// The declaration of `name` in the first catalog that declares it; `nil` when none does.
    ///
    /// - Parameter name: an event name.
    /// - Returns: the event's declaration.
    public func spec(for name: EventName) -> EventSpec? {
        specs[name]
    }

    /// Whether no catalog was registered.
    public var isEmpty: Bool { catalogs.isEmpty }
}
