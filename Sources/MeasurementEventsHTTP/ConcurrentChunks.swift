import Dispatch
import Foundation
import MeasurementEvents

/// Splits a long piece of work (decoding a queue file, encoding a request's records) into
/// chunks done at the same time on the machine's cores, results in order. A server's uploader
/// is one serial queue: without this, reading a batch back and encoding its request were one
/// core's work while the other sat partly idle (issue 49: the uploader was the bottleneck at 73 %
/// of a core, the machine 14 % idle). Short work, and a machine with one core, stay on the
/// calling thread.
package enum ConcurrentChunks {
    /// The fewest items worth a chunk of their own: below it, handing the chunk to another
    /// thread costs more than it saves.
    package static let minimumPerChunk = 512

    /// The most chunks: the cores a machine has, up to 4 (a request of 2,000 records is 500 each).
    package static let maximumChunks = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))

    /// How many chunks `count` items make: 1 when they are few or the machine has one core.
    package static func count(
        for count: Int, minimumPerChunk: Int = minimumPerChunk, maximumChunks: Int = maximumChunks
    ) -> Int {
        max(1, min(maximumChunks, count / max(1, minimumPerChunk)))
    }

    /// `body` applied to the chunks of `0..<count` (as many as
    /// ``count(for:minimumPerChunk:maximumChunks:)`` says), at the same time, results in the chunks' order. `body` runs on other threads:
    /// it must not touch shared mutable state.
    package static func map<Result: Sendable>(
        _ count: Int, minimumPerChunk: Int = minimumPerChunk, maximumChunks: Int = maximumChunks,
        _ body: @Sendable (Range<Int>) -> Result
    ) -> [Result] {
        let chunks = Self.count(for: count, minimumPerChunk: minimumPerChunk, maximumChunks: maximumChunks)
        guard chunks > 1 else { return [body(0..<count)] }
        let results = LockedValue([Result?](repeating: nil, count: chunks))
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            // Rounded so that the chunks cover 0..<count exactly.
            let result = body((count * chunk / chunks)..<(count * (chunk + 1) / chunks))
            results.withLock { $0[chunk] = result }
        }
        return results.withLock { $0.map { $0! } }  // every chunk ran: concurrentPerform returns after all
    }

    /// What `body` makes of the chunks of `0..<count`, at the same time, as one array in order,
    /// and each chunk's other result (its notes). Each chunk adds its items, at most one an
    /// index of its range (more are ignored), through the function it is given, straight into
    /// the array's room for that range; the chunks are closed up after. Nothing is copied: one
    /// array made of each chunk's arrays copied every item, and a copy of a queued event retains
    /// every string and dictionary in it, then releases them (issue 49: 5 % of a server's samples).
    package static func flatMap<Element: Sendable, Other: Sendable>(
        _ count: Int, minimumPerChunk: Int = minimumPerChunk, maximumChunks: Int = maximumChunks,
        _ body: @Sendable (Range<Int>, _ add: (consuming Element) -> Void) -> Other
    ) -> (elements: [Element], others: [Other]) {
        var others: [Other] = []
        let elements = [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            let room = Room(base: buffer.baseAddress)
            let chunks = map(count, minimumPerChunk: minimumPerChunk, maximumChunks: maximumChunks) {
                range -> (range: Range<Int>, added: Int, other: Other) in
                var added = 0
                let other = body(range) { element in
                    guard added < range.count, let base = room.base else { return }
                    (base + range.lowerBound + added).initialize(to: element)
                    added += 1
                }
                return (range, added, other)
            }
            // Closed up in order: each chunk's items move down to follow the ones before.
            var end = 0
            for chunk in chunks {
                if chunk.added > 0, end != chunk.range.lowerBound, let base = buffer.baseAddress {
                    (base + end).moveInitialize(from: base + chunk.range.lowerBound, count: chunk.added)
                }
                end += chunk.added
                others.append(chunk.other)
            }
            initialized = end
        }
        return (elements, others)
    }

    /// The array's storage, written by the chunks at once, each in its own range.
    private struct Room<Element>: @unchecked Sendable {
        // @unchecked: each chunk initializes only the slots of its own range.
        let base: UnsafeMutablePointer<Element>?
    }
}
