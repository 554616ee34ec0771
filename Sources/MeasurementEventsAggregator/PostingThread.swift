import Foundation
import MeasurementEvents

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// What a posting thread keeps for each aggregator it posts to: its buffer and its cache of
/// filter decisions. Reached through one thread-specific slot, so a post touches no state that
/// another thread writes (except the buffer's lock while the drain swaps it).
final class PostingThread {
    // Not Sendable: used by its own thread only (and released by the thread-exit destructor).
    final class Slot {
        /// ``EventAggregator``'s serial number: never reused, unlike an object's address.
        let aggregatorSerial: Int64
        let buffer: PostingBuffer
        let decisions = NameDecisionCache()

        init(aggregatorSerial: Int64, buffer: PostingBuffer) {
            self.aggregatorSerial = aggregatorSerial
            self.buffer = buffer
        }
    }

    private var slots: [Slot] = []
    /// The slot of the aggregator this thread posted to last (also in `slots`).
    private var lastUsed: Slot?
    /// The thread-specific key that holds each thread's object. Its destructor runs when a
    /// thread exits: the thread's buffers will get no more items, and the drain drops them
    /// once it has emptied them.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { raw in
            // Invariant: the key holds one retain of a PostingThread (made in `makeCurrent`),
            // given up here, once, when the thread exits. (The parameter is optional on Linux.)
            let raw: UnsafeMutableRawPointer? = raw
            if let raw { Unmanaged<PostingThread>.fromOpaque(raw).release() }
        }
        return key
    }()

    deinit {
        for slot in slots { slot.buffer.markThreadExited() }
    }

    /// This thread's object, made on its first post; the thread keeps it alive until it exits.
    @inline(__always)
    static var current: PostingThread {
        // Invariant: the key's value is nil or a PostingThread the key retains (see `key`).
        if let raw = pthread_getspecific(key) { return Unmanaged<PostingThread>.fromOpaque(raw).takeUnretainedValue() }
        return makeCurrent()
    }

    @inline(never)
    private static func makeCurrent() -> PostingThread {
        let thread = PostingThread()
        pthread_setspecific(key, Unmanaged.passRetained(thread).toOpaque())
        return thread
    }

    // MARK: Slots

    /// The slot for the aggregator numbered `serial`; `register` is called with a new buffer
    /// the first time this thread posts to it.
    @inline(__always)
    func slot(for serial: Int64, register: (PostingBuffer) -> Void) -> Slot {
        if let slot = lastUsed, slot.aggregatorSerial == serial { return slot }
        return findSlot(for: serial, register: register)
    }

    private func findSlot(for serial: Int64, register: (PostingBuffer) -> Void) -> Slot {
        if let slot = slots.first(where: { $0.aggregatorSerial == serial }) {
            lastUsed = slot
            return slot
        }
        // Rare (a new aggregator): forget the slots of aggregators that are gone. They are
        // released at the end, once `slots` and `lastUsed` are consistent: releasing one may
        // run a deinitialiser that posts on this thread.
        let gone = slots.filter { $0.buffer.isAggregatorGone }
        if !gone.isEmpty {
            lastUsed = nil
            // By identity: an aggregator that goes meanwhile must not lose its slot's last
            // reference inside the removal.
            slots.removeAll { slot in gone.contains { $0 === slot } }
        }
        let slot = Slot(aggregatorSerial: serial, buffer: PostingBuffer())
        register(slot.buffer)
        slots.append(slot)
        lastUsed = slot
        withExtendedLifetime(gone) {}
        return slot
    }
}

/// What one posting thread has posted to one aggregator and the delivery queue has not taken
/// yet: events and controls, each numbered in the aggregator's single sequence.
///
/// Only the posting thread appends and only the drain takes, so the lock is uncontended
/// except while the drain swaps the contents out.
///
/// Records come back once the drain has made events of them (``giveBack(_:)``), so that
/// the posting thread releases their args (``releaseDelivered(upTo:)``): the args dictionary is
/// the one thing a post allocates that the delivery thread would otherwise free, and freeing
/// memory of another thread's malloc arena made the delivery thread wait for that arena's
/// lock (over half of its context switches with two posting threads). What the posting thread
/// has not released by the next round, the drain releases (``take(into:untaken:)``).
final class PostingBuffer: Sendable {
    struct Contents {
        /// Posted events, in sequence order.
        var records: [PostedEvent] = []
        /// Identity changes and lifecycle moves, in sequence order.
        var controls: [Inbox.Control] = []
        /// The buffer the contents came from, to give the records back to.
        var buffer: PostingBuffer?
        var isEmpty: Bool { records.isEmpty && controls.isEmpty }
        var lastSequence: Int64 { max(records.last?.sequence ?? .min, controls.last?.sequence ?? .min) }
    }

    fileprivate struct Guarded {
        var contents = Contents()
        /// The posting thread exited: nothing more will be appended.
        var threadExited = false
        /// The aggregator is gone: the thread may forget this buffer.
        var aggregatorGone = false
        /// Something was appended since the drain last took the contents, and that append
        /// requested a drain: later appends need not (see ``append(numberedBy:_:)``).
        var drainRequested = false
        /// Posts made into events, given back for the posting thread to release. Always here
        /// (not in the thread's own state) so that a drain round can release what is left.
        /// Once they are released the empty array stays, with its capacity, for reuse.
        var delivered: [PostedEvent] = []
    }

    /// What an append tells the posting thread to do next.
    struct Appended {
        /// Request a drain (see ``append(numberedBy:_:)``).
        var requestsDrain: Bool
        /// Release some delivered posts (see ``releaseDelivered(upTo:)``).
        var hasDelivered: Bool
    }

    private let guarded = LockedValue(Guarded())

    /// Appends a record numbered by `sequence`, stamped with `time` unless it carries a
    /// timestamp (a re-posted event). The number is taken inside the lock, so that a
    /// drain which has seen a number has seen, or will see in its next pass, every smaller one
    /// (see ``PostingBufferRegistry``).
    ///
    /// Returns what the caller must do next (``Appended``). It requests a drain only for the
    /// first append since the drain last took the contents: the ones after it will be taken by
    /// the same drain, which takes the contents after this lock is released. A shared atomic
    /// flag set on every post was a contended write per post between posting threads.
    @inline(__always)
    func append(
        numberedBy sequence: borrowing AtomicCounter, receivedAt time: Date, _ record: () -> PostedEvent
    ) -> Appended {
        guarded.withLock { guarded in
            // Made in place: the record is copied once, into the array.
            guarded.contents.records.append(record())
            let last = guarded.contents.records.count - 1
            guarded.contents.records[last].sequence = sequence.add(1)
            if guarded.contents.records[last].timestamp == nil { guarded.contents.records[last].timestamp = time }
            return guarded.appended()
        }
    }

    func append(_ control: Inbox.Control, numberedBy sequence: borrowing AtomicCounter) -> Appended {
        guarded.withLock { guarded in
            var control = control
            control.sequence = sequence.add(1)
            guarded.contents.controls.append(control)
            return guarded.appended()
        }
    }

    /// Swaps what was appended into `contents` (which must be empty); returns whether the
    /// buffer is finished: empty, and its thread gone.
    ///
    /// Delivered posts still here were given back by an earlier round (a round gives back only
    /// after both its passes) and not released by the posting thread (it has not posted since,
    /// or not enough): they are moved to `untaken`, for the drain to release. A thread that
    /// stops posting does not keep them.
    func take(into contents: inout Contents, untaken: inout [PostedEvent]) -> Bool {
        guarded.withLock { guarded in
            // Nothing appended (the round's second pass, usually): the buffer keeps its array.
            if !guarded.contents.isEmpty { swap(&contents, &guarded.contents) }
            guarded.drainRequested = false
            if guarded.delivered.isEmpty {
                if guarded.delivered.capacity > Self.largestKeptCapacity {
                    // A burst's capacity is let go (storage only: no value is released here).
                    guarded.delivered = []
                } else if guarded.delivered.capacity > guarded.contents.records.capacity {
                    // The emptied array of released posts, larger than the drain's spare: appends
                    // do not grow it again. The spare goes back at the next give-back.
                    swap(&guarded.delivered, &guarded.contents.records)
                }
            } else if untaken.isEmpty {
                swap(&untaken, &guarded.delivered)
            } else {
                // Copies: the values stay alive in `untaken`, released outside the lock.
                untaken += guarded.delivered
                guarded.delivered = []
            }
            // Room for as many posts as this round took, allocated once, rather than grown
            // step by step while the thread posts.
            let taken = contents.records.count
            if guarded.contents.records.capacity < taken, taken <= Self.largestKeptCapacity {
                guarded.contents.records.reserveCapacity(taken)
            }
            return guarded.threadExited && contents.isEmpty
        }
    }

    /// The largest array a buffer keeps for reuse: more than a busy round needs.
    static let largestKeptCapacity = 4_096

    /// Drain: takes back `posts`, made into events, for the posting thread to release, and
    /// returns in `posts` an emptied array to reuse. When the thread still holds posts to
    /// release (it is behind, or this is the round's second pass), or the aggregator is gone,
    /// nothing is taken: `posts` stays with the drain, which releases them itself.
    func giveBack(_ posts: inout [PostedEvent]) {
        guarded.withLock { guarded in
            guard guarded.delivered.isEmpty, !guarded.aggregatorGone else { return }
            swap(&guarded.delivered, &posts)
        }
    }

    /// Posting thread: releases up to `limit` delivered posts (a few per post, so that no post
    /// pays for a whole round), outside the lock; the rest, or the emptied array, go back.
    ///
    /// The posts are out of the buffer while they are released: a value's deinitialiser may
    /// post again, on this thread, and then finds nothing half released.
    func releaseDelivered(upTo limit: Int) {
        var posts: [PostedEvent] = []
        guarded.withLock { swap(&posts, &$0.delivered) }
        posts.removeLast(Swift.min(limit, posts.count))
        let putBack = guarded.withLock { guarded -> Bool in
            guard guarded.delivered.isEmpty, !guarded.aggregatorGone else { return false }
            swap(&posts, &guarded.delivered)
            return true
        }
        // The drain gave other posts back meanwhile, or the aggregator is gone (rare): these are
        // released here, at once.
        if !putBack { posts.removeAll() }
    }

    /// Marks the aggregator gone, and returns the posts the buffer still holds, for the caller
    /// to release outside the lock.
    func markAggregatorGone() -> [PostedEvent] {
        guarded.withLock { guarded in
            guarded.aggregatorGone = true
            defer { guarded.delivered = [] }
            return guarded.delivered
        }
    }

    /// The capacity of the post arrays the buffer holds, for tests.
    var heldCapacity: Int {
        guarded.withLock { $0.contents.records.capacity + $0.delivered.capacity }
    }

    func markThreadExited() { guarded.withLock { $0.threadExited = true } }
    var isAggregatorGone: Bool { guarded.withLock { $0.aggregatorGone } }
}

extension PostingBuffer.Guarded {
    /// After an append: a drain is requested by the first append since the contents were taken
    /// (and marked requested), and delivered posts wait to be released.
    @inline(__always)
    fileprivate mutating func appended() -> PostingBuffer.Appended {
        defer { drainRequested = true }
        return PostingBuffer.Appended(requestsDrain: !drainRequested, hasDelivered: !delivered.isEmpty)
    }
}

/// What the filter and the name rules said about a name, remembered per posting thread.
///
/// A module posts a few hundred constant names, so the same names come back again and again.
/// A direct-mapped table indexed by a few of the name's UTF-8 bytes (its length, its middle and
/// last bytes: constant time for a native string) answers without hashing every character;
/// `==` on the entry confirms it, so a collision is only a miss, never a wrong answer.
/// Entries are valid for one filter generation; any filter change makes them all misses.
final class NameDecisionCache {
    // Not Sendable: each instance belongs to one posting thread.
    /// Two flags, no reference: reading one from the cache retains nothing.
    struct Decision {
        var allowed: Bool
        /// Whether the bus accepts the name (``EventName/validationFailure`` is nil); the
        /// reason is worked out again for the rare name it rejects.
        var isValid: Bool
    }

    private struct Entry {
        var name: String
        var generation: Int64
        var decision: Decision
    }

    private static let indexBits = 6
    // Generation -1 never matches: generations start at 0.
    private var entries = [Entry](
        repeating: Entry(name: "", generation: -1, decision: Decision(allowed: false, isValid: false)),
        count: 1 << indexBits)

    /// The decision remembered for `name` under the filter generation `generation`.
    @inline(__always)
    func decision(for name: String, generation: Int64) -> Decision? {
        let index = Self.index(of: name)
        guard entries[index].generation == generation, entries[index].name == name else { return nil }
        return entries[index].decision
    }

    func remember(_ decision: Decision, for name: String, generation: Int64) {
        entries[Self.index(of: name)] = Entry(name: name, generation: generation, decision: decision)
    }

    @inline(__always)
    private static func index(of name: String) -> Int {
        let utf8 = name.utf8
        let count = utf8.count
        guard count > 0 else { return 0 }
        let middle = utf8[utf8.index(utf8.startIndex, offsetBy: count / 2)]
        let last = utf8[utf8.index(before: utf8.endIndex)]
        let mixed = (UInt(truncatingIfNeeded: count) &* 31 &+ UInt(middle)) &* 31 &+ UInt(last)
        return Int(truncatingIfNeeded: mixed & UInt((1 << indexBits) - 1))
    }
}
