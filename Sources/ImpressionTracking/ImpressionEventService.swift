import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Encodes each impression as an `impression/item_viewed` measurement event of type
/// `impression` (see `Events/ImpressionTracking.json`).
///
/// The event's args are the host's context plus the engine's own keys (``ImpressionEventKey``); when the
/// context uses one of the engine's keys, **the engine's value wins** and the host's is left out.
///
/// ```
/// [im] impression/item_viewed (impression) duration_ms=1500 ended_at=1700000003.5
///      item_id=42 max_visible_fraction=1.0 position=3 started_at=1700000002.0 still_visible=false
/// ```
public struct ImpressionEventEncoder<ItemID: Hashable & Sendable>: ImpressionEncoder {
    private let describeID: @Sendable (ItemID) -> String

    /// Makes an encoder.
    ///
    /// - Parameter describeID: how an item id becomes the `item_id` text; by default
    ///   `String(describing:)`.
    public init(describeID: @escaping @Sendable (ItemID) -> String = { String(describing: $0) }) {
        self.describeID = describeID
    }

    /// Whole milliseconds as `.int`; as `.double` when they do not fit in `Int` (a visit of more
    /// than 24.8 days where `Int` is 32 bits, as on Apple Watch): JSON does not tell them apart.
    static func milliseconds(_ seconds: TimeInterval, limit: IntRange = .native) -> EventValue {
        let milliseconds = (seconds * 1000).rounded()
        return checkedInt(milliseconds, limit: limit).map(EventValue.int) ?? .double(milliseconds)
    }

    public func encode(_ batch: [Impression<ItemID>], clock: any ImpressionClock) -> [MeasurementEvent] {
        batch.map { impression in
            var args = impression.context
            args[ImpressionEventKey.itemID] = .string(describeID(impression.itemID))
            args[ImpressionEventKey.durationMilliseconds] = Self.milliseconds(impression.visibleDuration)
            args[ImpressionEventKey.maxVisibleFraction] = .double(impression.maxVisibleFraction)
            args[ImpressionEventKey.stillVisible] = .bool(impression.isStillVisible)
            args[ImpressionEventKey.startedAt] = .double(clock.date(at: impression.start).timeIntervalSince1970)
            if let end = impression.end {
                args[ImpressionEventKey.endedAt] = .double(clock.date(at: end).timeIntervalSince1970)
            } else {
                // The host's context must not pose as the engine's end time.
                args[ImpressionEventKey.endedAt] = nil
            }
            return MeasurementEvent(
                ImpressionTrackingEvents.impressionItemViewed, type: .impression, category: "impression", args: args)
        }
    }
}

/// Posts each event of a batch on a notification center, where the app's
/// `EventAggregator` routes it like any other event.
public struct ImpressionEventService: ImpressionTrackingService {
    /// Where the events are posted.
    public let center: NotificationCenter

    /// Makes a service that posts on `center`.
    ///
    /// - Parameter center: where to post; `.default` unless a test isolates it.
    public init(center: NotificationCenter = .default) {
        self.center = center
    }

    public func send(_ payload: [MeasurementEvent]) {
        for event in payload {
            MeasurementEvent.post(event.name, type: event.type, category: event.category, args: event.args, to: center)
        }
    }
}

/// The argument keys of `impression/item_viewed` that the engine writes; they win over
/// host context keys of the same name.
public enum ImpressionEventKey {
    /// The item id, as text (`String`).
    public static let itemID = "item_id"
    /// The visible duration, in whole milliseconds (`Int`).
    public static let durationMilliseconds = "duration_ms"
    /// The highest visible fraction, 0…1 (`Double`).
    public static let maxVisibleFraction = "max_visible_fraction"
    /// Whether the item was still on screen when the impression was committed (`Bool`).
    public static let stillVisible = "still_visible"
    /// When the visit began, in seconds since 1970 (`Double`).
    public static let startedAt = "started_at"
    /// When the visit ended, in seconds since 1970 (`Double`); absent while still visible.
    public static let endedAt = "ended_at"
}
