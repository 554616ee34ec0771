import Foundation

extension Notification.Name {
    /// The one name every measurement event is posted under.
    public static let measurementEvent = Notification.Name("org.measurementevents.event")

    /// The notification name of the Objective-C AQSEvent library, accepted by aggregators
    /// with `EventAggregator.Configuration.acceptsLegacyAQSNotifications`.
    public static let legacyAQSEvent = Notification.Name("org.openaquamarine.measurement_event")
}

extension MeasurementEvent {
    /// The userInfo keys of a measurement event notification.
    ///
    /// A post from ``post(_:type:category:args:to:file:line:)`` carries only ``name`` and ``args``
    /// (plus ``type`` and ``category`` when they differ from the defaults), so that posting
    /// costs no more than a plain notification with the same dictionary.
    public enum UserInfoKey {
        /// The event name, a `String`.
        public static let name = "name"
        /// The arguments, a `[String: Any]` whose values are `String`, `Int`, `Double` or `Bool`.
        public static let args = "args"
        /// The event type's wire code (`"cl"`), when not ``EventType/userAction``.
        public static let type = "type"
        /// The category, a `String`, when there is one.
        public static let category = "category"
        /// The event's id as a `String`, when a complete event is re-posted.
        public static let id = "id"
        /// The posting time as seconds since 1970 (`Double`), when a complete event is re-posted.
        public static let timestamp = "timestamp"
    }

    /// Posts a measurement event. This is all a feature module needs:
    ///
    /// ```swift
    /// MeasurementEvent.post("feed/item_tapped", args: ["item_id": "42", "position": 3])
    /// ```
    ///
    /// The notification has the name `Notification.Name.measurementEvent` and
    /// `object: nil`. The bus gives the event its id and timestamp when it receives it.
    ///
    /// - Parameters:
    ///   - name: the event's name, namespaced with slashes.
    ///   - type: the event's type; `userAction` by default.
    ///   - category: an optional category.
    ///   - args: scalar values: strings, integers, floating-point numbers, booleans.
    ///   - center: where to post; `.default` unless a test isolates it.
    ///   - file: the file that posts, named in tracking-plan violations; leave the default.
    ///   - line: the line that posts, named in tracking-plan violations; leave the default.
    public static func post(
        _ name: EventName,
        type: EventType = .default,
        category: String? = nil,
        args: __owned [String: any EventValueConvertible] = [:],
        to center: NotificationCenter = .default,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        // The posting site, only while an aggregator checks a plan (one atomic load otherwise);
        // it travels beside the args, never in them.
        let site =
            PostSites.checkingAggregators.value > 0 ? PostSites.site(center: center, file: file, line: line) : nil
        // `args` is taken owned (`__owned`): the caller's dictionary, usually a literal, moves
        // into the userInfo instead of being retained there and released by the caller.
        // Plain values travel as they are (no copy). Anything else is converted once, here,
        // so that every observer and the aggregator see the same values.
        // A value that cannot be an argument here (an Int64 beyond a 32-bit Int) travels as it
        // is, so that the bus rejects the event with the reason instead of a trap or a change.
        let args =
            allPlain(args)
            ? args
            : args.mapValues { value -> any EventValueConvertible in
                guard case .success(let scalar) = value.checkedEventValue else { return value }
                return scalar.plainConvertible
            }
        var info = postedUserInfo(name: name, type: type, category: category, args: args)
        if let site { info[PostSites.key] = site }
        guard let identity = PostedEvent.identity(of: info) else {
            return center.post(name: .measurementEvent, object: nil, userInfo: info)
        }
        // The aggregators observing `center` take this record instead of decoding `info`.
        var record = PostedEvent(name: name, type: type, category: category, args: .typed(args))
        record.postSite = site
        record.post(info, identifiedBy: identity, to: center)
    }

    /// An empty userInfo with room for a name and args, which `postedUserInfo` copies.
    /// `nonisolated(unsafe)`: a constant that holds no value, only room (`Any` is not `Sendable`).
    nonisolated(unsafe) private static let emptyUserInfo = [AnyHashable: Any](minimumCapacity: 2)

    /// The userInfo of a post with the default type and no category, its two values
    /// placeholders, and where they are: `postedUserInfo` copies it and sets the values by
    /// index, so that such a post hashes no key (a copy of a dictionary has its indices, and
    /// setting a value through `values` keeps them). Hashing the two `AnyHashable` keys through
    /// their boxes cost about 1,000 instructions a post, and a filtered-out post 1.17–1.5 times
    /// a raw one's wall clock instead of 1.03–1.06 (Benchmarks/README.md, "The userInfo's keys
    /// hashed once"). `nonisolated(unsafe)`: a constant, whose placeholders are never read.
    nonisolated(unsafe) private static let nameAndArgs = NameAndArgsUserInfo()

    private struct NameAndArgsUserInfo {
        let info: [AnyHashable: Any]
        let name: [AnyHashable: Any].Index
        let args: [AnyHashable: Any].Index

        init() {
            var info = [AnyHashable: Any](minimumCapacity: 2)
            info[UserInfoKey.name] = ""
            info[UserInfoKey.args] = [String: Any]()
            self.info = info
            name = info.index(forKey: UserInfoKey.name)!
            args = info.index(forKey: UserInfoKey.args)!
        }
    }

    /// The userInfo of every post: the name, the args as given (a dictionary an observer reads
    /// with `as? [String: Any]`), and the type and category when they are not the defaults.
    /// Not inlined: one copy of this code, not one per caller (inlined, a post measured the
    /// same: 9,812 instructions filtered out, 9,957 allowed, before `nameAndArgs`). Generic
    /// rather than taking `Any`: specialized for each caller's dictionary, it stores it without
    /// going through an existential's value witnesses.
    @inline(never)
    private static func postedUserInfo<Args>(name: EventName, type: EventType, category: String?, args: Args)
        -> [AnyHashable: Any]
    {
        // The usual post: the two values set in a copy of `nameAndArgs`, by index.
        guard type != .default || category != nil else {
            var info = nameAndArgs.info
            info.values[nameAndArgs.name] = name.rawValue
            info.values[nameAndArgs.args] = args
            return info
        }
        // Otherwise stored key by key, not written as a literal: a literal's array of pairs is
        // copied into the dictionary pair by pair and then destroyed, through the runtime's
        // generic tuple witnesses (about 600 instructions a post). Copied from an empty template
        // rather than made with `init(minimumCapacity:)`, which is not specialized and looks the
        // storage's generic metadata up on every call (about 300 instructions).
        var info = emptyUserInfo
        info[UserInfoKey.name] = name.rawValue
        info[UserInfoKey.args] = args
        if type != .default { info[UserInfoKey.type] = type.rawValue }
        if let category { info[UserInfoKey.category] = category }
        return info
    }

    /// Whether every value is a `String`, `Int`, `Double` or `Bool`, which any observer can read
    /// with `as? [String: Any]`; an ``EventValue`` or a custom conformer is not.
    @inline(__always)
    private static func allPlain(_ args: [String: any EventValueConvertible]) -> Bool {
        for value in args.values {
            guard isPlain(value) else { return false }
        }
        return true
    }

    /// Whether `value`'s type is one of the four plain types. Opened as its static type `T`, not
    /// read with `type(of:)`, which asks the runtime for a dynamic type (about 60 instructions
    /// a value): a class instance's static type may differ from its dynamic one, but neither
    /// can be one of the four structs, so the answer is the same.
    @inline(__always)
    private static func isPlain<T: EventValueConvertible>(_ value: T) -> Bool {
        PlainValueTypes.contains(T.self)
    }

    /// Posts this complete event, id and timestamp included; receivers keep both.
    ///
    /// - Parameter center: where to post; `.default` unless a test isolates it.
    public func post(to center: NotificationCenter = .default) {
        var info = Self.userInfo(name: name, type: type, category: category, args: args)
        info[UserInfoKey.id] = id.uuidString
        info[UserInfoKey.timestamp] = timestamp.timeIntervalSince1970
        center.post(name: .measurementEvent, object: nil, userInfo: info)
    }

    /// The userInfo a post carries: plain Foundation values only, so any observer can read it.
    ///
    /// - Parameters:
    ///   - name: the event's name.
    ///   - type: the event's type; left out when it is the default.
    ///   - category: the category; left out when `nil`.
    ///   - args: the event's arguments.
    /// - Returns: the userInfo dictionary.
    public static func userInfo(
        name: EventName, type: EventType = .default, category: String? = nil, args: EventArgs = [:]
    ) -> [AnyHashable: Any] {
        postedUserInfo(name: name, type: type, category: category, args: args.mapValues(\.plainValue))
    }
}
