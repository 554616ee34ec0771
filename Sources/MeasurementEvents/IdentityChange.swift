import Foundation

extension Notification.Name {
    /// The one name every identity change is posted under. Apart from
    /// ``measurementEvent``, so that a test expecting an event is never fulfilled by an
    /// identity change.
    public static let measurementIdentity = Notification.Name("org.measurementevents.identity")
}

/// A change of who the user is, posted on the bus like an event and applied by the aggregator
/// in posting order with the events of the same thread.
///
/// ```swift
/// MeasurementIdentity.identify(userID: "user-42", traits: ["plan": "pro"])
/// MeasurementEvent.post("account/signed_out")
/// MeasurementIdentity.reset()   // the sign-out event above still carries "user-42"
/// ```
public enum IdentityChange: Sendable, Hashable {
    /// The user is `userID` (`nil`: the current user, or still anonymous); `traits` describe them.
    case identify(userID: String?, traits: EventArgs)
    /// The user signed out: user id, traits and group are cleared and a new anonymous id is made.
    case reset
    /// The user acts for group `groupID` (an account, an organisation); `traits` describe it.
    case group(groupID: String, traits: EventArgs)

    /// The longest user or group id accepted, in UTF-8 bytes.
    public static let maximumIDBytes = 1_024
    /// The most traits one change may carry.
    public static let maximumTraits = 1_000

    /// The userInfo keys of an identity change notification.
    public enum UserInfoKey {
        /// `"identify"`, `"reset"` or `"group"`.
        public static let change = "change"
        /// The user id, a `String` (identify only; absent for "no change").
        public static let userID = "user_id"
        /// The group id, a `String` (group only).
        public static let groupID = "group_id"
        /// The traits, a `[String: Any]` of `String`, `Int`, `Double` or `Bool`.
        public static let traits = "traits"
    }

    /// Posts this change with the uniform name `Notification.Name.measurementIdentity`
    /// and `object: nil`; inside a ``MeasurementRequestContext``, applies it to that context
    /// instead, and posts nothing (no aggregator's identity changes).
    ///
    /// - Parameter center: where to post; `.default` unless a test isolates it.
    public func post(to center: NotificationCenter = .default) {
        if let context = MeasurementRequestContext.current { return context.apply(self) }
        center.post(name: .measurementIdentity, object: nil, userInfo: userInfo)
    }

    /// The userInfo a post carries: plain Foundation values only.
    public var userInfo: [AnyHashable: Any] {
        switch self {
        case .identify(let userID, let traits):
            var info: [AnyHashable: Any] = [
                UserInfoKey.change: "identify", UserInfoKey.traits: traits.mapValues(\.plainValue),
            ]
            if let userID { info[UserInfoKey.userID] = userID }
            return info
        case .reset:
            return [UserInfoKey.change: "reset"]
        case .group(let groupID, let traits):
            return [
                UserInfoKey.change: "group", UserInfoKey.groupID: groupID,
                UserInfoKey.traits: traits.mapValues(\.plainValue),
            ]
        }
    }
}

/// Posting identity changes in one line, from any module that imports `MeasurementEvents`.
///
/// ```swift
/// MeasurementIdentity.identify(userID: account.id, traits: ["plan": account.plan])
/// MeasurementIdentity.group(account.teamID, traits: ["seats": 40])
/// MeasurementIdentity.reset()
/// ```
///
/// Inside a ``MeasurementRequestContext`` (a server handling one user's request), each call
/// changes that context only.
public enum MeasurementIdentity {
    /// Says who the user is. `traits` are scalar values, like an event's args.
    ///
    /// - Parameters:
    ///   - userID: the app's id for the user; `nil` keeps the current one and sets traits only.
    ///   - traits: what the app says about the user; scalar values.
    ///   - center: where to post; `.default` unless a test isolates it.
    public static func identify(
        userID: String?, traits: [String: any EventValueConvertible] = [:], to center: NotificationCenter = .default
    ) {
        IdentityChange.identify(userID: userID, traits: traits.eventArgs).post(to: center)
    }

    /// Says the user signed out: the next events carry no user id and a new anonymous id.
    ///
    /// - Parameter center: where to post; `.default` unless a test isolates it.
    public static func reset(to center: NotificationCenter = .default) {
        IdentityChange.reset.post(to: center)
    }

    /// Says which group (account, organisation) the user acts for.
    ///
    /// - Parameters:
    ///   - groupID: the group's id.
    ///   - traits: what the app says about the group; scalar values.
    ///   - center: where to post; `.default` unless a test isolates it.
    public static func group(
        _ groupID: String, traits: [String: any EventValueConvertible] = [:], to center: NotificationCenter = .default
    ) {
        IdentityChange.group(groupID: groupID, traits: traits.eventArgs).post(to: center)
    }
}
