import MeasurementEvents
import MeasurementEventsAggregator

/// The committed impressions waiting to be pushed. Thread-safe; bounded by
/// ``ImpressionConfiguration/storeLimit`` (the oldest go first, counted).
final class ImpressionStore<ItemID: Hashable & Sendable>: Sendable {
    private let limit: Int
    private let impressions = LockedValue<[Impression<ItemID>]>([])

    init(limit: Int) {
        self.limit = limit
    }

    var count: Int { impressions.withLock { $0.count } }

    /// Appends newly committed impressions; returns how many old ones were dropped to make room.
    func append(_ new: [Impression<ItemID>]) -> Int {
        guard !new.isEmpty else { return 0 }
        return impressions.withLock { stored in
            stored.append(contentsOf: new)
            return trim(&stored)
        }
    }

    /// Puts back impressions a push could not send, ahead of newer ones; returns how many
    /// were dropped to make room.
    func putBack(_ unsent: [Impression<ItemID>]) -> Int {
        guard !unsent.isEmpty else { return 0 }
        return impressions.withLock { stored in
            stored.insert(contentsOf: unsent, at: 0)
            return trim(&stored)
        }
    }

    func takeAll() -> [Impression<ItemID>] {
        impressions.withLock { stored in
            let taken = stored
            stored = []
            return taken
        }
    }

    private func trim(_ stored: inout [Impression<ItemID>]) -> Int {
        let excess = stored.count - limit
        guard excess > 0 else { return 0 }
        stored.removeFirst(excess)
        return excess
    }
}
