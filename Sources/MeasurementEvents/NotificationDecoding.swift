import Foundation

extension MeasurementEvent {
    /// Reads a received notification back into an event, strictly; never crashes.
    ///
    /// Events without an id or timestamp in their userInfo (the usual case) get a new id and
    /// the current time.
    ///
    /// - Parameter notification: a notification on the event name.
    /// - Throws: ``MalformedEventError`` saying what was wrong.
    public init(notification: Notification) throws(MalformedEventError) {
        let fields = try NotificationKeys.standard.readFields(notification)
        try self.init(fields: fields, receivedAt: Date(), assignsID: true)
    }

    /// With `assignsID` false, an event whose userInfo carries no id gets ``placeholderID``,
    /// for the aggregator to replace off the posting thread.
    init(fields: NotificationFields, receivedAt: Date, assignsID: Bool) throws(MalformedEventError) {
        let notificationName = fields.notificationName
        let args = try NotificationKeys.readArgs(fields.args, notificationName: notificationName)
        var type = EventType.default
        if let raw = fields.type {
            guard let code = raw as? String, let parsed = EventType(codeOrName: code) else {
                throw MalformedEventError(.invalidType(found: "\(raw)"), notificationName: notificationName)
            }
            type = parsed
        }
        var category: String?
        if let raw = fields.category {
            guard let string = raw as? String else {
                throw MalformedEventError(
                    .categoryNotString(foundType: typeName(raw)), notificationName: notificationName)
            }
            category = string
        }
        var id: UUID?
        if let raw = fields.id {
            guard let string = raw as? String, let uuid = UUID(uuidString: string) else {
                throw MalformedEventError(.invalidID(found: "\(raw)"), notificationName: notificationName)
            }
            id = uuid
        }
        var timestamp = receivedAt
        if let raw = fields.timestamp {
            guard case .success(let value) = EventValue.converting(raw), let seconds = value.doubleValue,
                Self.timestampRange.contains(seconds)
            else {
                throw MalformedEventError(.invalidTimestamp(found: "\(raw)"), notificationName: notificationName)
            }
            timestamp = Date(timeIntervalSince1970: seconds)
        }
        self.init(
            fields.name, type: type, category: category, args: args,
            id: id ?? (assignsID ? EventIDGenerator.makeID() : Self.placeholderID), timestamp: timestamp)
    }
}

extension MeasurementEvent {
    /// The timestamps a notification may carry, in seconds since 1970: years 1 to 9999. Larger
    /// values are garbage, and would overflow the integer milliseconds and microseconds of
    /// the wire formats.
    static let timestampRange: ClosedRange<TimeInterval> = UnixTime.earliestSeconds...UnixTime.latestSeconds

    /// The all-zero UUID, never produced by ``EventIDGenerator``.
    static let placeholderID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

/// Where a notification format keeps the event name and args: the uniform format, or the
/// Objective-C AQSEvent library's.
struct NotificationKeys: Sendable {
    var name: String
    var args: String

    /// Whether these are the uniform format's keys (the only format `MeasurementEvent.post` makes).
    var isStandard = false

    static let standard = NotificationKeys(
        name: MeasurementEvent.UserInfoKey.name, args: MeasurementEvent.UserInfoKey.args, isStandard: true)
    static let legacyAQS = NotificationKeys(name: "event_name", args: "event_args")

    /// Reads the event name (strictly) and picks out the other values an event is made of.
    func readFields(_ notification: Notification) throws(MalformedEventError) -> NotificationFields {
        guard let info = notification.userInfo else {
            throw MalformedEventError(.missingUserInfo, notificationName: notification.name)
        }
        var raw = RawFields()
        if !raw.scan(info, keys: self) {
            raw = RawFields(lookingUp: info, keys: self)
        }
        guard let rawName = raw.name else {
            throw MalformedEventError(.missingName, notificationName: notification.name)
        }
        guard let string = rawName as? String else {
            throw MalformedEventError(.nameNotString(foundType: typeName(rawName)), notificationName: notification.name)
        }
        let eventName = EventName(string)
        if let problem = eventName.validationFailure {
            throw MalformedEventError(.invalidName(name: string, problem: problem), notificationName: notification.name)
        }
        return NotificationFields(
            name: eventName, args: raw.args, type: raw.type, category: raw.category, id: raw.id,
            timestamp: raw.timestamp, notificationName: notification.name)
    }

    static func readArgs(_ raw: Any?, notificationName: Notification.Name) throws(MalformedEventError) -> EventArgs {
        guard let raw else { return [:] }
        // Only when it is exactly that type: a cast from [String: Any] would convert every
        // element first, which costs more than reading them.
        if Swift.type(of: raw) == [String: any EventValueConvertible].self,
            let typed = raw as? [String: any EventValueConvertible]
        {
            return try readPostedArgs(typed, notificationName: notificationName)
        }
        // Converted in place: upcasting a [String: Any] to [AnyHashable: Any] copies it.
        if let typed = raw as? [String: Any] {
            return try convertArgs(typed, notificationName: notificationName) { $0 }
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

/// The values of one notification that make an event, before they are checked (except the
/// name, which the aggregator filters on first).
struct NotificationFields {
    var name: EventName
    var args: Any?
    var type: Any?
    var category: Any?
    var id: Any?
    var timestamp: Any?
    var notificationName: Notification.Name
}

/// The userInfo values under the keys of a notification format, unchecked.
private struct RawFields {
    var name: Any?
    var args: Any?
    var type: Any?
    var category: Any?
    var id: Any?
    var timestamp: Any?

    init() {}

    init(lookingUp info: [AnyHashable: Any], keys: NotificationKeys) {
        name = info[keys.name]
        args = info[keys.args]
        type = info[MeasurementEvent.UserInfoKey.type]
        category = info[MeasurementEvent.UserInfoKey.category]
        id = info[MeasurementEvent.UserInfoKey.id]
        timestamp = info[MeasurementEvent.UserInfoKey.timestamp]
    }

    /// Reads a small userInfo in one pass. On Linux each `[AnyHashable: Any]` subscript costs
    /// a generic-metadata lookup per key comparison (about 3,000 instructions), so six lookups
    /// cost more than the post itself; one pass costs a few hundred per entry. Returns false,
    /// having read nothing reliable, for a large userInfo or a key that is not a `String`:
    /// the caller then looks the keys up.
    mutating func scan(_ info: [AnyHashable: Any], keys: NotificationKeys) -> Bool {
        guard info.count <= 8 else { return false }
        for (key, value) in info {
            guard let key = key.base as? String else { return false }
            switch key {
            case keys.name: name = value
            case keys.args: args = value
            case MeasurementEvent.UserInfoKey.type: type = value
            case MeasurementEvent.UserInfoKey.category: category = value
            case MeasurementEvent.UserInfoKey.id: id = value
            case MeasurementEvent.UserInfoKey.timestamp: timestamp = value
            default: continue
            }
        }
        return true
    }
}

private func typeName(_ value: Any) -> String {
    String(describing: type(of: value))
}
