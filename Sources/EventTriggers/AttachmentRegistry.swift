import Foundation

/// The events attached to each object, keyed by object identity, holding each object weakly.
///
/// No Objective-C associated objects: an entry is found by `ObjectIdentifier`, and trusted
/// only while its weak reference still points at the same object. An address reused by a new
/// object therefore never inherits the events of a released one. Entries of released objects
/// are pruned as the registry grows and on ``prune()``.
///
/// Not thread-safe on its own; ``TriggerDetector`` keeps it behind a lock.
struct AttachmentRegistry {
    private struct Entry {
        weak var object: AnyObject?
        var events: [TriggeredEvent]
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    /// Prune when the table reaches this size; doubles with the number of live entries.
    private var pruneThreshold = 64

    mutating func attach(_ events: [TriggeredEvent], to object: AnyObject) {
        let key = ObjectIdentifier(object)
        if entries[key]?.object === object {
            entries[key]!.events.append(contentsOf: events)
        } else {
            entries[key] = Entry(object: object, events: events)
            if entries.count >= pruneThreshold {
                prune()
                pruneThreshold = max(64, entries.count * 2)
            }
        }
    }

    /// The events of `object` that `trigger` fires, in attachment order; fire-once events are
    /// removed as they are returned.
    mutating func take(_ trigger: Trigger, for object: AnyObject) -> [TriggeredEvent] {
        let key = ObjectIdentifier(object)
        guard let entry = entries[key] else { return [] }
        guard entry.object === object else {
            entries[key] = nil  // left by a released object whose address was reused
            return []
        }
        let firing = entry.events.filter { $0.trigger == trigger }
        if firing.contains(where: \.firesOnce) {
            entries[key]!.events.removeAll { $0.trigger == trigger && $0.firesOnce }
        }
        return firing
    }

    func events(of object: AnyObject) -> [TriggeredEvent] {
        guard let entry = entries[ObjectIdentifier(object)], entry.object === object else { return [] }
        return entry.events
    }

    /// Removes the events whose id is in `ids`; returns how many were removed.
    mutating func detach(_ ids: Set<UUID>, from object: AnyObject) -> Int {
        let key = ObjectIdentifier(object)
        guard let entry = entries[key], entry.object === object else { return 0 }
        let remaining = entry.events.filter { !ids.contains($0.id) }
        entries[key]!.events = remaining
        return entry.events.count - remaining.count
    }

    /// Any entry at a live object's identifier is its own or a released object's: drop it.
    mutating func detachAll(from object: AnyObject) {
        entries[ObjectIdentifier(object)] = nil
    }

    /// Drops the entries (and so the actions) of released objects.
    mutating func prune() {
        entries = entries.filter { $0.value.object != nil }
    }

    /// Entries whose object is still alive.
    var liveObjectCount: Int { entries.values.reduce(0) { $0 + ($1.object == nil ? 0 : 1) } }

    /// Entries held, including those of released objects not yet pruned.
    var entryCount: Int { entries.count }
}
