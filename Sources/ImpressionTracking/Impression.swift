import Foundation
import MeasurementEvents

/// One honest impression: an item that stayed visible enough, long enough.
///
/// Times are instants of the engine's ``ImpressionClock``; ``ImpressionClock/date(at:)`` turns
/// them into dates.
public struct Impression<ItemID: Hashable & Sendable>: Sendable {
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
    public enum Reason: Hashable, Sendable {
        /// The item reached the area threshold, but never for the minimum time: it passed by
        /// too fast.
        case tooShort
        /// The item never reached the area threshold while the app was active.
        case neverViewable
    }

    public var itemID: ItemID
    public var reason: Reason
    /// The longest continuous time the item spent at or above the area threshold.
    public var longestVisibleDuration: TimeInterval
    /// When the item appeared and disappeared.
    public var appeared: TimeInterval
    public var disappeared: TimeInterval

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
