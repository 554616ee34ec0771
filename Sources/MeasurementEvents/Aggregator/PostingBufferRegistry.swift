/// An aggregator's posting buffers (one per posting thread), and the drain's merge of them
/// into one sequence.
///
/// Every item carries a number from one counter, taken inside its buffer's lock. A round swaps
/// every buffer out twice: `M`, the largest number seen by the end of the first pass (carry-over
/// included), is such that every item numbered `M` or less was inside its buffer's lock before
/// the first pass ended, so the second pass has it. The round hands out, merged by number,
/// every item up to `M`, and keeps the rest for the next round. An item posted after (in the
/// happens-before sense) another item, on any thread, has a larger number: cross-thread order
/// between an identity change and an event is kept.
final class PostingBufferRegistry: @unchecked Sendable {
    // @unchecked: `buffers` is behind its lock; `carry` is used by the drain only, which runs
    // in the delivery context, one at a time.
    let sequence = AtomicCounter()
    private let buffers = LockedValue<[PostingBuffer]>([])
    private var carry = PostingBuffer.Contents()
    /// Emptied event arrays, kept with their capacity so that buffers do not regrow every round.
    private var spares: [[EventAggregator.PostedEvent]] = []
    /// The last round's arrays, emptied, kept for their capacity: a round allocates none.
    private var spareSources: [PostingBuffer.Contents] = []
    /// Whether the last round gave posts back: then a next round must come, to release what
    /// their threads do not (see ``PostingBuffer/take(into:untaken:)``).
    private(set) var gaveBack = false
    /// Emptied arrays of events (one per source, and the merged round), kept for their capacity.
    private var spareEvents: [[EventAggregator.Pending]] = []

    func register(_ buffer: PostingBuffer) {
        buffers.withLock { $0.append(buffer) }
    }

    /// The capacity of the post arrays the buffers hold, for tests.
    var heldCapacity: Int { buffers.withLock { $0 }.reduce(0) { $0 + $1.heldCapacity } }

    /// At the aggregator's end: threads may forget its buffers.
    func close() {
        // What the buffers held is released here, outside their locks.
        let held = buffers.withLock({ $0 }).map { $0.markAggregatorGone() }
        withExtendedLifetime(held) {}
    }

    /// The next events in sequence order, and the controls with their positions among them;
    /// both empty when nothing is waiting. Posts whose args are not valid are left out, and
    /// their errors added to `rejected`.
    func nextRound(
        rejected: inout [MalformedEventError]
    ) -> (events: [EventAggregator.Pending], controls: [EventAggregator.Control]) {
        let buffers = self.buffers.withLock { $0 }
        gaveBack = false
        var sources = spareSources
        spareSources = []
        defer {
            sources.removeAll(keepingCapacity: true)
            spareSources = sources
        }
        if !carry.isEmpty {
            sources.append(carry)
            carry = PostingBuffer.Contents()
        }
        var finished: [ObjectIdentifier] = []
        takeAll(from: buffers, into: &sources, finished: &finished)
        let limit = sources.reduce(Int64.min) { max($0, $1.lastSequence) }
        takeAll(from: buffers, into: &sources, finished: &finished)
        if !finished.isEmpty {
            self.buffers.withLock { $0.removeAll { finished.contains(ObjectIdentifier($0)) } }
        }
        guard !sources.isEmpty else { return ([], []) }
        for index in sources.indices { makeEvents(of: &sources[index], rejected: &rejected) }
        // One source (one posting thread, the usual case) is in order already.
        var events: [EventAggregator.Pending]
        var controls = sources.count == 1 ? sources[0].controls : sources.flatMap(\.controls)
        if sources.count == 1 {
            events = sources[0].events
            sources[0].events = []
        } else {
            events = Self.largest(from: &spareEvents)
            Self.merge(&sources, into: &events)
            for index in sources.indices { recycle(events: &sources[index].events) }
            controls.sort { $0.sequence < $1.sequence }
        }
        // Only the second pass has numbers above the limit, and they sort last.
        if let last = events.last, last.sequence > limit,
            let cut = events.firstIndex(where: { $0.sequence > limit })
        {
            carry.events = Self.largest(from: &spareEvents)
            carry.events.append(contentsOf: events[cut...])
            events.removeSubrange(cut...)
        }
        if let last = controls.last, last.sequence > limit,
            let cut = controls.firstIndex(where: { $0.sequence > limit })
        {
            carry.controls = Array(controls[cut...])
            controls.removeSubrange(cut...)
        }
        var position = 0
        for index in controls.indices {
            while position < events.count, events[position].sequence < controls[index].sequence { position += 1 }
            controls[index].position = position
        }
        return (events, controls)
    }

    /// Merges the sources' events, each source in sequence order already, into `merged` in
    /// sequence order. Merging in place of appending them all and sorting: the sort allocated
    /// a scratch buffer every round with several posting threads, and compared n log n times.
    private static func merge(_ sources: inout [PostingBuffer.Contents], into merged: inout [EventAggregator.Pending]) {
        merged.reserveCapacity(merged.count + sources.reduce(0) { $0 + $1.events.count })
        withUnsafeTemporaryAllocation(of: Int.self, capacity: sources.count) { cursors in
            cursors.initialize(repeating: 0)
            while true {
                var next = -1
                var nextSequence = Int64.max
                for source in sources.indices where cursors[source] < sources[source].events.count {
                    // Through a buffer pointer: `events[cursor].sequence` copied the whole event.
                    let sequence = sources[source].events.withUnsafeBufferPointer { $0[cursors[source]].sequence }
                    if sequence < nextSequence { (next, nextSequence) = (source, sequence) }
                }
                guard next >= 0 else { return }
                sources[next].events.withUnsafeBufferPointer { merged.append($0[cursors[next]]) }
                cursors[next] += 1
            }
        }
    }

    /// Turns a source's fast-path posts into events, in sequence with its other events; the
    /// ones whose args are not valid go to `rejected` instead.
    private func makeEvents(of source: inout PostingBuffer.Contents, rejected: inout [MalformedEventError]) {
        guard !source.posted.isEmpty else { return }
        // Posts are read in place: iterating the array copied every post and destroyed the copy.
        // The events go into an array of an earlier round, which has the capacity already.
        var made = Self.largest(from: &spareEvents)
        made.reserveCapacity(source.posted.count)
        source.posted.withUnsafeBufferPointer { posts in
            for index in posts.indices {
                do throws(MalformedEventError) {
                    made.append(try posts[index].makePending())
                } catch {
                    rejected.append(error)
                }
            }
        }
        if let buffer = source.buffer {
            // Back to the posting thread, which releases the args it allocated; what it has not
            // released by the next round is released by that round.
            buffer.giveBack(&source.posted)
            gaveBack = true
        }
        // An emptied array from the buffer, or (when the thread was behind) the posts, released
        // here.
        recycle(&source.posted)
        if source.events.isEmpty {
            swap(&source.events, &made)
        } else {
            source.events += made
            source.events.sort { $0.sequence < $1.sequence }
        }
        recycle(events: &made)
    }

    /// Takes back a delivered round's events, for the array's capacity.
    func recycle(events: inout [EventAggregator.Pending]) {
        Self.keep(&events, in: &spareEvents)
    }

    /// Takes back an emptied array of posts, for its capacity.
    func recycle(_ posts: inout [EventAggregator.PostedEvent]) {
        Self.keep(&posts, in: &spares)
    }

    /// Empties `array` and keeps it in `pool` for its capacity: a few arrays (two a posting
    /// thread), the largest, none larger than a busy round needs (a burst's capacity is let go).
    private static func keep<Element>(_ array: inout [Element], in pool: inout [[Element]]) {
        array.removeAll(keepingCapacity: true)
        if array.capacity > 0, array.capacity <= PostingBuffer.largestKeptCapacity {
            if pool.count < 8 {
                pool.append(array)
            } else if let smallest = pool.indices.min(by: { pool[$0].capacity < pool[$1].capacity }),
                pool[smallest].capacity < array.capacity
            {
                swap(&pool[smallest], &array)
            }
        }
        array = []
    }

    /// The array in `pool` with the most capacity (one given a small one grows it again).
    private static func largest<Element>(from pool: inout [[Element]]) -> [Element] {
        guard let largest = pool.indices.max(by: { pool[$0].capacity < pool[$1].capacity }) else { return [] }
        return pool.remove(at: largest)
    }

    private func takeAll(
        from buffers: [PostingBuffer], into sources: inout [PostingBuffer.Contents], finished: inout [ObjectIdentifier]
    ) {
        var untaken: [EventAggregator.PostedEvent] = []
        // Released here, outside the buffers' locks (a value's deinitialiser may run).
        defer { untaken.removeAll() }
        for buffer in buffers {
            var contents = PostingBuffer.Contents(posted: Self.largest(from: &spares))
            if buffer.take(into: &contents, untaken: &untaken) {
                finished.append(ObjectIdentifier(buffer))
            } else if !contents.isEmpty {
                contents.buffer = buffer
                sources.append(contents)
                continue
            }
            recycle(&contents.posted)
        }
    }
}
