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

    func testFewItemsOrOneCoreMakeOneChunk() {
        XCTAssertEqual(ConcurrentChunks.count(for: 1_023, minimumPerChunk: 512, maximumChunks: 4), 1)
        XCTAssertEqual(ConcurrentChunks.count(for: 1_024, minimumPerChunk: 512, maximumChunks: 4), 2)
        XCTAssertEqual(ConcurrentChunks.count(for: 100_000, minimumPerChunk: 512, maximumChunks: 4), 4)
        XCTAssertEqual(ConcurrentChunks.count(for: 100_000, minimumPerChunk: 512, maximumChunks: 1), 1)
    }
}
