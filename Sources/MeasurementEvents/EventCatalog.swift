/// One module's catalog, as generated from `Events/<Module>.json`: a static value, no file read
/// at run time.
///
/// Every generated file declares its catalog as `<Module>Events.catalog`. Register the catalogs
/// of the app's modules with the aggregator, in one line at setup:
///
/// ```swift
/// var configuration = EventAggregator.Configuration()
/// configuration.catalogs = [DemoFeedEvents.catalog, DemoSettingsEvents.catalog]
/// ```
///
/// The args the catalogs mark `"pii": true` are then hashed before any tracker sees them
/// (see `EventAggregator.Configuration.catalogs`).
public struct EventCatalog: Sendable, Hashable {
    /// The Swift module the catalog belongs to: `DemoFeed`.
    public var module: String
    /// The module's events, in catalog order.
    public var events: [EventSpec]

    /// A catalog, as the generated files make it.
    ///
    /// - Parameters:
    ///   - module: the Swift module the catalog belongs to.
    ///   - events: the module's events, in catalog order.
    public init(module: String, events: [EventSpec]) {
        self.module = module
        self.events = events
    }
}

/// One event of an ``EventCatalog``: its name, type and args as the catalog declares them.
public struct EventSpec: Sendable, Hashable {
    /// The name posted on the bus: `feed/item_tapped`.
    public var name: EventName
    /// The event's type.
    public var type: EventType
    /// The event's args, in catalog order.
    public var args: [ArgSpec]
    /// Whether the plan retires the event (`"deprecated"`): posting it is a
    /// `PlanViolation.Kind.deprecatedEvent`.
    public var isDeprecated: Bool
    /// The event that replaces a deprecated one, when the catalog names it.
    public var replacement: EventName?
    /// The team that owns the event (`"owner"`).
    public var owner: String?
    /// The app version that introduced the event (`"since"`).
    public var since: String?
    /// The only destinations that may receive the event (`"destinations"`), by name:
    /// `["amplitude", "debug"]`; `nil` when the catalog does not restrict it, so that every
    /// destination receives it.
    ///
    /// ```swift
    /// let spec = EventSpec(
    ///     name: "checkout/paid", type: .click, args: [], destinations: ["amplitude", "debug"])
    /// ```
    public var destinations: [String]?

    /// An event declaration.
    ///
    /// - Parameters:
    ///   - name: the name posted on the bus.
    ///   - type: the event's type.
    ///   - args: the event's args, in catalog order.
    ///   - isDeprecated: whether the plan retires the event.
    ///   - replacement: the event that replaces it, if any.
    ///   - owner: the team that owns the event.
    ///   - since: the app version that introduced the event.
    ///   - destinations: the only destinations that may receive the event; `nil` for every one.
    public init(
        name: EventName, type: EventType, args: [ArgSpec], isDeprecated: Bool = false, replacement: EventName? = nil,
        owner: String? = nil, since: String? = nil, destinations: [String]? = nil
    ) {
        self.name = name
        self.type = type
        self.args = args
        self.isDeprecated = isDeprecated
        self.replacement = replacement
        self.owner = owner
        self.since = since
        self.destinations = destinations
    }

    /// An event declaration that every destination receives: the initialiser as it was before
    /// `destinations`, kept so that a reference to it by its full name still compiles; calls
    /// resolve to ``init(name:type:args:isDeprecated:replacement:owner:since:destinations:)``.
    ///
    /// - Parameters:
    ///   - name: the name posted on the bus.
    ///   - type: the event's type.
    ///   - args: the event's args, in catalog order.
    ///   - isDeprecated: whether the plan retires the event.
    ///   - replacement: the event that replaces it, if any.
    ///   - owner: the team that owns the event.
    ///   - since: the app version that introduced the event.
    @_disfavoredOverload
    @available(*, deprecated, message: "use init(name:type:args:isDeprecated:replacement:owner:since:destinations:)")
    public init(
        name: EventName, type: EventType, args: [ArgSpec], isDeprecated: Bool = false, replacement: EventName? = nil,
        owner: String? = nil, since: String? = nil
    ) {
        self.init(
            name: name, type: type, args: args, isDeprecated: isDeprecated, replacement: replacement, owner: owner,
            since: since, destinations: nil)
    }
}

/// One arg of an ``EventSpec``.
public struct ArgSpec: Sendable, Hashable {
    /// The scalar type a catalog declares for an arg.
    public enum ValueType: String, Sendable, Hashable, CaseIterable {
        /// Text.
        case string
        /// A whole number.
        case int
        /// A floating-point number.
        case double
        /// `true` or `false`.
        case bool
    }

    /// The key posted in the event's args: `item_id`.
    public var name: String
    /// The type of its value.
    public var type: ValueType
    /// Whether every post carries it (catalogs mark the others `"optional": true`).
    public var isRequired: Bool
    /// Whether it is personal data (`"pii": true`): hashed before any tracker sees it once
    /// the catalog is registered.
    public var isPersonalData: Bool
    /// The only values allowed (`"values"`); empty when any value of the type is.
    public var allowedValues: [EventValue]
    /// The smallest number allowed, inclusive (`"minimum"`).
    public var minimum: Double?
    /// The largest number allowed, inclusive (`"maximum"`).
    public var maximum: Double?
    /// A regular expression the text must contain a match of (`"pattern"`; anchor it with
    /// `^…$` to match the whole text, as in JSON Schema).
    public var pattern: String?
    /// The most Unicode scalars the text may hold (`"maxLength"`).
    public var maxLength: Int?

    /// An arg declaration.
    ///
    /// - Parameters:
    ///   - name: the key posted in the event's args.
    ///   - type: the type of its value.
    ///   - isRequired: whether every post carries it.
    ///   - isPersonalData: whether it is personal data.
    ///   - allowedValues: the only values allowed; empty for any.
    ///   - minimum: the smallest number allowed.
    ///   - maximum: the largest number allowed.
    ///   - pattern: a regular expression the text must contain a match of.
    ///   - maxLength: the most Unicode scalars the text may hold.
    public init(
        name: String, type: ValueType, isRequired: Bool, isPersonalData: Bool, allowedValues: [EventValue] = [],
        minimum: Double? = nil, maximum: Double? = nil, pattern: String? = nil, maxLength: Int? = nil
    ) {
        self.name = name
        self.type = type
        self.isRequired = isRequired
        self.isPersonalData = isPersonalData
        self.allowedValues = allowedValues
        self.minimum = minimum
        self.maximum = maximum
        self.pattern = pattern
        self.maxLength = maxLength
    }
}
