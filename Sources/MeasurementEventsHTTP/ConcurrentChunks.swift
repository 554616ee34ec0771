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
}
