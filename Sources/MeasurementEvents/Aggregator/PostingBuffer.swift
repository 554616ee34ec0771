import Foundation

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
