import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// The working directory of the engine: the items on screen, their running visits, and the
/// impressions that finished since the last commit. A plain value; ``ImpressionEngine`` keeps
/// it behind a lock.
///
/// Every input costs one or two hash look-ups; only lifecycle events, reloads and commits
/// walk the items on screen.
@usableFromInline
struct VisibilityLedger<ItemID: Hashable & Sendable> {
    @usableFromInline var items: [ItemID: TrackedItem] = [:]
    @usableFromInline var isInBackground = false
    @usableFromInline var book: ImpressionBook<ItemID>

    init(configuration: ImpressionConfiguration) {
        book = ImpressionBook(configuration: configuration)
    }

    // MARK: Item inputs

    @inlinable
    mutating func appeared(_ id: ItemID, fraction: Double, context: EventArgs?, at time: TimeInterval) {
        guard let fraction = book.sanitized(fraction) else { return }
        if let index = items.index(forKey: id) {
            book.counters.repeatedAppearances += 1
            if let context { items.values[index].context = context }
            let isInBackground = isInBackground
            book.update(id, &items.values[index], fraction: fraction, at: time, isInBackground: isInBackground)
        } else {
            var item = TrackedItem(appeared: time, context: context ?? [:])
            book.update(id, &item, fraction: fraction, at: time, isInBackground: isInBackground)
            items[id] = item
        }
    }

    @inlinable
    mutating func visibilityChanged(_ id: ItemID, fraction: Double, at time: TimeInterval) {
        guard let fraction = book.sanitized(fraction) else { return }
        if let index = items.index(forKey: id) {
            let isInBackground = isInBackground
            book.update(id, &items.values[index], fraction: fraction, at: time, isInBackground: isInBackground)
        } else if fraction > 0 {
            // A sampler may report items it never announced: their first sighting is the appearance.
            var item = TrackedItem(appeared: time, context: [:])
            book.update(id, &item, fraction: fraction, at: time, isInBackground: isInBackground)
            items[id] = item
        }
    }

    mutating func setContext(_ context: EventArgs, for id: ItemID) {
        guard let index = items.index(forKey: id) else { return }
        items.values[index].context = context
    }

    /// Ends the item's appearance; returns the discard when it made no impression.
    @inlinable
    mutating func disappeared(_ id: ItemID, at time: TimeInterval) -> ImpressionDiscard<ItemID>? {
        guard var item = items.removeValue(forKey: id) else {
            book.counters.unmatchedDisappearances += 1
            return nil
        }
        if item.isRunning { book.endVisit(id, &item, at: time) }
        if book.policy.contains(.afterDisappearance) { book.counted.remove(id) }
        return book.discardIfNeeded(id, item, at: time)
    }

    // MARK: App inputs

    mutating func enteredBackground(at time: TimeInterval) {
        guard !isInBackground else { return }
        isInBackground = true
        forEachItem { id, item, book in
            if item.isRunning { book.endVisit(id, &item, at: time) }
        }
    }

    mutating func becameActive(at time: TimeInterval) {
        guard isInBackground else { return }
        isInBackground = false
        if book.policy.contains(.afterReturnFromBackground) { book.counted.removeAll() }
        restartVisits(at: time)
    }

    mutating func contentReloaded(at time: TimeInterval) {
        book.counters.contentReloads += 1
        guard book.policy.contains(.afterContentReload) else { return }
        forEachItem { id, item, book in
            if item.isRunning { book.endVisit(id, &item, at: time) }
        }
        book.counted.removeAll()
        if !isInBackground { restartVisits(at: time) }
    }

    private mutating func restartVisits(at time: TimeInterval) {
        forEachItem { _, item, book in
            if item.fraction >= book.minimumFraction { item.startVisit(at: time) }
        }
    }

    /// Visits every item in place (walking indices, not `indices`, which would keep the old
    /// storage alive and force a copy on the first write).
    private mutating func forEachItem(_ body: (ItemID, inout TrackedItem, inout ImpressionBook<ItemID>) -> Void) {
        var index = items.startIndex
        while index != items.endIndex {
            body(items.keys[index], &items.values[index], &book)
            items.formIndex(after: &index)
        }
    }

    // MARK: Commit

    /// Evaluates the visits still running and takes every impression made since the last commit.
    mutating func commit(at time: TimeInterval) -> [Impression<ItemID>] {
        if !isInBackground {
            forEachItem { id, item, book in
                if item.isRunning && !item.visitCounted { book.evaluateRunningVisit(id, &item, at: time) }
            }
        }
        let taken = book.finished
        book.finished = []
        return taken
    }
}

/// One item between its appearance and its disappearance.
@usableFromInline
struct TrackedItem {
    @usableFromInline let appeared: TimeInterval
    @usableFromInline var context: EventArgs
    @usableFromInline var fraction: Double = 0
    /// A visit is a continuous stretch at or above the area threshold while the app is active.
    @usableFromInline var isRunning = false
    @usableFromInline var visitStart: TimeInterval = 0
    @usableFromInline var visitMaxFraction: Double = 0
    /// The running visit already qualified (committed while still visible, or suppressed).
    @usableFromInline var visitCounted = false
    /// Some visit of this appearance lasted the minimum time.
    @usableFromInline var qualifiedThisAppearance = false
    @usableFromInline var reachedArea = false
    @usableFromInline var longestVisit: TimeInterval = 0

    @usableFromInline
    init(appeared: TimeInterval, context: EventArgs) {
        self.appeared = appeared
        self.context = context
    }

    @inlinable
    mutating func startVisit(at time: TimeInterval) {
        isRunning = true
        visitStart = time
        visitMaxFraction = fraction
        visitCounted = false
        reachedArea = true
    }
}

/// The rules, the record of what counted, and the counters. Kept apart from the items so that
/// an item can be updated in place while the book is written.
@usableFromInline
struct ImpressionBook<ItemID: Hashable & Sendable> {
    /// Durations this close below the minimum still count: clock readings are floating point.
    @inlinable static var tolerance: TimeInterval { 1e-6 }

    @usableFromInline let minimumFraction: Double
    @usableFromInline let minimumDuration: TimeInterval
    @usableFromInline let policy: ReimpressionPolicy
    /// Items that made an impression and may not make another under the policy.
    @usableFromInline var counted: Set<ItemID> = []
    /// Impressions made since the last commit.
    @usableFromInline var finished: [Impression<ItemID>] = []
    @usableFromInline var counters = Counters()

    @usableFromInline
    struct Counters {
        @usableFromInline var discardedTooShort = 0
        @usableFromInline var discardedNeverViewable = 0
        @usableFromInline var repeatsSuppressed = 0
        @usableFromInline var invalidFractions = 0
        @usableFromInline var unmatchedDisappearances = 0
        @usableFromInline var repeatedAppearances = 0
        @usableFromInline var contentReloads = 0
    }

    init(configuration: ImpressionConfiguration) {
        minimumFraction = configuration.minimumVisibleFraction
        minimumDuration = configuration.minimumVisibleDuration
        policy = configuration.reimpressionPolicy
    }

    /// The fraction clamped to 0…1, or `nil` (counted) when it is not a number.
    @inlinable
    mutating func sanitized(_ fraction: Double) -> Double? {
        if fraction.isNaN {
            counters.invalidFractions += 1
            return nil
        }
        return min(max(fraction, 0), 1)
    }

    /// Applies a new visible fraction: starts, extends or ends the item's visit.
    @inlinable
    mutating func update(
        _ id: ItemID, _ item: inout TrackedItem, fraction: Double, at time: TimeInterval, isInBackground: Bool
    ) {
        item.fraction = fraction
        if fraction >= minimumFraction {
            if item.isRunning {
                if fraction > item.visitMaxFraction { item.visitMaxFraction = fraction }
            } else if !isInBackground {
                item.startVisit(at: time)
            }
        } else if item.isRunning {
            endVisit(id, &item, at: time)
        }
    }

    @inlinable
    mutating func endVisit(_ id: ItemID, _ item: inout TrackedItem, at time: TimeInterval) {
        item.isRunning = false
        let duration = max(0, time - item.visitStart)
        if duration > item.longestVisit { item.longestVisit = duration }
        if duration + Self.tolerance >= minimumDuration {
            qualify(id, &item, end: time, duration: duration)
        }
    }

    mutating func evaluateRunningVisit(_ id: ItemID, _ item: inout TrackedItem, at time: TimeInterval) {
        let duration = max(0, time - item.visitStart)
        if duration + Self.tolerance >= minimumDuration {
            if duration > item.longestVisit { item.longestVisit = duration }
            qualify(id, &item, end: nil, duration: duration)
        }
    }

    @inlinable
    mutating func qualify(_ id: ItemID, _ item: inout TrackedItem, end: TimeInterval?, duration: TimeInterval) {
        guard !item.visitCounted else { return }
        item.visitCounted = true
        item.qualifiedThisAppearance = true
        guard counted.insert(id).inserted else {
            counters.repeatsSuppressed += 1
            return
        }
        finished.append(
            Impression(
                itemID: id, start: item.visitStart, end: end, visibleDuration: duration,
                maxVisibleFraction: item.visitMaxFraction, context: item.context))
    }

    @inlinable
    mutating func discardIfNeeded(_ id: ItemID, _ item: TrackedItem, at time: TimeInterval) -> ImpressionDiscard<
        ItemID
    >? {
        guard !item.qualifiedThisAppearance else { return nil }
        let reason: ImpressionDiscard<ItemID>.Reason
        if item.reachedArea {
            counters.discardedTooShort += 1
            reason = .tooShort
        } else {
            counters.discardedNeverViewable += 1
            reason = .neverViewable
        }
        return ImpressionDiscard(
            itemID: id, reason: reason, longestVisibleDuration: item.longestVisit,
            appeared: item.appeared, disappeared: time)
    }
}
