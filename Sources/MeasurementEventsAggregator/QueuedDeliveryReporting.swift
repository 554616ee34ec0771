import Foundation
import MeasurementEvents

/// A tracker that keeps events after ``EventTracker/track(_:)`` returns (an upload queue on
/// disk) and can wait for them to leave and say what is left: what
/// ``EventAggregator/shutdown(deadline:)`` asks of each tracker that adopts it. A tracker that
/// does not adopt it is flushed, and what it was handed counts as delivered.
///
/// ```swift
/// extension UploadingTracker: QueuedDeliveryReporting {
///     func deliverQueued(before deadline: Date) -> QueuedDelivery {
///         let left = uploadAndWait(until: deadline)
///         return QueuedDelivery(delivered: sent, stillQueued: left, whereQueued: directory.path)
///     }
/// }
/// ```
public protocol QueuedDeliveryReporting: EventTracker {
    /// Pushes out everything queued and blocks until it is delivered or `deadline` passes
    /// (a deadline already past: one push, no wait); then says what was delivered and what
    /// is still queued. Called once per shutdown, on a thread of its own, after
    /// ``EventTracker/flush()``.
    ///
    /// - Parameter deadline: when to stop waiting.
    /// - Returns: what the tracker delivered, what it still holds, and what it dropped.
    func deliverQueued(before deadline: Date) -> QueuedDelivery

    /// The shutdown began: the events in flight are about to be handed to
    /// ``EventTracker/track(_:)``, and must be taken by `deadline`. A tracker whose `track`
    /// can wait (for room in its queue) stops waiting, now and later, so that the drain ends in
    /// time. Called once per shutdown, before the drain, from the task that called
    /// ``EventAggregator/shutdown(deadline:)``; it must return at once. The default does nothing.
    ///
    /// - Parameter deadline: when the shutdown must end.
    func shutdownDidBegin(deadline: Date)
}

extension QueuedDeliveryReporting {
    /// Does nothing: a tracker whose `track` never waits needs no notice.
    ///
    /// - Parameter deadline: when the shutdown must end.
    public func shutdownDidBegin(deadline: Date) {}
}

/// What a ``QueuedDeliveryReporting`` tracker delivered, still holds and dropped, as counted
/// since it was made.
public struct QueuedDelivery: Sendable, Equatable {
    /// Events the tracker delivered (the server accepted them).
    public var delivered: Int
    /// Events still queued, kept where ``whereQueued`` says for a later run to send.
    public var stillQueued: Int
    /// Events the tracker dropped, by reason; only reasons with a count.
    public var dropped: [DroppedEvents]
    /// Where the queued events are kept (a directory), when they survive the process.
    public var whereQueued: String?

    /// What a tracker says at shutdown.
    ///
    /// - Parameters:
    ///   - delivered: events delivered.
    ///   - stillQueued: events still queued.
    ///   - dropped: events dropped, by reason.
    ///   - whereQueued: where the queued events are kept.
    public init(delivered: Int, stillQueued: Int, dropped: [DroppedEvents] = [], whereQueued: String? = nil) {
        self.delivered = delivered
        self.stillQueued = stillQueued
        self.dropped = dropped
        self.whereQueued = whereQueued
    }
}

/// Events dropped for one reason, in a ``QueuedDelivery`` or an ``EventAggregator/ShutdownReport``.
public struct DroppedEvents: Sendable, Equatable, CustomStringConvertible {
    /// Why, in words: `"refused by the server"`.
    public var reason: String
    /// How many.
    public var count: Int
    /// The destination that dropped them; `nil` for the aggregator itself.
    public var destination: String?

    /// Events dropped for `reason`.
    ///
    /// - Parameters:
    ///   - reason: why, in words.
    ///   - count: how many.
    ///   - destination: the destination that dropped them; `nil` for the aggregator.
    public init(reason: String, count: Int, destination: String? = nil) {
        self.reason = reason
        self.count = count
        self.destination = destination
    }

    /// "12 dropped by segment: refused by the server".
    public var description: String {
        "\(count) dropped\(destination.map { " by \($0)" } ?? ""): \(reason)"
    }
}
