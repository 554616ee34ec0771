import Foundation

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
    // @unchecked: `buffers` is behind its lock; the other mutable properties are used by the
    // drain only, which runs in the delivery context, one at a time.
    let sequence = AtomicCounter()
    private let buffers = LockedValue<[PostingBuffer]>([])
    /// What a round took but numbered above its limit: the first source of the next round.
    private var carry = PostingBuffer.Contents()
    /// Emptied record arrays, kept with their capacity so that buffers do not regrow every round.
    private var spares: [[PostedEvent]] = []
    /// The last round's sources, emptied, kept for their capacity: a round allocates none.
    private var spareSources: [PostingBuffer.Contents] = []
    /// Emptied event arrays of delivered rounds, kept for their capacity.
    private var spareEvents: [[MeasurementEvent]] = []
    /// Whether the last round gave records back: then a next round must come, to release what
    /// their threads do not (see ``PostingBuffer/take(into:untaken:)``).
    private(set) var gaveBack = false

    func register(_ buffer: PostingBuffer) {
        buffers.withLock { $0.append(buffer) }
    }

    /// The capacity of the record arrays the buffers hold, for tests.
    var heldCapacity: Int { buffers.withLock { $0 }.reduce(0) { $0 + $1.heldCapacity } }

    /// At the aggregator's end: threads may forget its buffers.
    func close() {
        // What the buffers held is released here, outside their locks.
        let held = buffers.withLock({ $0 }).map { $0.markAggregatorGone() }
        withExtendedLifetime(held) {}
    }

    /// The next round: the events posted so far in sequence order, made from their records, and
    /// the controls with their positions among them; empty when nothing is waiting. Records
    /// whose args are not valid are left out, and their errors added to `rejected`.
    func nextRound(rejected: inout [(MalformedEventError, EventName)]) -> Inbox.Round {
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
        guard !sources.isEmpty else { return Inbox.Round() }

        // Only the second pass has numbers above the limit: a suffix of its sources, carried.
        // Found from the end: usually nothing is carried (and `firstIndex(where:)` copied every record).
        let ends = sources.map { source in
            var end = source.records.count
            while end > 0, source.records[end - 1].sequence > limit { end -= 1 }
            return end
        }
        var controls = sources.count == 1 ? sources[0].controls : sources.flatMap(\.controls)
        if sources.count > 1 { controls.sort { $0.sequence < $1.sequence } }
        if let cut = controls.firstIndex(where: { $0.sequence > limit }) {
            carry.controls = Array(controls[cut...])
            controls.removeSubrange(cut...)
        }
        for index in sources.indices where ends[index] < sources[index].records.count {
            carry.records += sources[index].records[ends[index]...]
        }
        if sources.count > 1, !carry.records.isEmpty { carry.records.sort { $0.sequence < $1.sequence } }

        var round = Inbox.Round(events: Self.largest(from: &spareEvents), controls: controls)
        round.events.reserveCapacity(ends.reduce(0, +))
        var nextControl = 0
        /// Appends the event of record `index` of `source`, after the controls numbered before it.
        func take(_ index: Int, of source: Int) {
            while nextControl < round.controls.count,
                round.controls[nextControl].sequence < sources[source].records[index].sequence
            {
                round.controls[nextControl].position = round.events.count
                nextControl += 1
            }
            do throws(MalformedEventError) {
                // Through `inout`: reading `sources[source].records[index]` copied the record.
                round.events.append(try sources[source].records[index].makeEvent())
            } catch {
                rejected.append((error, sources[source].records[index].name))
            }
        }
        if sources.count == 1 {
            // One posting thread (the usual case): in order already.
            for index in 0..<ends[0] { take(index, of: 0) }
        } else {
            // Merged by number: each source is in order already.
            var cursors = [Int](repeating: 0, count: sources.count)
            while true {
                var next = -1
                var nextSequence = Int64.max
                for source in sources.indices where cursors[source] < ends[source] {
                    let sequence = sources[source].records[cursors[source]].sequence
                    if sequence < nextSequence { (next, nextSequence) = (source, sequence) }
                }
                guard next >= 0 else { break }
                take(cursors[next], of: next)
                cursors[next] += 1
            }
        }
        for index in round.controls.indices[nextControl...] { round.controls[index].position = round.events.count }
        round.handedOut = ends.reduce(0, +)
        for index in sources.indices { giveBack(&sources[index]) }
        return round
    }

    /// After a round: the source's records go back to their posting thread, which releases the
    /// args it allocated there (what it has not released by the next round, that round
    /// releases); the carry's are released here.
    private func giveBack(_ source: inout PostingBuffer.Contents) {
        if let buffer = source.buffer {
            buffer.giveBack(&source.records)
            gaveBack = true
        }
        // An emptied array from the buffer, or (when the thread was behind) the records,
        // released here.
        recycle(&source.records)
    }

    /// Takes back a delivered round's events, for the array's capacity.
    func recycle(events: inout [MeasurementEvent]) {
        Self.keep(&events, in: &spareEvents)
    }

    /// Takes back an emptied array of records, for its capacity.
    private func recycle(_ records: inout [PostedEvent]) {
        Self.keep(&records, in: &spares)
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
        var untaken: [PostedEvent] = []
        // Released here, outside the buffers' locks (a value's deinitialiser may run).
        defer { untaken.removeAll() }
        for buffer in buffers {
            var contents = PostingBuffer.Contents(records: Self.largest(from: &spares))
            if buffer.take(into: &contents, untaken: &untaken) {
                finished.append(ObjectIdentifier(buffer))
            } else if !contents.isEmpty {
                contents.buffer = buffer
                sources.append(contents)
                continue
            }
            recycle(&contents.records)
        }
    }
}
