import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// One honest impression: an item that stayed visible enough, long enough.
///
/// Times are instants of the engine's ``ImpressionClock``; ``ImpressionClock/date(at:)`` turns
/// them into dates.
public struct Impression<ItemID: Hashable & Sendable>: Sendable {
    /// The item, as the host identifies it.
    public var itemID: ItemID
    /// When the qualifying visit began.
    public var start: TimeInterval
    /// When the visit ended, or `nil` when the item was still visible at the commit that
    /// recorded it (``visibleDuration`` then runs up to that commit).
    public var end: TimeInterval?
    /// How long the item stayed at or above the area threshold, without interruption.
    public var visibleDuration: TimeInterval
    /// The highest visible fraction (0…1) seen during the visit.
    public var maxVisibleFraction: Double
    /// The extra key/value information the host attached to the item.
    public var context: EventArgs

    /// Makes an impression, as the engine does; for tests of encoders and services.
    ///
    /// - Parameters:
    ///   - itemID: the item.
    ///   - start: when the qualifying visit began, on the engine's clock.
    ///   - end: when it ended, or `nil` when the item was still visible.
    ///   - visibleDuration: how long the item stayed at or above the area threshold.
    ///   - maxVisibleFraction: the highest visible fraction seen, 0…1.
    ///   - context: the host's key/value information.
    public init(
        itemID: ItemID, start: TimeInterval, end: TimeInterval?, visibleDuration: TimeInterval,
        maxVisibleFraction: Double, context: EventArgs = [:]
    ) {
        self.itemID = itemID
        self.start = start
        self.end = end
        self.visibleDuration = visibleDuration
        self.maxVisibleFraction = maxVisibleFraction
        self.context = context
    }

    /// True when the item was still on screen when the impression was committed.
    public var isStillVisible: Bool { end == nil }
}

extension Impression: Equatable where ItemID: Equatable {}
extension Impression: Hashable where ItemID: Hashable {}

/// An appearance that ended without making an impression.
public struct ImpressionDiscard<ItemID: Hashable & Sendable>: Sendable, Hashable {
    /// Why the appearance made no impression.
    public enum Reason: Hashable, Sendable {
        /// The item reached the area threshold, but never for the minimum time: it passed by
        /// too fast.
        case tooShort
        /// The item never reached the area threshold while the app was active.
        case neverViewable
    }

    /// The item.
    public var itemID: ItemID
    /// Why it made no impression.
    public var reason: Reason
    /// The longest continuous time the item spent at or above the area threshold.
    public var longestVisibleDuration: TimeInterval
    /// When the item appeared, on the engine's clock.
    public var appeared: TimeInterval
    /// When the item disappeared, on the engine's clock.
    public var disappeared: TimeInterval

    /// Makes a discard, as the engine does; for tests of discard handlers.
    ///
    /// - Parameters:
    ///   - itemID: the item.
    ///   - reason: why it made no impression.
    ///   - longestVisibleDuration: its longest continuous time at or above the area threshold.
    ///   - appeared: when it appeared.
    ///   - disappeared: when it disappeared.
    public init(
        itemID: ItemID, reason: Reason, longestVisibleDuration: TimeInterval, appeared: TimeInterval,
        disappeared: TimeInterval
    ) {
        self.itemID = itemID
        self.reason = reason
        self.longestVisibleDuration = longestVisibleDuration
        self.appeared = appeared
        self.disappeared = disappeared
    }
}

/// A failure while pushing impressions, reported to
/// ``ImpressionConfiguration/problemHandler``.
public enum ImpressionProblem: Sendable, CustomStringConvertible {
    /// The encoder threw; the batch's impressions were dropped (and counted).
    case encodingFailed(impressions: Int, error: String)
    /// The service threw; the impressions went back to the store for the next push.
    case sendFailed(impressions: Int, error: String)
    /// The store was full; the oldest impressions were dropped (and counted).
    case storeOverflow(dropped: Int)

    /// What went wrong, how many impressions it concerns, and what became of them.
    public var description: String {
        switch self {
        case .encodingFailed(let count, let error):
            return "encoding \(count) impressions failed, they were dropped: \(error)"
        case .sendFailed(let count, let error):
            return "sending \(count) impressions failed, they will be retried at the next push: \(error)"
        case .storeOverflow(let dropped):
            return "the impression store was full; the \(dropped) oldest impressions were dropped"
        }
    }
}
