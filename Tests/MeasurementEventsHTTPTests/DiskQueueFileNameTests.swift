import Foundation
@testable import MeasurementEventsHTTP
import XCTest

/// Queue file names come from the disk: numbers in them must not overflow what is computed from them.
final class DiskQueueFileNameTests: XCTestCase {
    func testOrdinaryNamesAreRead() {
        XCTAssertEqual(DiskQueue.sequence(ofOpenName: "000000000007.open"), 7)
        XCTAssertEqual(DiskQueue.sequenceAndCount(ofBatchName: "000000000007-25.batch")?.0, 7)
        XCTAssertEqual(DiskQueue.sequenceAndCount(ofBatchName: "000000000007-25.batch")?.1, 25)
    }

    func testASequenceThatWouldOverflowTheNextOneIsNotAQueueFile() {
        // recover() sets the next sequence to the highest + 1: UInt64.max trapped.
        XCTAssertNil(DiskQueue.sequence(ofOpenName: "18446744073709551615.open"))
        XCTAssertNil(DiskQueue.sequenceAndCount(ofBatchName: "18446744073709551615-1.batch"))
    }

    func testACountThatWouldOverflowTheQueueTotalIsNotAQueueFile() {
        XCTAssertNil(DiskQueue.sequenceAndCount(ofBatchName: "000000000001-9223372036854775807.batch"))
        XCTAssertNil(DiskQueue.sequenceAndCount(ofBatchName: "000000000001-2147483647.batch"))
        XCTAssertNil(DiskQueue.sequenceAndCount(ofBatchName: "000000000001-16777217.batch"))
    }
}
