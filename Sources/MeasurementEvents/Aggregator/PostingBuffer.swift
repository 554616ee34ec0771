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

    private struct Guarded {
        var contents = Contents()
        /// The posting thread exited: nothing more will be appended.
        var threadExited = false
        /// The aggregator is gone: the thread may forget this buffer.
        var aggregatorGone = false
    }

    private let guarded = LockedValue(Guarded())

    /// Appends a fast-path post numbered by `sequence`. The number is taken inside the lock, so
    /// that a drain which has seen a number has seen, or will see in its next pass, every
    /// smaller one (see ``PostingBufferRegistry``).
    @inline(__always)
    func append(numberedBy sequence: borrowing AtomicCounter, _ makePosted: () -> EventAggregator.PostedEvent) {
        guarded.withLock { guarded in
            guarded.contents.posted.append(makePosted())
            guarded.contents.posted[guarded.contents.posted.count - 1].sequence = sequence.add(1)
        }
    }

    func append(_ pending: EventAggregator.Pending, numberedBy sequence: borrowing AtomicCounter) {
        guarded.withLock { guarded in
            var pending = pending
            pending.sequence = sequence.add(1)
            guarded.contents.events.append(pending)
        }
    }

    func append(_ control: EventAggregator.Control, numberedBy sequence: borrowing AtomicCounter) {
        guarded.withLock { guarded in
            var control = control
            control.sequence = sequence.add(1)
            guarded.contents.controls.append(control)
        }
    }

    /// Swaps what was appended into `contents` (which must be empty); returns whether the
    /// buffer is finished: empty, and its thread gone.
    func take(into contents: inout Contents) -> Bool {
        guarded.withLock { guarded in
            swap(&contents, &guarded.contents)
            return guarded.threadExited && contents.isEmpty
        }
    }

    func markThreadExited() { guarded.withLock { $0.threadExited = true } }
    func markAggregatorGone() { guarded.withLock { $0.aggregatorGone = true } }
    var isAggregatorGone: Bool { guarded.withLock { $0.aggregatorGone } }
}
