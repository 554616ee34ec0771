import Foundation

/// Who an event is about, as the aggregator knew it when the event was posted: the user id
/// the app set, the anonymous id made for this install, the user's traits, and the group.
///
/// Set on every forwarded event (``MeasurementEvent/identity``) and on every identity change
/// a tracker receives (`IdentityEvent.attribution.identity`).
public struct EventIdentity: Sendable, Hashable, Codable {
    /// The app's id for the signed-in user; `nil` when nobody is signed in.
    public var userID: String?
    /// Made once per install (or store) and replaced only by ``IdentityChange/reset``.
    public var anonymousID: String
    /// What the app said about the user with ``IdentityChange/identify(userID:traits:)``.
    public var traits: EventArgs
    /// The group (account, organisation, team) the user acts for, when one was set.
    public var groupID: String?
    /// What the app said about the group.
    public var groupTraits: EventArgs

    /// An identity.
    ///
    /// - Parameters:
    ///   - userID: the app's id for the user; `nil` when nobody is signed in.
    ///   - anonymousID: the id made for this install.
    ///   - traits: what the app said about the user.
    ///   - groupID: the group the user acts for.
    ///   - groupTraits: what the app said about the group.
    public init(
        userID: String? = nil, anonymousID: String, traits: EventArgs = [:], groupID: String? = nil,
        groupTraits: EventArgs = [:]
    ) {
        self.userID = userID
        self.anonymousID = anonymousID
        self.traits = traits
        self.groupID = groupID
        self.groupTraits = groupTraits
    }

    /// A new anonymous identity: a random anonymous id and nothing else.
    public static func anonymous() -> EventIdentity {
        EventIdentity(anonymousID: UUID().uuidString.lowercased())
    }

    /// This identity after `change`.
    ///
    /// - `identify` with a user id other than the current one starts over with the new user's
    ///   traits (they describe a different person); with the same id or `nil` it merges them.
    /// - `reset` clears the user id, traits and group, and makes a new anonymous id.
    /// - `group` sets the group; traits merge when the group is the same.
    ///
    /// - Parameters:
    ///   - change: the identity change.
    ///   - newAnonymousID: makes the anonymous id after a reset.
    /// - Returns: the identity after the change.
    public func applying(_ change: IdentityChange, newAnonymousID: () -> String = { UUID().uuidString.lowercased() })
        -> EventIdentity
    {
        var next = self
        switch change {
        case .identify(let userID, let traits):
            if let userID, userID != self.userID {
                next.userID = userID
                next.traits = traits
            } else {
                next.traits.merge(traits) { _, new in new }
            }
        case .reset:
            next = EventIdentity(anonymousID: newAnonymousID())
        case .group(let groupID, let traits):
            if groupID == self.groupID {
                next.groupTraits.merge(traits) { _, new in new }
            } else {
                next.groupID = groupID
                next.groupTraits = traits
            }
        }
        return next
    }
}
