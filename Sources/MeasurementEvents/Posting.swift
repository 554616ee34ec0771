import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

// The posting side of the bus, in the order an event takes it: `MeasurementEvent.post` builds
// the userInfo and the event's one record (`PostedEvent`, below), publishes the record on its
// thread while it posts (Publishing), so that an aggregator's observer on that thread takes it
// instead of decoding the userInfo; any other notification is decoded into the same record
// (Decoding). The drain makes the public event of a record (`makeEvent()`, with the record).
// The aggregator's side, from the observer on: MeasurementEventsAggregator/Inbox.swift.

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

// MARK: - The record

/// The one record of a posted event inside an aggregator, from the observer to the drain.
///
/// It is made in one of two ways: by ``MeasurementEvent/post(_:type:category:args:to:file:line:)``,
/// which publishes it on its thread for the duration of the post (``thisThread``, below), so
/// that the observer need not decode the userInfo it just built; or by decoding any other
/// notification (below: the name first, the rest once the filter keeps it). Either way the inbox
/// counts, filters, admits and queues it in one place (its `admit` and `enqueue`), and the drain
/// makes the public ``MeasurementEvent`` of it (`makeEvent()`, below), which is where the args
/// are checked, once. ``MeasurementEvent/init(notification:)`` is the same decoding for anyone.
package struct PostedEvent {
    /// The args as the poster gave them: checked by `makeEvent()`, off the posting thread.
    package enum Args {
        /// From `MeasurementEvent.post`: already scalars, but a `Double` may be NaN and an
        /// integer may not fit in `Int` (Apple Watch).
        case typed([String: any EventValueConvertible])
        /// From a userInfo, the usual shape: values not checked yet.
        case plain([String: Any])
        /// From a userInfo: an object (an `NSDictionary` Swift did not unwrap, or garbage).
        case object(AnyObject)
        /// From a userInfo: any other value (garbage, most likely).
        case untyped(Untyped)
    }

    /// A userInfo's args, boxed: a record is then copied with one retain, never through an
    /// existential's witnesses (which cost more than the rest of the copy).
    package final class Untyped {
        let value: Any
        init(_ value: Any) { self.value = value }
    }

    package var name: EventName
    var type: EventType
    var category: String?
    var args: Args
    /// The id a re-posted complete event carries; `nil`: the delivery side assigns one.
    var id: UUID?
    /// When it was posted: carried by a re-posted complete event, otherwise stamped by the
    /// inbox when it admits the record.
    package var timestamp: Date?
    /// Whether it came under the Objective-C AQSEvent library's notification name (for errors).
    var isLegacyAQS = false
    /// Where it was posted (`File.swift:42`), while an aggregator checks a plan: beside the args,
    /// so that no observer sees it as one (see `PostSites`).
    var postSite: String?
    /// The place in the aggregator's sequence (asynchronous delivery), set by its buffer.
    package var sequence: Int64 = 0
    /// The request context the post was made in, read on the posting thread by the inbox that
    /// keeps the record; nil outside any (an app).
    package var requestContext: MeasurementRequestContext.Snapshot?

    var notificationName: Notification.Name { isLegacyAQS ? .legacyAQSEvent : .measurementEvent }

    /// A record with nothing in it: what an inbox leaves in the poster's frame when it takes the
    /// published record (`Inbox.take(_:publishedIn:)`).
    @inlinable
    package static var empty: PostedEvent {
        PostedEvent(name: EventName(rawValue: ""), type: .default, category: nil, args: .typed([:]))
    }
}

extension PostedEvent {
    /// The public event: the args checked and converted, the id left as
    /// ``MeasurementEvent/placeholderID`` when the record carries none (the delivery side
    /// assigns ids in order, under one lock per batch).
    package func makeEvent() throws(MalformedEventError) -> MeasurementEvent {
        let checked: EventArgs
        switch args {
        case .typed(let typed): checked = try NotificationKeys.readPostedArgs(typed, notificationName: notificationName)
        case .plain(let plain): checked = try NotificationKeys.readPlainArgs(plain, notificationName: notificationName)
        case .object(let object):
            checked = try NotificationKeys.readOtherArgs(object, notificationName: notificationName)
        case .untyped(let raw):
            checked = try NotificationKeys.readOtherArgs(raw.value, notificationName: notificationName)
        }
        var args = checked
        // Inside the aggregator only, until the plan check takes it (`PostSites.take(from:)`).
        if let postSite { args[PostSites.key] = .string(postSite) }
        // A request context's attributes join the args (the event's own win), and its identity
        // and session come preset: the attribution step keeps them and adds the device
        // (`AttributionState.stamp`, Pipeline/AttributionStep.swift).
        if let requestContext, !requestContext.attributes.isEmpty {
            args.merge(requestContext.attributes) { own, _ in own }
        }
        return MeasurementEvent(
            id: id ?? MeasurementEvent.placeholderID, name: name, args: args, type: type, category: category,
            label: nil, timestamp: timestamp ?? Date(), attributionStorage: requestContext?.attribution)
    }
}

// MARK: - Publishing

extension PostedEvent {
    /// A post in progress on one thread: its record, in the poster's frame, and the identity of
    /// the userInfo it posts; nil and 0 while no post is in progress.
    package struct Published {
        package var record: UnsafeMutablePointer<PostedEvent>?
        package var userInfo: UInt = 0
    }

    /// What a posting thread keeps: the post in progress, and what the aggregators it posts to
    /// keep for it (`MeasurementEventsAggregator`'s per-thread buffers and caches). One
    /// thread-specific value for both, so that a post reads it once on each side.
    package struct PostingThreadState {
        /// What `MeasurementEvent.post` is posting on this thread, if anything.
        package var published = Published()
        /// The aggregators' per-thread object, made by them on this thread's first post to one
        /// of them and released when the thread exits.
        package var aggregators: AnyObject?
    }

    /// Posts `userInfo` on `center` with this record published on this thread meanwhile
    /// (`identity`: the userInfo's, from ``identity(of:)``): the inbox of each aggregator that
    /// observes `center` runs inside the post, on this thread, and takes the record (its
    /// `publishedRecord(in:carrying:)` and `take(_:publishedIn:)`, in Inbox.swift) instead of
    /// decoding the userInfo. What an outer post had published is restored afterwards (a tracker
    /// called with synchronous delivery may post).
    ///
    /// The inbox relies on two invariants. The pointer is valid while it is published: the
    /// poster restores the outer value before its record goes out of scope (in the
    /// `withUnsafeMutablePointer` block below). And the identity names this post's userInfo
    /// alone: the poster holds the dictionary until `center.post` returns, so while it is
    /// published no other dictionary storage can have that identity.
    mutating func post(_ userInfo: [AnyHashable: Any], identifiedBy identity: UInt, to center: NotificationCenter) {
        withUnsafeMutablePointer(to: &self) { record in
            let thread = PostedEvent.thisThread
            let outer = thread.pointee.published
            thread.pointee.published = Published(record: record, userInfo: identity)
            center.post(name: .measurementEvent, object: nil, userInfo: userInfo)
            thread.pointee.published = outer
        }
    }

    /// This thread's ``PostingThreadState``: made on its first post, freed when the thread exits.
    ///
    /// `MeasurementEvent.post` publishes its record here for the duration of the post, so that
    /// the observers that run on this thread (an aggregator's inbox) need not decode the userInfo
    /// it just built (see ``post(_:identifiedBy:to:)``). By pointer, into the poster's frame:
    /// keeping a copy of the record cost about 1,000 instructions a post (10% of a filtered-out
    /// post) in copies and releases.
    @inlinable @inline(__always)
    package static var thisThread: UnsafeMutablePointer<PostingThreadState> {
        // Invariant: the key's value is nil or the state `makeThisThread` allocated for this
        // thread, which the key's destructor frees.
        if let raw = pthread_getspecific(threadKey) { return raw.assumingMemoryBound(to: PostingThreadState.self) }
        return makeThisThread()
    }

    @usableFromInline @inline(never)
    static func makeThisThread() -> UnsafeMutablePointer<PostingThreadState> {
        let state = UnsafeMutablePointer<PostingThreadState>.allocate(capacity: 1)
        state.initialize(to: PostingThreadState())
        pthread_setspecific(threadKey, state)
        return state
    }

    /// The thread-specific key of each thread's ``PostingThreadState``. Its destructor runs when
    /// the thread exits: it releases the aggregators' object (which tells their buffers that
    /// nothing more will come) and frees the state.
    @usableFromInline static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { raw in
            // (The parameter is optional on Linux.)
            let raw: UnsafeMutableRawPointer? = raw
            guard let state = raw?.assumingMemoryBound(to: PostingThreadState.self) else { return }
            state.deinitialize(count: 1)
            state.deallocate()
        }
        return key
    }()

    /// The identity of a dictionary's storage (its one word), or nil on a platform
    /// where a Dictionary is not one word: then nothing is published and every post is decoded.
    /// Only compared, never read through.
    @inlinable
    package static func identity(of userInfo: [AnyHashable: Any]) -> UInt? {
        guard MemoryLayout<[AnyHashable: Any]>.size == MemoryLayout<UInt>.size else { return nil }
        return unsafeBitCast(userInfo, to: UInt.self)
    }
}

// MARK: - Decoding

extension PostedEvent {
    /// Decodes a notification's userInfo under `keys`, strictly (see ``readName(of:keys:)`` and
    /// ``init(name:rest:keys:notificationName:)``).
    init(decoding notification: Notification, keys: NotificationKeys) throws(MalformedEventError) {
        let (name, rest) = try Self.readName(of: notification, keys: keys)
        try self.init(name: name, rest: rest, keys: keys, notificationName: notification.name)
    }

    /// Reads the name (a valid ``EventName``) of a notification under `keys`, and picks out the
    /// userInfo's other values: the inbox filters on the name before it decodes the rest.
    package static func readName(
        of notification: Notification, keys: NotificationKeys
    ) throws(MalformedEventError) -> (EventName, NotificationKeys.Values) {
        let notificationName = notification.name
        guard let info = notification.userInfo else {
            throw MalformedEventError(.missingUserInfo, notificationName: notificationName)
        }
        let values = keys.values(in: info)
        guard let rawName = values.name else {
            throw MalformedEventError(.missingName, notificationName: notificationName)
        }
        guard let string = rawName as? String else {
            throw MalformedEventError(.nameNotString(foundType: typeName(rawName)), notificationName: notificationName)
        }
        let name = EventName(string)
        if let problem = name.validationFailure {
            throw MalformedEventError(.invalidName(name: string, problem: problem), notificationName: notificationName)
        }
        return (name, values)
    }

    /// The record of the event named `name`, from the userInfo's other `values`, strictly: the
    /// type, category, id and timestamp. The args are only picked out, for `makeEvent()`.
    package init(
        name: EventName, rest values: NotificationKeys.Values, keys: NotificationKeys,
        notificationName: Notification.Name
    ) throws(MalformedEventError) {
        self.name = name
        args = Args(values.args)
        type = .default
        if let raw = values.type {
            guard let code = raw as? String, let parsed = EventType(codeOrName: code) else {
                throw MalformedEventError(.invalidType(found: "\(raw)"), notificationName: notificationName)
            }
            type = parsed
        }
        if let raw = values.category {
            guard let string = raw as? String else {
                throw MalformedEventError(
                    .categoryNotString(foundType: typeName(raw)), notificationName: notificationName)
            }
            category = string
        }
        if let raw = values.id {
            guard let string = raw as? String, let uuid = UUID(uuidString: string) else {
                throw MalformedEventError(.invalidID(found: "\(raw)"), notificationName: notificationName)
            }
            id = uuid
        }
        if let raw = values.timestamp {
            guard case .success(let value) = EventValue.converting(raw), let seconds = value.doubleValue,
                MeasurementEvent.timestampRange.contains(seconds)
            else {
                throw MalformedEventError(.invalidTimestamp(found: "\(raw)"), notificationName: notificationName)
            }
            timestamp = Date(timeIntervalSince1970: seconds)
        }
        isLegacyAQS = !keys.isStandard
        postSite = values.postSite as? String
    }
}

extension PostedEvent.Args {
    /// The args of a userInfo, sorted by shape; not checked yet. A `[String: Any]`, the typed
    /// dictionary `MeasurementEvent.post` makes, or an object is kept as it is (no allocation);
    /// any other value is boxed.
    init(_ raw: Any?) {
        guard let raw else {
            self = .typed([:])
            return
        }
        // Only when it is exactly that type: a cast from [String: Any] would convert every
        // element first.
        if Swift.type(of: raw) == [String: any EventValueConvertible].self,
            let typed = raw as? [String: any EventValueConvertible]
        {
            self = .typed(typed)
        } else if Swift.type(of: raw) == [String: Any].self, let plain = raw as? [String: Any] {
            self = .plain(plain)
        } else if Swift.type(of: raw) is AnyClass {
            self = .object(raw as AnyObject)
        } else {
            self = .untyped(PostedEvent.Untyped(raw))
        }
    }
}

/// Where a notification format keeps the event name and args: the uniform format, or the
/// Objective-C AQSEvent library's.
package struct NotificationKeys: Sendable {
    var name: String
    var args: String

    /// Whether these are the uniform format's keys (the only format `MeasurementEvent.post` makes).
    var isStandard = false

    package static let standard = NotificationKeys(
        name: MeasurementEvent.UserInfoKey.name, args: MeasurementEvent.UserInfoKey.args, isStandard: true)
    package static let legacyAQS = NotificationKeys(name: "event_name", args: "event_args")

    /// The userInfo's values under these keys, unchecked: one pass over a small userInfo.
    ///
    /// On Linux each `[AnyHashable: Any]` subscript costs a generic-metadata lookup per key
    /// comparison (about 3,000 instructions), so six lookups cost more than the post itself;
    /// one pass costs a few hundred per entry. A large userInfo, or one with a key that is not a
    /// `String`, is looked up key by key instead.
    func values(in info: [AnyHashable: Any]) -> Values {
        var values = Values()
        guard info.count <= 8 else { return lookingUp(info) }
        for (key, value) in info {
            guard let key = key.base as? String else { return lookingUp(info) }
            switch key {
            case name: values.name = value
            case args: values.args = value
            case MeasurementEvent.UserInfoKey.type: values.type = value
            case MeasurementEvent.UserInfoKey.category: values.category = value
            case MeasurementEvent.UserInfoKey.id: values.id = value
            case MeasurementEvent.UserInfoKey.timestamp: values.timestamp = value
            case PostSites.key: values.postSite = value
            default: continue
            }
        }
        return values
    }

    private func lookingUp(_ info: [AnyHashable: Any]) -> Values {
        Values(
            name: info[name], args: info[args], type: info[MeasurementEvent.UserInfoKey.type],
            category: info[MeasurementEvent.UserInfoKey.category], id: info[MeasurementEvent.UserInfoKey.id],
            timestamp: info[MeasurementEvent.UserInfoKey.timestamp], postSite: info[PostSites.key])
    }

    /// A userInfo's values under the keys of a format, before `PostedEvent` checks them. A
    /// struct: a tuple of six `Any?` was copied through the runtime's generic tuple witnesses.
    package struct Values {
        var name: Any?
        var args: Any?
        var type: Any?
        var category: Any?
        var id: Any?
        var timestamp: Any?
        var postSite: Any?
    }

    /// The args of a userInfo that holds them as a `[String: Any]` (the usual shape).
    static func readPlainArgs(
        _ args: [String: Any], notificationName: Notification.Name
    ) throws(MalformedEventError) -> EventArgs {
        try convertArgs(args, notificationName: notificationName) { $0 }
    }

    /// The args of a userInfo in any other shape (``PostedEvent/Args/init(_:)`` sorted out the
    /// usual ones): an `NSDictionary`, an `[AnyHashable: Any]`, or something that is not a
    /// dictionary at all.
    static func readOtherArgs(_ raw: Any, notificationName: Notification.Name) throws(MalformedEventError)
        -> EventArgs
    {
        // Converted in place: upcasting a [String: Any] to [AnyHashable: Any] copies it.
        if let typed = raw as? [String: Any] {
            return try readPlainArgs(typed, notificationName: notificationName)
        } else if let typed = raw as? [AnyHashable: Any] {
            return try convertArgs(typed, notificationName: notificationName) { key throws(MalformedEventError) in
                guard let key = key.base as? String else {
                    throw MalformedEventError(
                        .argKeyNotString(foundType: typeName(key.base)), notificationName: notificationName)
                }
                return key
            }
        } else {
            throw MalformedEventError(.argsNotDictionary(foundType: typeName(raw)), notificationName: notificationName)
        }
    }

    /// The args `MeasurementEvent.post` puts in the userInfo: already scalars, but a `Double`
    /// may still be NaN or infinite, and an integer may not fit in `Int` (Apple Watch).
    ///
    /// `mapValues` keeps the dictionary's hash layout: no key is hashed again, which made up
    /// most of the delivery thread's cost per event when each was inserted into a new one.
    static func readPostedArgs(
        _ args: [String: any EventValueConvertible], notificationName: Notification.Name
    ) throws(MalformedEventError) -> EventArgs {
        var valid = true
        let converted = args.mapValues { value -> EventValue in
            guard case .success(let scalar) = checked(value) else {
                valid = false
                return .bool(false)
            }
            return scalar
        }
        if valid { return converted }
        // Rare: find which arg it was, for the error.
        for (key, value) in args {
            if case .failure(let rejection) = checked(value) {
                throw MalformedEventError(
                    .argValueRejected(key: key, rejection: rejection), notificationName: notificationName)
            }
        }
        return converted
    }

    @inline(__always)
    private static func checked(_ value: any EventValueConvertible) -> Result<EventValue, EventValue.ValueRejection> {
        switch value.checkedEventValue {
        case .success(.double(let double)) where !double.isFinite: return .failure(.nonFinite)
        case let result: return result
        }
    }

    @inline(__always)
    private static func convertArgs<Key>(
        _ dictionary: [Key: Any], notificationName: Notification.Name,
        readKey: (Key) throws(MalformedEventError) -> String
    ) throws(MalformedEventError) -> EventArgs {
        var result = EventArgs(minimumCapacity: dictionary.count)
        for (key, value) in dictionary {
            let key = try readKey(key)
            switch EventValue.converting(value) {
            case .success(let scalar): result[key] = scalar
            case .failure(let rejection):
                throw MalformedEventError(
                    .argValueRejected(key: key, rejection: rejection), notificationName: notificationName)
            }
        }
        return result
    }
}

/// The name of a value's dynamic type, for errors.
func typeName(_ value: Any) -> String {
    String(describing: type(of: value))
}
