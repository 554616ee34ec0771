import Foundation

/// Why a notification could not be read as a measurement event.
public struct MalformedEventError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        case missingUserInfo
        case missingName
        case nameNotString(foundType: String)
        case invalidName(name: String, problem: String)
        case argsNotDictionary(foundType: String)
        case argKeyNotString(foundType: String)
        case argValueRejected(key: String, rejection: EventValue.ValueRejection)
        case invalidType(found: String)
        case categoryNotString(foundType: String)
        case invalidID(found: String)
        case invalidTimestamp(found: String)
    }

    public let reason: Reason
    /// The notification's name, to tell the uniform name from a legacy one.
    public let notificationName: String

    public init(_ reason: Reason, notificationName: Notification.Name = .measurementEvent) {
        self.reason = reason
        self.notificationName = notificationName.rawValue
    }

    public var description: String {
        let what: String
        switch reason {
        case .missingUserInfo: what = "it has no userInfo"
        case .missingName: what = "userInfo has no event name"
        case .nameNotString(let type): what = "the event name is a \(type), expected a String"
        case .invalidName(let name, let problem):
            what = "the event name \"\(name.prefix(80))\(name.count > 80 ? "…" : "")\" is invalid: \(problem)"
        case .argsNotDictionary(let type): what = "args is a \(type), expected a [String: Any] dictionary"
        case .argKeyNotString(let type): what = "an arg key is a \(type), expected a String"
        case .argValueRejected(let key, let rejection): what = "arg \"\(key)\" is \(rejection)"
        case .invalidType(let found): what = "the event type \"\(found)\" is not one of ac, cl, im, rd, ua"
        case .categoryNotString(let type): what = "the category is a \(type), expected a String"
        case .invalidID(let found): what = "the id \"\(found)\" is not a UUID"
        case .invalidTimestamp(let found): what = "the timestamp \(found) is not a finite number of seconds"
        }
        return "malformed measurement event notification (\(notificationName)): \(what)"
    }
}

extension MeasurementEvent {
    /// Reads a received notification back into an event, strictly; never crashes.
    ///
    /// Events without an id or timestamp in their userInfo (the usual case) get a new id and
    /// the current time.
    public init(notification: Notification) throws(MalformedEventError) {
        let keys = NotificationKeys.standard
        let name = try keys.readName(notification)
        try self.init(notification: notification, name: name, keys: keys, receivedAt: Date(), assignsID: true)
    }

    /// With `assignsID` false, an event whose userInfo carries no id gets ``placeholderID``,
    /// for the aggregator to replace off the posting thread.
    init(
        notification: Notification, name: EventName, keys: NotificationKeys, receivedAt: Date, assignsID: Bool
    ) throws(MalformedEventError) {
        let info = notification.userInfo ?? [:]
        let args = try keys.readArgs(info, notificationName: notification.name)
        var type = EventType.default
        if let raw = info[MeasurementEvent.UserInfoKey.type] {
            guard let code = raw as? String, let parsed = EventType(codeOrName: code) else {
                throw MalformedEventError(.invalidType(found: "\(raw)"), notificationName: notification.name)
            }
            type = parsed
        }
        var category: String?
        if let raw = info[MeasurementEvent.UserInfoKey.category] {
            guard let string = raw as? String else {
                throw MalformedEventError(.categoryNotString(foundType: typeName(raw)), notificationName: notification.name)
            }
            category = string
        }
        var id: UUID?
        if let raw = info[MeasurementEvent.UserInfoKey.id] {
            guard let string = raw as? String, let uuid = UUID(uuidString: string) else {
                throw MalformedEventError(.invalidID(found: "\(raw)"), notificationName: notification.name)
            }
            id = uuid
        }
        var timestamp = receivedAt
        if let raw = info[MeasurementEvent.UserInfoKey.timestamp] {
            guard case .success(let value) = EventValue.converting(raw), let seconds = value.doubleValue else {
                throw MalformedEventError(.invalidTimestamp(found: "\(raw)"), notificationName: notification.name)
            }
            timestamp = Date(timeIntervalSince1970: seconds)
        }
        self.init(
            name, type: type, category: category, args: args,
            id: id ?? (assignsID ? EventIDGenerator.makeID() : Self.placeholderID), timestamp: timestamp)
    }
}

extension MeasurementEvent {
    /// The all-zero UUID, never produced by ``EventIDGenerator``.
    static let placeholderID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

/// Where a notification format keeps the event name and args: the uniform format, or the
/// Objective-C AQSEvent library's.
struct NotificationKeys: Sendable {
    var name: String
    var args: String

    static let standard = NotificationKeys(name: MeasurementEvent.UserInfoKey.name, args: MeasurementEvent.UserInfoKey.args)
    static let legacyAQS = NotificationKeys(name: "event_name", args: "event_args")

    @inline(__always)
    func readName(_ notification: Notification) throws(MalformedEventError) -> EventName {
        guard let info = notification.userInfo else {
            throw MalformedEventError(.missingUserInfo, notificationName: notification.name)
        }
        guard let raw = info[name] else {
            throw MalformedEventError(.missingName, notificationName: notification.name)
        }
        guard let string = raw as? String else {
            throw MalformedEventError(.nameNotString(foundType: typeName(raw)), notificationName: notification.name)
        }
        let eventName = EventName(string)
        if let problem = eventName.validationFailure {
            throw MalformedEventError(.invalidName(name: string, problem: problem), notificationName: notification.name)
        }
        return eventName
    }

    func readArgs(_ info: [AnyHashable: Any], notificationName: Notification.Name) throws(MalformedEventError) -> EventArgs {
        guard let raw = info[args] else { return [:] }
        let dictionary: [AnyHashable: Any]
        if let typed = raw as? [String: Any] {
            dictionary = typed
        } else if let typed = raw as? [AnyHashable: Any] {
            dictionary = typed
        } else {
            throw MalformedEventError(.argsNotDictionary(foundType: typeName(raw)), notificationName: notificationName)
        }
        var result = EventArgs(minimumCapacity: dictionary.count)
        for (key, value) in dictionary {
            guard let key = key.base as? String else {
                throw MalformedEventError(.argKeyNotString(foundType: typeName(key.base)), notificationName: notificationName)
            }
            switch EventValue.converting(value) {
            case .success(let scalar): result[key] = scalar
            case .failure(let rejection):
                throw MalformedEventError(.argValueRejected(key: key, rejection: rejection), notificationName: notificationName)
            }
        }
        return result
    }
}

private func typeName(_ value: Any) -> String {
    String(describing: type(of: value))
}
