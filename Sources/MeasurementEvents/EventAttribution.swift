import Foundation

/// Who posted an event, in which session, on which device and app: what the aggregator adds
/// to every event it forwards (``MeasurementEvent/attribution``), on its delivery queue.
public struct EventAttribution: Sendable, Hashable, Codable {
    /// The identity as of the moment the event was posted (in posting order with identity changes).
    public var identity: EventIdentity
    /// The session's id: its start time in milliseconds since 1970 (Amplitude's convention).
    public var sessionID: Int64?
    /// The device and app, as collected at start and refreshed on returning to the foreground.
    public var context: EventContext?
    /// The purposes of consent in force when the event was posted, by name, `true` when granted:
    /// each purpose the app gave a consent of its own, and each purpose the destination the
    /// event went to needs. `nil` when the app set no purpose's consent (then the vendors are
    /// told nothing about purposes). Set on each destination's copy by the aggregator; encoders
    /// put it on the wire as each vendor documents it (Segment's
    /// `context.consent.categoryPreferences`, GA4's `consent`).
    public var purposeConsents: [String: Bool]?

    /// An attribution.
    ///
    /// - Parameters:
    ///   - identity: who the event is about.
    ///   - sessionID: the session's id, in milliseconds since 1970.
    ///   - context: the device and app.
    public init(identity: EventIdentity, sessionID: Int64? = nil, context: EventContext? = nil) {
        self.identity = identity
        self.sessionID = sessionID
        self.context = context
    }
}

/// Shared storage for an attribution: every event of a session with the same identity points at
/// one instance, so stamping an event costs one retain instead of a copy of every field.
package final class AttributionStorage: Hashable, @unchecked Sendable {
    // @unchecked: immutable after init.
    package let value: EventAttribution
    /// The aggregator's foreground clock as of the event's posting (it changes only at a
    /// lifecycle move); `nil` on an attribution set by hand. Not part of the event's equality:
    /// it says when the app was in the foreground, not who or where.
    package let foreground: ForegroundClock?

    package init(_ value: EventAttribution, foreground: ForegroundClock?) {
        self.value = value
        self.foreground = foreground
    }

    package convenience init(_ value: EventAttribution) {
        self.init(value, foreground: nil)
    }

    package static func == (lhs: AttributionStorage, rhs: AttributionStorage) -> Bool {
        lhs === rhs || lhs.value == rhs.value
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}

extension MeasurementEvent {
    /// Who, which session, where: set by the aggregator on every event it forwards; `nil` on an
    /// event that has not been through an aggregator.
    public var attribution: EventAttribution? {
        get { attributionStorage?.value }
        set { attributionStorage = newValue.map(AttributionStorage.init) }
    }

    /// The identity the event carries (``EventAttribution/identity``).
    public var identity: EventIdentity? { attributionStorage?.value.identity }
    /// The user id the event carries: the one set when it was posted.
    public var userID: String? { attributionStorage?.value.identity.userID }
    /// The anonymous id the event carries.
    public var anonymousID: String? { attributionStorage?.value.identity.anonymousID }
    /// The session the event belongs to (its start time in ms since 1970).
    public var sessionID: Int64? { attributionStorage?.value.sessionID }
    /// The device and app context the event carries.
    public var context: EventContext? { attributionStorage?.value.context }
    /// The aggregator's foreground clock read at the event's timestamp: `nil` when no aggregator
    /// stamped the event (or its attribution was set by hand since).
    package var foregroundReading: ForegroundClock.Reading? {
        attributionStorage?.foreground?.reading(at: timestamp)
    }
}
