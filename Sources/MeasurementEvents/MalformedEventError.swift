import Foundation

/// Why a notification could not be read as a measurement event.
public struct MalformedEventError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong with the notification.
    public enum Reason: Hashable, Sendable {
        /// The notification had no userInfo.
        case missingUserInfo
        /// The userInfo had no `name`.
        case missingName
        /// The `name` was not a string.
        case nameNotString(foundType: String)
        /// The `name` was not a valid event name.
        case invalidName(name: String, problem: String)
        /// The `args` were not a string-keyed dictionary.
        case argsNotDictionary(foundType: String)
        /// An arg key was not a string.
        case argKeyNotString(foundType: String)
        /// An arg value was not a scalar.
        case argValueRejected(key: String, rejection: EventValue.ValueRejection)
        /// The `type` was not one of the wire codes `ac`, `cl`, `im`, `rd`, `ua`.
        case invalidType(found: String)
        /// The `category` was not a string.
        case categoryNotString(foundType: String)
        /// The `id` was not a UUID.
        case invalidID(found: String)
        /// The `timestamp` was not a date or a number of seconds since 1970 between the years 1 and 9999.
        case invalidTimestamp(found: String)
    }

    /// What was wrong.
    public let reason: Reason
    /// The notification's name, to tell the uniform name from a legacy one.
    public let notificationName: String

    /// An error for `reason`.
    ///
    /// - Parameters:
    ///   - reason: what was wrong.
    ///   - notificationName: the notification's name.
    public init(_ reason: Reason, notificationName: Notification.Name = .measurementEvent) {
        self.reason = reason
        self.notificationName = notificationName.rawValue
    }

    /// What was wrong, naming the notification.
    public var description: String {
        let what: String
        switch reason {
        case .missingUserInfo: what = "it has no userInfo"
        case .missingName: what = "userInfo has no event name"
        case .nameNotString(let type): what = "the event name is \(type.withIndefiniteArticle), expected a String"
        case .invalidName(let name, let problem):
            what =
                "the event name \(quotedInFull(name.count > 80 ? name.prefix(80) + "…" : name)) is invalid: \(problem)"
        case .argsNotDictionary(let type):
            what = "args is \(type.withIndefiniteArticle), expected a [String: Any] dictionary"
        case .argKeyNotString(let type): what = "an arg key is \(type.withIndefiniteArticle), expected a String"
        case .argValueRejected(let key, let rejection): what = "arg \(quotedInFull(key)) is \(rejection)"
        case .invalidType(let found): what = "the event type \(quotedInFull(found)) is not one of ac, cl, im, rd, ua"
        case .categoryNotString(let type): what = "the category is \(type.withIndefiniteArticle), expected a String"
        case .invalidID(let found): what = "the id \(quotedInFull(found)) is not a UUID"
        case .invalidTimestamp(let found):
            what = "the timestamp \(found) is not a number of seconds since 1970 between years 1 and 9999"
        }
        return "malformed measurement event notification (\(notificationName)): \(what)"
    }
}
