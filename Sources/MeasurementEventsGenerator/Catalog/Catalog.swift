import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsJSON

/// One module's events, read from `Events/<Module>.json`.
///
/// ```json
/// { "module": "DemoFeed", "description": "Events of the feed feature.",
///   "events": [ { "name": "feed/item_tapped", "description": "The user tapped an item.", "type": "click",
///                 "args": { "item_id": { "type": "string", "description": "The item's id." } } } ] }
/// ```
package struct Catalog: Hashable, Sendable {
    /// The catalog's path relative to the package root: `Events/DemoFeed.json`.
    package var path: String
    /// The Swift module the generated file belongs to; equals the file's base name.
    package var module: String
    /// What the module's events are about; the generated enum's doc comment.
    package var description: String?
    /// In file order.
    package var events: [CatalogEvent]
    /// Where `"module"`'s value is written, for messages about the module as a whole.
    var modulePosition: SourcePosition
    /// The folder of the module's sources, relative to the package root: `Sources/<Module>`
    /// unless the manifest gives the target a `path:` (``ModuleFolders``).
    package var sourceFolder: String

    /// Makes a catalog, as ``CatalogReader`` does; for tests and tools that build catalogs in code.
    ///
    /// - Parameters:
    ///   - path: the catalog's path relative to the package root.
    ///   - module: the Swift module the generated file belongs to.
    ///   - description: what the module's events are about.
    ///   - events: the events, in file order.
    ///   - modulePosition: where `"module"`'s value is written.
    package init(
        path: String, module: String, description: String? = nil, events: [CatalogEvent],
        modulePosition: SourcePosition = SourcePosition(line: 1, column: 1)
    ) {
        self.path = path
        self.module = module
        self.description = description
        self.events = events
        self.modulePosition = modulePosition
        self.sourceFolder = ModuleFolders().folder(of: module)
    }

    /// The catalog as the generated file's `<Module>Events.catalog` declares it: what an
    /// aggregator registers.
    package var eventCatalog: EventCatalog {
        EventCatalog(
            module: module,
            events: events.map { event in
                EventSpec(
                    name: EventName(event.name), type: event.type,
                    args: event.args.map {
                        ArgSpec(
                            name: $0.name, type: $0.type.valueType,
                            isRequired: !$0.isOptional, isPersonalData: $0.isPersonalData,
                            allowedValues: $0.constraints.allowedValues.map {
                                switch $0 {
                                case .string(let text): return .string(text)
                                case .int(let number): return .int(number)
                                }
                            },
                            minimum: $0.constraints.minimum, maximum: $0.constraints.maximum,
                            pattern: $0.constraints.pattern, maxLength: $0.constraints.maxLength)
                    }, isDeprecated: event.deprecation != nil,
                    replacement: event.deprecation?.replacement.map { EventName($0) },
                    owner: event.owner, since: event.since, destinations: event.destinations)
            })
    }

    /// Where the generated file goes, relative to the package root: `Sources/Checkout/events_Checkout.swift`,
    /// or in the folder the manifest gives the target (`Tests/Fixtures/Demo/DemoFeed/events_DemoFeed.swift`).
    package var generatedFilePath: String { "\(sourceFolder)/events_\(module).swift" }

    /// Where part `number` of a catalog written in parts goes (``EventsFileWriter/eventsPerFile``):
    /// `Sources/Checkout/events_Checkout+1.swift`.
    package func generatedPartPath(_ number: Int) -> String { "\(sourceFolder)/events_\(module)+\(number).swift" }

    /// Whether `fileName` is a name the generator gives a file of `module`: the main file
    /// `events_Checkout.swift` or a part of any number, `events_Checkout+12.swift`.
    package static func isGeneratedFileName(_ fileName: String, module: String) -> Bool {
        let prefix = "events_\(module)"
        let suffix = ".swift"
        guard fileName.hasPrefix(prefix), fileName.hasSuffix(suffix), fileName.count >= prefix.count + suffix.count
        else { return false }
        let middle = fileName.dropFirst(prefix.count).dropLast(suffix.count)
        if middle.isEmpty { return true }
        guard middle.first == "+" else { return false }
        let number = middle.dropFirst()
        return !number.isEmpty && number.allSatisfy { $0 >= "0" && $0 <= "9" }
    }
}

/// One event of a catalog.
package struct CatalogEvent: Hashable, Sendable {
    /// The name posted on the bus: `feed/item_tapped`.
    package var name: String
    /// What happened; the generated declarations' doc comment.
    package var description: String
    /// The event type; `userAction` when the catalog gives none.
    package var type: EventType
    /// The event's category, when the catalog gives one.
    package var category: String?
    /// In file order: the order of the generated parameters.
    package var args: [CatalogArg]
    /// Where the name's value is written.
    var namePosition: SourcePosition
    /// The event's index in the catalog's `events` array, for JSON paths in messages.
    var indexInCatalog: Int
    /// Set when the plan retires the event (`"deprecated"`).
    package var deprecation: CatalogDeprecation?
    /// The team that owns the event (`"owner"`).
    package var owner: String?
    /// The app version that introduced the event (`"since"`).
    package var since: String?
    /// The only destinations the event may be sent to (`"destinations"`), in file order;
    /// `nil` when the catalog does not restrict it.
    package var destinations: [String]?

    /// Makes an event, as ``CatalogReader`` does.
    ///
    /// - Parameters:
    ///   - name: the name posted on the bus.
    ///   - description: what happened.
    ///   - type: the event type.
    ///   - category: the event's category.
    ///   - args: the arguments, in file order.
    ///   - namePosition: where the name's value is written.
    ///   - indexInCatalog: the event's index in the catalog's `events` array.
    package init(
        name: String, description: String, type: EventType = .default, category: String? = nil,
        args: [CatalogArg] = [], namePosition: SourcePosition = SourcePosition(line: 1, column: 1),
        indexInCatalog: Int = 0
    ) {
        self.indexInCatalog = indexInCatalog
        self.name = name
        self.description = description
        self.type = type
        self.category = category
        self.args = args
        self.namePosition = namePosition
    }
}

/// One argument of a catalog event.
package struct CatalogArg: Hashable, Sendable {
    /// The key posted in the event's args: `item_id`.
    package var name: String
    /// The scalar type of its value.
    package var type: CatalogArgType
    /// What the value means; the generated property's doc comment.
    package var description: String
    /// Optional args may be left out when posting; they default to `nil`.
    var isOptional: Bool
    /// Personal data: hashed before any tracker sees it once the generated `catalog` is registered
    /// with the aggregator; also listed in the generated `personalDataArgs`.
    var isPersonalData: Bool
    /// Where the arg's name (its key) is written.
    var namePosition: SourcePosition
    /// The rules its values follow beyond their type (`values`, `minimum`, `maximum`, `pattern`, `maxLength`).
    package var constraints = CatalogConstraints()

    /// Makes an arg, as ``CatalogReader`` does.
    ///
    /// - Parameters:
    ///   - name: the key posted in the event's args.
    ///   - type: the scalar type of its value.
    ///   - description: what the value means.
    ///   - isOptional: whether it may be left out when posting.
    ///   - isPersonalData: whether it is personal data, listed for redaction.
    ///   - namePosition: where the arg's name is written.
    package init(
        name: String, type: CatalogArgType, description: String, isOptional: Bool = false, isPersonalData: Bool = false,
        namePosition: SourcePosition = SourcePosition(line: 1, column: 1)
    ) {
        self.namePosition = namePosition
        self.name = name
        self.type = type
        self.description = description
        self.isOptional = isOptional
        self.isPersonalData = isPersonalData
    }
}

/// The scalar type of an arg, as written in catalogs.
package enum CatalogArgType: String, CaseIterable, Hashable, Sendable {
    /// Text: a Swift `String`.
    case string
    /// A whole number: a Swift `Int`.
    case int
    /// A floating-point number: a Swift `Double`.
    case double
    /// `true` or `false`: a Swift `Bool`.
    case bool

    /// The same type in the core's ``ArgSpec``.
    var valueType: ArgSpec.ValueType {
        switch self {
        case .string: return .string
        case .int: return .int
        case .double: return .double
        case .bool: return .bool
        }
    }

    /// The Swift type of the generated property.
    var swiftType: String {
        switch self {
        case .string: return "String"
        case .int: return "Int"
        case .double: return "Double"
        case .bool: return "Bool"
        }
    }
}
