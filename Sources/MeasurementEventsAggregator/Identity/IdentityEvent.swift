import Foundation
import MeasurementEvents

/// An identity change as trackers receive it (``EventTracker/identify(_:)``): what changed, and
/// the identity, session and context after it, in order with the events around it.
public struct IdentityEvent: Sendable, Hashable {
    /// What changed: identify, reset or group.
    public var change: IdentityChange
    /// Unique per change; vendors de-duplicate retried uploads on it.
    public var id: UUID
    /// When the change was applied.
    public var timestamp: Date
    /// The identity after the change (after `IdentityChange.reset`: the new anonymous id),
    /// with the session and context.
    public var attribution: EventAttribution
    /// The identity before the change.
    public var previousIdentity: EventIdentity

    /// An identity event.
    ///
    /// - Parameters:
    ///   - change: what changed.
    ///   - id: unique per change.
    ///   - timestamp: when the change was applied.
    ///   - attribution: the identity after the change, with the session and context.
    ///   - previousIdentity: the identity before the change.
    public init(
        change: IdentityChange, id: UUID = EventIDGenerator.makeID(), timestamp: Date,
        attribution: EventAttribution, previousIdentity: EventIdentity
    ) {
        self.change = change
        self.id = id
        self.timestamp = timestamp
        self.attribution = attribution
        self.previousIdentity = previousIdentity
    }
}
