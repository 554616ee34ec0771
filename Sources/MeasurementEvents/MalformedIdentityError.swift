import Foundation

/// Why a notification could not be read as an identity change.
public struct MalformedIdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong with the notification.
    public enum Reason: Hashable, Sendable {
        /// The notification had no userInfo.
        case missingUserInfo
        /// The `change` key held no known change (`identify`, `reset`, `group`).
        case unknownChange(found: String)
        /// A user or group id was not a string.
        case idNotString(key: String, foundType: String)
        /// A user or group id was empty.
        case emptyID(key: String)
        /// A user or group id was longer than ``IdentityChange/maximumIDBytes``.
        case idTooLong(key: String, bytes: Int)
        /// A user or group id held a control character.
        case idHasControlCharacter(key: String)
        /// A group change had no group id.
        case missingGroupID
        /// The traits were not a string-keyed dictionary.
        case traitsNotDictionary(foundType: String)
        /// A trait key was not a string.
        case traitKeyNotString(foundType: String)
        /// A trait key was empty.
        case emptyTraitKey
        /// A trait value was not a scalar.
        case traitValueRejected(key: String, rejection: EventValue.ValueRejection)
        /// There were more than ``IdentityChange/maximumTraits`` traits.
        case tooManyTraits(count: Int)
    }

    /// What was wrong.
    public let reason: Reason

    /// An error for `reason`.
    ///
    /// - Parameter reason: what was wrong.
    public init(_ reason: Reason) {
        self.reason = reason
    }

    /// What was wrong, in a sentence for a log.
    public var description: String {
        let what: String
        switch reason {
        case .missingUserInfo: what = "it has no userInfo"
        case .unknownChange(let found): what = "the change \(found) is not one of \"identify\", \"reset\", \"group\""
        case .idNotString(let key, let type): what = "\(key) is \(type.withIndefiniteArticle), expected a String"
        case .emptyID(let key): what = "\(key) is empty, expected a non-empty String (leave it out for no change)"
        case .idTooLong(let key, let bytes):
            what = "\(key) has \(bytes) bytes, expected at most \(IdentityChange.maximumIDBytes)"
        case .idHasControlCharacter(let key): what = "\(key) contains a control character, expected printable text"
        case .missingGroupID: what = "a group change has no group_id, expected a String"
        case .traitsNotDictionary(let type):
            what = "traits is \(type.withIndefiniteArticle), expected a [String: Any] dictionary"
        case .traitKeyNotString(let type): what = "a trait key is \(type.withIndefiniteArticle), expected a String"
        case .emptyTraitKey: what = "a trait key is empty, expected a non-empty String"
        case .traitValueRejected(let key, let rejection): what = "trait \"\(key)\" is \(rejection)"
        case .tooManyTraits(let count):
            what = "it has \(count) traits, expected at most \(IdentityChange.maximumTraits)"
        }
        return "malformed identity change notification (\(Notification.Name.measurementIdentity.rawValue)): \(what)"
    }
}

extension IdentityChange {
    /// Reads a received notification back into a change, strictly; never crashes.
    ///
    /// - Parameter notification: a notification on the identity name.
    /// - Throws: ``MalformedIdentityError`` saying what was wrong.
    public init(notification: Notification) throws(MalformedIdentityError) {
        guard let info = notification.userInfo else { throw MalformedIdentityError(.missingUserInfo) }
        let change = info[UserInfoKey.change]
        switch change as? String {
        case "identify":
            let userID = try Self.readID(info[UserInfoKey.userID], key: UserInfoKey.userID)
            self = .identify(userID: userID, traits: try Self.readTraits(info[UserInfoKey.traits]))
        case "reset":
            self = .reset
        case "group":
            guard let groupID = try Self.readID(info[UserInfoKey.groupID], key: UserInfoKey.groupID) else {
                throw MalformedIdentityError(.missingGroupID)
            }
            self = .group(groupID: groupID, traits: try Self.readTraits(info[UserInfoKey.traits]))
        default:
            throw MalformedIdentityError(.unknownChange(found: change.map { "\"\($0)\"" } ?? "(missing)"))
        }
    }

    /// The same rules for a change made in code: a change that breaks them is refused.
    public func validated() throws(MalformedIdentityError) -> IdentityChange {
        switch self {
        case .identify(let userID, let traits):
            _ = try Self.readID(userID, key: UserInfoKey.userID)
            try Self.checkTraits(traits)
        case .reset: break
        case .group(let groupID, let traits):
            _ = try Self.readID(groupID, key: UserInfoKey.groupID)
            try Self.checkTraits(traits)
        }
        return self
    }

    private static func readID(_ raw: Any?, key: String) throws(MalformedIdentityError) -> String? {
        guard let raw else { return nil }
        guard let id = raw as? String else {
            throw MalformedIdentityError(.idNotString(key: key, foundType: String(describing: type(of: raw))))
        }
        let bytes = id.utf8.count
        if bytes == 0 { throw MalformedIdentityError(.emptyID(key: key)) }
        if bytes > maximumIDBytes { throw MalformedIdentityError(.idTooLong(key: key, bytes: bytes)) }
        if id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw MalformedIdentityError(.idHasControlCharacter(key: key))
        }
        return id
    }

    private static func readTraits(_ raw: Any?) throws(MalformedIdentityError) -> EventArgs {
        guard let raw else { return [:] }
        var traits = EventArgs()
        if let plain = raw as? [String: Any] {
            for (key, value) in plain { traits[key] = try convert(value, key: key) }
        } else if let keyed = raw as? [AnyHashable: Any] {
            for (key, value) in keyed {
                guard let key = key.base as? String else {
                    throw MalformedIdentityError(.traitKeyNotString(foundType: String(describing: type(of: key.base))))
                }
                traits[key] = try convert(value, key: key)
            }
        } else {
            throw MalformedIdentityError(.traitsNotDictionary(foundType: String(describing: type(of: raw))))
        }
        try checkTraits(traits)
        return traits
    }

    private static func convert(_ value: Any, key: String) throws(MalformedIdentityError) -> EventValue {
        switch EventValue.converting(value) {
        case .success(let scalar): return scalar
        case .failure(let rejection): throw MalformedIdentityError(.traitValueRejected(key: key, rejection: rejection))
        }
    }

    private static func checkTraits(_ traits: EventArgs) throws(MalformedIdentityError) {
        if traits.count > maximumTraits { throw MalformedIdentityError(.tooManyTraits(count: traits.count)) }
        if traits.keys.contains("") { throw MalformedIdentityError(.emptyTraitKey) }
        for (key, value) in traits {
            if case .double(let double) = value, !double.isFinite {
                throw MalformedIdentityError(.traitValueRejected(key: key, rejection: .nonFinite))
            }
        }
    }
}
