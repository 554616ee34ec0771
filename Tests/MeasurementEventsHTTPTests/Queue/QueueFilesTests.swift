import XCTest

@testable import MeasurementEventsHTTP

/// Names in the queue directory: only the ones the queue writes, with numbers in range.
final class QueueFilesTests: XCTestCase {
    func testNamesTheQueueWritesParse() {
        XCTAssertEqual(QueueFiles.parse(QueueFiles.openName(7)), .open(sequence: 7))
        XCTAssertEqual(QueueFiles.parse(QueueFiles.batchName(7, count: 42)), .batch(sequence: 7, count: 42))
    }

    func testTheFrontFileHoldsAPositionAndNothingElse() {
        XCTAssertEqual(QueueFiles.parse(QueueFiles.frontName), .front)
        XCTAssertEqual(QueueFiles.parse(QueueFiles.frontDraftName), .frontDraft)
        let written = QueueFiles.parseFront(QueueFiles.frontText(sequence: 12, record: 345))
        XCTAssertEqual(written?.sequence, 12)
        XCTAssertEqual(written?.record, 345)
        for text in ["", "12", "12 -3", "12 3 4", "x 3", "12 9999999999", "18446744073709551615 1", "12 3x"] {
            XCTAssertNil(QueueFiles.parseFront(Array(text.utf8)), text)
        }
    }

    func testACountThatIsNoPlainNumberInRangeIsLeftToTheContent() {
        for count in [
            "9223372036854775807", "-5", "", "1x", "10000000000", " 7", "+3", String(repeating: "9", count: 240),
        ] {
            XCTAssertEqual(QueueFiles.parse("000000000001-\(count).batch"), .batch(sequence: 1, count: nil), count)
        }
    }

    func testASequenceOutOfRangeOrNotDigitsIsNotAQueueFile() {
        for name in [
            "18446744073709551615-1.batch", "1000000000000000-1.batch", "00000000abc1-10.batch",
            "-1.batch", "+1-1.batch", "1.open.tmp", "notes.txt", "99999999999999999999.open",
        ] {
            XCTAssertNil(QueueFiles.parse(name), name)
        }
    }

    func testNamesListsEveryEntryButDotAndDotDot() throws {
        let directory = makeTemporaryDirectory(name)
        defer { try? FileManager.default.removeItem(at: directory) }
        let long = "000000000105-" + String(repeating: "9", count: 255 - 19) + ".batch"
        for name in ["000000000001.open", ".hidden", "é-notes.txt", long] {
            try Data().write(to: directory.appendingPathComponent(name))
        }
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("sub"), withIntermediateDirectories: false)
        XCTAssertEqual(
            QueueFiles.names(in: directory.path).sorted(),
            ["000000000001.open", ".hidden", "é-notes.txt", long, "sub"].sorted())
        XCTAssertEqual(QueueFiles.names(in: directory.appendingPathComponent("absent").path), [])
    }

    func testAFIFOIsNoRegularFileAndReadingItDoesNotBlock() throws {
        let directory = makeTemporaryDirectory(name)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("000000000001-1.batch").path
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        XCTAssertNotEqual(QueueFiles.kind(path), .regular(bytes: 0))
        guard case .failure = QueueFiles.contents(path, maximumBytes: 1 << 20) else { return XCTFail("read a FIFO") }
    }
}
