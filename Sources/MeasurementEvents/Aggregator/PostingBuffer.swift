/// What one posting thread has posted to one aggregator and the delivery queue has not taken
/// yet: events and controls, each numbered in the aggregator's single sequence.
///
/// Only the posting thread appends and only the drain takes, so the lock is uncontended
/// except while the drain swaps the contents out.
final class PostingBuffer: Sendable {
    struct Contents {
        /// Fast-path posts.
        var posted: [EventAggregator.PostedEvent] = []
        /// Events decoded from a notification.
        var events: [EventAggregator.Pending] = []
        var controls: [EventAggregator.Control] = []
        var isEmpty: Bool { posted.isEmpty && events.isEmpty && controls.isEmpty }
        var lastSequence: Int64 {
            max(posted.last?.sequence ?? .min, events.last?.sequence ?? .min, controls.last?.sequence ?? .min)
        }
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
    }

    private let guarded = LockedValue(Guarded())

    /// Appends a fast-path post numbered by `sequence`. The number is taken inside the lock, so
    /// that a drain which has seen a number has seen, or will see in its next pass, every
    /// smaller one (see ``PostingBufferRegistry``).
    ///
    /// Returns whether the caller must request a drain: only the first append since the drain
    /// last took the contents does. The ones after it will be taken by the same drain, which
    /// takes the contents after this lock is released. A shared atomic flag set on every post
    /// was a contended write per post between posting threads.
    @inline(__always)
    func append(numberedBy sequence: borrowing AtomicCounter, _ makePosted: () -> EventAggregator.PostedEvent)
        -> Bool
    {
        guarded.withLock { guarded in
            guarded.contents.posted.append(makePosted())
            guarded.contents.posted[guarded.contents.posted.count - 1].sequence = sequence.add(1)
            return guarded.requestsDrain()
        }
    }

    func append(_ pending: EventAggregator.Pending, numberedBy sequence: borrowing AtomicCounter) -> Bool {
        guarded.withLock { guarded in
            var pending = pending
            pending.sequence = sequence.add(1)
            guarded.contents.events.append(pending)
            return guarded.requestsDrain()
        }
    }

    func append(_ control: EventAggregator.Control, numberedBy sequence: borrowing AtomicCounter) -> Bool {
        guarded.withLock { guarded in
            var control = control
            control.sequence = sequence.add(1)
            guarded.contents.controls.append(control)
            return guarded.requestsDrain()
        }
    }

    /// Swaps what was appended into `contents` (which must be empty); returns whether the
    /// buffer is finished: empty, and its thread gone.
    func take(into contents: inout Contents) -> Bool {
        guarded.withLock { guarded in
            swap(&contents, &guarded.contents)
            guarded.drainRequested = false
            return guarded.threadExited && contents.isEmpty
        }
    }

    func markThreadExited() { guarded.withLock { $0.threadExited = true } }
    func markAggregatorGone() { guarded.withLock { $0.aggregatorGone = true } }
    var isAggregatorGone: Bool { guarded.withLock { $0.aggregatorGone } }
}

extension PostingBuffer.Guarded {
    /// Whether this append is the first since the contents were taken; marks it requested.
    @inline(__always)
    fileprivate mutating func requestsDrain() -> Bool {
        if drainRequested { return false }
        drainRequested = true
        return true
    }
}
