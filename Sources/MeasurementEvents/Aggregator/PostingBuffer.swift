/// What one posting thread has posted to one aggregator and the delivery queue has not taken
/// yet: events and controls, each numbered in the aggregator's single sequence.
///
/// Only the posting thread appends and only the drain takes, so the lock is uncontended
/// except while the drain swaps the contents out.
///
/// Posts come back once the drain has made events of them (``giveBack(_:)``), so that the
/// posting thread releases their args (``takeDelivered()``): the args dictionary is the one
/// thing a post allocates that the delivery thread would otherwise free, and freeing memory
/// of another thread's malloc arena made the delivery thread wait for that arena's lock
/// (over half of its context switches with two posting threads).
final class PostingBuffer: Sendable {
    struct Contents {
        /// Fast-path posts.
        var posted: [EventAggregator.PostedEvent] = []
        /// Events decoded from a notification.
        var events: [EventAggregator.Pending] = []
        var controls: [EventAggregator.Control] = []
        /// The buffer the contents came from, to give the posts back to.
        var buffer: PostingBuffer?
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
        /// Posts made into events, given back for the posting thread to release.
        var delivered: [EventAggregator.PostedEvent] = []
        /// The drain round that gave back `delivered`.
        var deliveredRound: Int64 = -1
        /// An emptied array of the posting thread's, for the drain to reuse.
        var emptied: [EventAggregator.PostedEvent] = []
    }

    /// What an append tells the posting thread to do next.
    struct Appended {
        /// Request a drain (see ``append(numberedBy:_:)``).
        var requestsDrain: Bool
        /// Take the delivered posts and release them (see ``takeDelivered()``).
        var hasDelivered: Bool
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
        -> Appended
    {
        guarded.withLock { guarded in
            guarded.contents.posted.append(makePosted())
            guarded.contents.posted[guarded.contents.posted.count - 1].sequence = sequence.add(1)
            return Appended(requestsDrain: guarded.requestsDrain(), hasDelivered: !guarded.delivered.isEmpty)
        }
    }

    func append(_ pending: EventAggregator.Pending, numberedBy sequence: borrowing AtomicCounter) -> Appended {
        guarded.withLock { guarded in
            var pending = pending
            pending.sequence = sequence.add(1)
            guarded.contents.events.append(pending)
            return Appended(requestsDrain: guarded.requestsDrain(), hasDelivered: !guarded.delivered.isEmpty)
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

    /// Swaps what was appended into `contents` (which must be empty) in round `round`; returns
    /// whether the buffer is finished: empty, and its thread gone.
    ///
    /// Delivered posts the posting thread has not taken for a whole round (it has not posted
    /// since) are moved to `untaken`, for the drain to release: a thread that stops posting
    /// does not keep them.
    func take(into contents: inout Contents, round: Int64, untaken: inout [EventAggregator.PostedEvent]) -> Bool {
        guarded.withLock { guarded in
            swap(&contents, &guarded.contents)
            guarded.drainRequested = false
            if !guarded.delivered.isEmpty, guarded.deliveredRound < round - 1 {
                if untaken.isEmpty {
                    swap(&untaken, &guarded.delivered)
                } else {
                    untaken += guarded.delivered
                    guarded.delivered = []
                }
            }
            return guarded.threadExited && contents.isEmpty
        }
    }

    /// Drain: takes back `posts`, made into events in round `round`, for the posting thread to
    /// release. Returns what the posting thread has not taken since an earlier round (it posted
    /// nothing since, so releasing them on the delivery thread contends with nothing), and, in
    /// `posts`, an emptied array to reuse.
    func giveBack(_ posts: inout [EventAggregator.PostedEvent], round: Int64) -> [EventAggregator.PostedEvent] {
        var untaken: [EventAggregator.PostedEvent] = []
        guarded.withLock { guarded in
            if guarded.deliveredRound == round {
                // The round's second pass: add to the first's.
                guarded.delivered += posts
                return
            }
            guarded.deliveredRound = round
            swap(&untaken, &guarded.delivered)
            swap(&guarded.delivered, &posts)
            swap(&posts, &guarded.emptied)
        }
        return untaken
    }

    /// Posting thread: the posts given back since it last took them.
    func takeDelivered() -> [EventAggregator.PostedEvent] {
        var delivered: [EventAggregator.PostedEvent] = []
        guarded.withLock { swap(&delivered, &$0.delivered) }
        return delivered
    }

    /// Posting thread: an emptied array for the drain to reuse (the larger one is kept).
    func keepEmptied(_ array: inout [EventAggregator.PostedEvent]) {
        guarded.withLock { guarded in
            if array.capacity > guarded.emptied.capacity { swap(&array, &guarded.emptied) }
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
