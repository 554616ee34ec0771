import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// A record of the queue, as encoders receive it: a tracked event, or an identify or group
/// call, each with the identity, session and context it was made under.
///
/// ```swift
/// let queued = QueuedEvent(event: event)          // track
/// let call = QueuedEvent(identityEvent)           // identify or group; nil for reset
/// queued.identity.userID                          // as of the moment it was posted
/// ```
public struct QueuedEvent: Sendable, Equatable {
    /// What the vendor is told.
    public enum Kind: UInt8, Sendable, CaseIterable {
        /// An event: Segment `track`, an Amplitude event, a GA4 event, an OpenTelemetry event.
        case track = 0
        /// Who the user is and their traits (`EventIdentity.traits`).
        case identify = 1
        /// The group the user acts for and its traits (`EventIdentity.groupTraits`).
        case group = 2
    }

    /// What the vendor is told: an event, an identify or a group call.
    public var kind: Kind
    /// The event and its `MeasurementEvent.attribution`. For identify and group: named
    /// `identify` or `group`, with the change's id and time and no args.
    public var event: MeasurementEvent
    /// Milliseconds the app spent in the foreground between the event this tracker queued before
    /// it and this one (from the aggregator's start, or the user's change, for the first), as the
    /// aggregator's lifecycle moves say; decided when the event is tracked, in posting order, and
    /// kept with it in the queue. `nil` for an event no aggregator stamped, and for identify and
    /// group calls. GA4 sends it as `engagement_time_msec`.
    package var foregroundMillisecondsSincePrevious: Int64?
    /// A record written by version 1 of the queue (before events carried their identity):
    /// its anonymous id is the directory's legacy `anonymous-id` file, filled in on reading.
    var isLegacy = false

    /// A queued event or call.
    ///
    /// - Parameters:
    ///   - event: the event, with its attribution.
    ///   - kind: what the vendor is told.
    public init(event: MeasurementEvent, kind: Kind = .track) {
        self.kind = kind
        self.event = event
    }

    /// The identify or group call a tracker queues for `change`; `nil` for a reset, which
    /// vendors have no call for (the next events simply carry the new anonymous id).
    ///
    /// - Parameter change: an identity change as the aggregator hands it to trackers.
    public init?(_ change: IdentityEvent) {
        let kind: Kind
        switch change.change {
        case .identify: kind = .identify
        case .group: kind = .group
        case .reset: return nil
        }
        var event = MeasurementEvent(
            kind == .identify ? "identify" : "group", id: change.id, timestamp: change.timestamp)
        event.attribution = change.attribution
        self.init(event: event, kind: kind)
    }

    /// Who: the identity the event was posted under. An event that never went through an
    /// aggregator has none; the tracker gives it one when it is tracked.
    public var identity: EventIdentity { event.identity ?? EventIdentity(anonymousID: "") }
    /// The session the event belongs to.
    public var sessionID: Int64? { event.sessionID }
    /// The device and app.
    public var context: EventContext? { event.context }

    /// Whether two events' attributions (`MeasurementEvent.attributionStorage`) carry the same
    /// context, without copying either context or event: an encoder grouping a request's events
    /// by context compares each with the one before, reading only their attributions (comparing
    /// `context`s copied every string of both, and a call on the events copied both events:
    /// 3.6 %, then 4 % of a server's samples; issue 49).
    package static func sameContext(_ lhs: AttributionStorage?, _ rhs: AttributionStorage?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case (let lhs?, let rhs?): return lhs === rhs || lhs.value.context == rhs.value.context
        case (let lhs?, nil): return lhs.value.context == nil
        case (nil, let rhs?): return rhs.value.context == nil
        }
    }

    /// A version 1 record with the anonymous id it was sent with at the time.
    func fillingLegacyIdentity(anonymousID: String) -> QueuedEvent {
        guard isLegacy else { return self }
        var filled = self
        var attribution = event.attribution ?? EventAttribution(identity: EventIdentity(anonymousID: anonymousID))
        attribution.identity.anonymousID = anonymousID
        filled.event.attribution = attribution
        filled.isLegacy = false
        return filled
    }
}
