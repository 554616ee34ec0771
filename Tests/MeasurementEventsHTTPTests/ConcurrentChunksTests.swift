import XCTest

@testable import MeasurementEventsHTTP

final class ConcurrentChunksTests: XCTestCase {
    func testChunksCoverEveryItemOnceInOrder() {
        for count in [0, 1, 511, 512, 1_024, 2_000, 2_001, 9_999] {
            let chunks = ConcurrentChunks.map(count, minimumPerChunk: 512, maximumChunks: 4) { $0 }
            XCTAssertEqual(chunks.count, ConcurrentChunks.count(for: count, maximumChunks: 4), "\(count)")
            XCTAssertEqual(chunks.flatMap { Array($0) }, Array(0..<count), "\(count)")
        }
    }

    /// One array in order, of what every chunk added (some items skipped, as a damaged record
    /// is), each item moved, never copied, and each chunk's notes.
    func testFlatMapPutsWhatEachChunkAddsInOneArrayInOrderWithoutCopies() {
        final class Item: Sendable {
            let value: Int
            init(_ value: Int) { self.value = value }
        }
        for count in [0, 1, 700, 1_024, 2_001, 9_999] {
            for maximumChunks in [1, 2, 4] {
                var (elements, others) = ConcurrentChunks.flatMap(
                    count, minimumPerChunk: 256, maximumChunks: maximumChunks
                ) {
                    (chunk, add: (consuming Item) -> Void) -> Int in
                    var skipped = 0
                    for index in chunk {
                        if index % 7 == 3 {
                            skipped += 1
                        } else {
                            add(Item(index))
                        }
                    }
                    add(Item(-1))  // one more than a chunk of all indices holds: ignored then
                    return skipped
                }
                let expected = (0..<count).filter { $0 % 7 != 3 }
                let label = "\(count) items, \(maximumChunks) chunks"
                XCTAssertEqual(elements.map(\.value).filter { $0 >= 0 }, expected, label)
                XCTAssertEqual(others.reduce(0, +), count - expected.count, label)
                XCTAssertEqual(
                    others.count,
                    ConcurrentChunks.count(for: count, minimumPerChunk: 256, maximumChunks: maximumChunks), label)
                // The array holds the only reference to each item: none kept or leaked by the chunks.
                for index in elements.indices {
                    XCTAssertTrue(isKnownUniquelyReferenced(&elements[index]), label)
                }
            }
        }
    }

    func testFewItemsOrOneCoreMakeOneChunk() {
        XCTAssertEqual(ConcurrentChunks.count(for: 1_023, minimumPerChunk: 512, maximumChunks: 4), 1)
        XCTAssertEqual(ConcurrentChunks.count(for: 1_024, minimumPerChunk: 512, maximumChunks: 4), 2)
        XCTAssertEqual(ConcurrentChunks.count(for: 100_000, minimumPerChunk: 512, maximumChunks: 4), 4)
        XCTAssertEqual(ConcurrentChunks.count(for: 100_000, minimumPerChunk: 512, maximumChunks: 1), 1)
    }
}
