import MeasurementEvents

/// One module's events, read from `Events/<Module>.json`.
///
/// ```json
/// { "module": "DemoFeed", "description": "Events of the feed feature.",
///   "events": [ { "name": "feed/item_tapped", "description": "The user tapped an item.", "type": "click",
///                 "args": { "item_id": { "type": "string", "description": "The item's id." } } } ] }
/// ```
public struct Catalog: Hashable, Sendable {
    /// The catalog's path relative to the package root: `Events/DemoFeed.json`.
    public var path: String
    /// The Swift module the generated file belongs to; equals the file's base name.
    public var module: String
    public var description: String?
    /// In file order.
    public var events: [CatalogEvent]
    /// Where `"module"`'s value is written, for messages about the module as a whole.
    public var modulePosition: SourcePosition

    public init(
        path: String, module: String, description: String? = nil, events: [CatalogEvent],
        modulePosition: SourcePosition = SourcePosition(line: 1, column: 1)
    ) {
        self.path = path
        self.module = module
        self.description = description
        self.events = events
        self.modulePosition = modulePosition
    }

    /// Where the generated file goes, relative to the package root: `Sources/DemoFeed/events_DemoFeed.swift`.
    public var generatedFilePath: String { "Sources/\(module)/events_\(module).swift" }
}

/// One event of a catalog.
public struct CatalogEvent: Hashable, Sendable {
    public var name: String
    public var description: String
    public var type: EventType
    public var category: String?
    /// In file order: the order of the generated parameters.
    public var args: [CatalogArg]
    /// Where the name's value is written.
    public var namePosition: SourcePosition
    /// The event's index in the catalog's `events` array, for JSON paths in messages.
    public var indexInCatalog: Int

    public init(
        name: String, description: String, type: EventType = .default, category: String? = nil,
        args: [CatalogArg] = [], namePosition: SourcePosition = SourcePosition(line: 1, column: 1), indexInCatalog: Int = 0
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
public struct CatalogArg: Hashable, Sendable {
    public var name: String
    public var type: CatalogArgType
    public var description: String
    /// Optional args may be left out when posting; they default to `nil`.
    public var isOptional: Bool
    /// Personal data: listed in the generated `personalDataArgs` for redaction.
    public var isPersonalData: Bool
    /// Where the arg's name (its key) is written.
    public var namePosition: SourcePosition

    public init(
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
public enum CatalogArgType: String, CaseIterable, Hashable, Sendable {
    case string, int, double, bool

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
