import Foundation

/// The inspector's memory: the newest ``capacity`` events (older ones are evicted, counted),
/// counts per name and status over everything received, and counts of refused requests.
/// Thread-safe; every query copies what it returns.
package final class InspectorStore: @unchecked Sendable {
    // @unchecked: all mutable state is behind `lock`.

    /// Counts over everything received since the last reset (`GET /api/counts`).
    package struct Counts: Codable, Sendable, Equatable {
        /// Events received.
        package var received = 0
        /// Events held now.
        package var retained = 0
        /// Events evicted to keep the newest `capacity`.
        package var evicted = 0
        /// Events per name (at most `maximumNames`; the rest under `(other names)`).
        package var byName: [String: Int] = [:]
        /// Events per status.
        package var byStatus: [String: Int] = [:]
        /// Requests refused, per reason (`malformed JSON`, `wrong Host`, …).
        package var refusedRequests: [String: Int] = [:]
        /// The newest `seq`: the cursor for `since`.
        package var cursor = 0
    }

    /// The most distinct names counted one by one.
    package static let maximumNames = 10_000
    /// How many events are kept.
    package let capacity: Int
    private let lock = NSLock()
    private var ring: [InspectedEvent?]
    private var next = 0  // the slot the next event goes to
    private var counts = Counts()

    /// A store keeping the newest `capacity` events (at least 1).
    ///
    /// - Parameter capacity: how many events are kept.
    package init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
        ring = Array(repeating: nil, count: self.capacity)
    }

    /// Adds events, giving each its `seq` and `receivedAt`.
    package func add(_ events: [InspectedEvent], at date: Date = Date()) {
        lock.lock()
        defer { lock.unlock() }
        for var event in events {
            counts.cursor += 1
            counts.received += 1
            event.seq = counts.cursor
            event.receivedAt = date.timeIntervalSince1970
            if ring[next] != nil { counts.evicted += 1 } else { counts.retained += 1 }
            ring[next] = event
            next = (next + 1) % capacity
            let nameKey =
                counts.byName[event.name] != nil || counts.byName.count < Self.maximumNames
                ? event.name : "(other names)"
            counts.byName[nameKey, default: 0] += 1
            counts.byStatus[event.status, default: 0] += 1
        }
    }

    /// Counts a refused request.
    package func refuse(_ reason: String) {
        lock.lock()
        counts.refusedRequests[reason, default: 0] += 1
        lock.unlock()
    }

    /// The counts now.
    package var currentCounts: Counts {
        lock.lock()
        defer { lock.unlock() }
        return counts
    }

    /// Events newer than `since`, oldest first, matching `name` and `status` when given; at most
    /// `limit`, the newest ones when more match.
    package func events(since: Int = 0, name: String? = nil, status: String? = nil, limit: Int = .max)
        -> [InspectedEvent]
    {
        lock.lock()
        defer { lock.unlock() }
        var result: [InspectedEvent] = []
        var index = (next + capacity - 1) % capacity
        for _ in 0..<capacity {
            guard let event = ring[index], event.seq > since else { break }
            if (name == nil || event.name == name) && (status == nil || event.status == status) {
                result.append(event)
                if result.count >= limit { break }
            }
            index = (index + capacity - 1) % capacity
        }
        return result.reversed()
    }

    /// Forgets every event and count (the cursor keeps growing, so a page polling `since` sees
    /// only what comes after).
    package func reset() {
        lock.lock()
        defer { lock.unlock() }
        ring = Array(repeating: nil, count: capacity)
        next = 0
        counts = Counts(cursor: counts.cursor)
    }
}
