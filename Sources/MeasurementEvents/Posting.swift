import Foundation

extension Notification.Name {
    /// The one name every measurement event is posted under.
    public static let measurementEvent = Notification.Name("org.measurementevents.event")

    /// The notification name of the Objective-C AQSEvent library, accepted by aggregators
    /// with ``EventAggregator/Configuration/acceptsLegacyAQSNotifications``.
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
        guard let identity = PostingThread.identity(of: info) else {
            return center.post(name: .measurementEvent, object: nil, userInfo: info)
        }
        // The aggregators observing `center` take this record instead of decoding `info`.
        var record = PostedEvent(name: name, type: type, category: category, args: .typed(args))
        record.postSite = site
        withUnsafePointer(to: &record) { record in
            let thread = PostingThread.current
            let outer = thread.publish(record, userInfo: identity)
            center.post(name: .measurementEvent, object: nil, userInfo: info)
            thread.restore(outer)
        }
    }

    /// The userInfo of a post. Not inlined: in the caller, the literal's array of pairs was
    /// allocated on the heap instead of the stack (one more allocation a post).
    @inline(never)
    private static func postedUserInfo(
        name: EventName, type: EventType, category: String?, args: [String: any EventValueConvertible]
    ) -> [AnyHashable: Any] {
        var info: [AnyHashable: Any] = [UserInfoKey.name: name.rawValue, UserInfoKey.args: args]
        if type != .default { info[UserInfoKey.type] = type.rawValue }
        if let category { info[UserInfoKey.category] = category }
        return info
    }

    /// Whether every value is a `String`, `Int`, `Double` or `Bool`, which any observer can read
    /// with `as? [String: Any]`; an ``EventValue`` or a custom conformer is not.
    @inline(__always)
    private static func allPlain(_ args: [String: any EventValueConvertible]) -> Bool {
        for value in args.values {
            guard PlainValueTypes.contains(Swift.type(of: value)) else { return false }
        }
        return true
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
        var info: [AnyHashable: Any] = [
            UserInfoKey.name: name.rawValue, UserInfoKey.args: args.mapValues(\.plainValue),
        ]
        if type != .default { info[UserInfoKey.type] = type.rawValue }
        if let category { info[UserInfoKey.category] = category }
        return info
    }
}

/// The one record of a posted event inside an aggregator, from the observer to the drain.
///
/// It is made in one of two ways: by ``MeasurementEvent/post(_:type:category:args:to:file:line:)``,
/// which publishes it on its thread for the duration of the post (below), so that the observer
/// need not decode the userInfo it just built; or by decoding any other notification (in
/// `NotificationDecoding.swift`: the name first, the rest once the filter keeps it). Either way
/// the inbox counts, filters, admits and queues it in one place (its `admit` and `enqueue`), and
/// the drain makes the public ``MeasurementEvent`` of it (`makeEvent()`, in
/// `PostingBufferRegistry.swift`), which is where the args are checked, once.
struct PostedEvent {
    /// The args as the poster gave them: checked by `makeEvent()`, off the posting thread.
    enum Args {
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
    final class Untyped {
        let value: Any
        init(_ value: Any) { self.value = value }
    }

    var name: EventName
    var type: EventType
    var category: String?
    var args: Args
    /// The id a re-posted complete event carries; `nil`: the delivery side assigns one.
    var id: UUID?
    /// When it was posted: carried by a re-posted complete event, otherwise stamped by the
    /// inbox when it admits the record.
    var timestamp: Date?
    /// Whether it came under the Objective-C AQSEvent library's notification name (for errors).
    var isLegacyAQS = false
    /// Where it was posted (`File.swift:42`), while an aggregator checks a plan: beside the args,
    /// so that no observer sees it as one (see `PostSites`).
    var postSite: String?
    /// The place in the aggregator's sequence (asynchronous delivery), set by its buffer.
    var sequence: Int64 = 0

    var notificationName: Notification.Name { isLegacyAQS ? .legacyAQSEvent : .measurementEvent }
}

extension PostingThread {
    /// Publishes `record` to the observers that run on this thread until ``restore(_:)``, so
    /// that they need not decode the userInfo they receive; returns what an outer post had
    /// published (nested posts work).
    ///
    /// By pointer, into the poster's frame: keeping a copy of the record in the thread object
    /// cost about 1,000 instructions a post (10% of a filtered-out post) in copies and releases.
    /// Invariant: the poster calls ``restore(_:)`` before `record` goes out of scope (in the
    /// `withUnsafePointer` block that made it), so the pointer is valid while it is published.
    @inline(__always)
    func publish(_ record: UnsafePointer<PostedEvent>, userInfo: UInt) -> Published {
        defer { published = Published(record: record, userInfo: userInfo) }
        return published
    }

    /// Publishes again what ``publish(_:userInfo:)`` returned.
    @inline(__always)
    func restore(_ outer: Published) {
        published = outer
    }

    /// The record published by the post in progress on this thread, if `notification` carries
    /// the very userInfo that post is posting; otherwise nil, and the caller decodes the
    /// notification, which gives the same record. Valid only while the observer runs; read in
    /// place (a copy retains and releases every field).
    ///
    /// Invariant: the poster holds its userInfo until `post` returns, so while it is published
    /// no other dictionary storage can have its identity; a dictionary with the same identity
    /// shares its storage, hence its contents. A copy of the userInfo (same storage) matches; one
    /// bridged to or from `NSDictionary`, or rebuilt, does not, and is decoded.
    @inline(__always)
    func publishedRecord(carrying notification: borrowing Notification) -> UnsafePointer<PostedEvent>? {
        guard let record = published.record else { return nil }
        // The identity without binding a copy of the dictionary (a retain and a release).
        guard notification.userInfo.map({ Self.identity(of: $0) }) == published.userInfo else { return nil }
        return record
    }

    /// The identity of a dictionary's storage (its one word), or nil on a platform
    /// where a Dictionary is not one word: then nothing is published and every post is decoded.
    /// Only compared, never read through.
    @inline(__always)
    static func identity(of userInfo: [AnyHashable: Any]) -> UInt? {
        guard MemoryLayout<[AnyHashable: Any]>.size == MemoryLayout<UInt>.size else { return nil }
        return unsafeBitCast(userInfo, to: UInt.self)
    }
}
