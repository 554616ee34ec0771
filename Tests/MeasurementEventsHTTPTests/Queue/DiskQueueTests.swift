import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

final class DiskQueueTests: XCTestCase {
    private var directory: URL!

    override func setUp() { directory = makeTemporaryDirectory(name) }
    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    private func makeQueue(eventsPerBatch: Int = 10, maximumEvents: Int = 1_000) throws -> DiskQueue {
        try DiskQueue(
            directory: directory,
            limits: .init(
                eventsPerBatch: eventsPerBatch, bytesPerBatch: 1 << 20, maximumEvents: maximumEvents,
                maximumBytes: 1 << 30),
            log: { _ in })
    }

    private func indices(_ events: [QueuedEvent]?) -> [Int] {
        (events ?? []).compactMap { $0.event.args["index"]?.intValue }
    }

    func testOpenSegmentLeftByACrashIsSentWithoutItsTornLastRecord() throws {
        do {
            let queue = try makeQueue(eventsPerBatch: 100)
            for event in numbered(5) { _ = try queue.append(QueuedEvent(event: event)) }
        }
        let open = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: directory.path).first)
        XCTAssertTrue(open.hasSuffix(".open"))
        // A torn last write: half a record.
        let handle = try FileHandle(forWritingTo: directory.appendingPathComponent(open))
        handle.seekToEndOfFile()
        handle.write(Data([0x4D, 0x45, 0x40, 0, 0, 0, 1, 2]))
        handle.closeFile()
        let queue = try makeQueue()
        // Counted from its frame headers at start, not read (issue 34): the torn record shows
        // when the file is read for sending.
        XCTAssertEqual(queue.queuedEvents, 5)
        XCTAssertEqual(queue.counters.tornRecordsRepaired, 0)
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        XCTAssertEqual(indices(queue.read(batch)), [0, 1, 2, 3, 4])
        XCTAssertEqual(queue.counters.tornRecordsRepaired, 1)
        queue.consume(through: DiskQueue.Position(sequence: batch.sequence, record: .max))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [])
    }

    func testOpenSegmentsAreCountedFromTheirHeadersAtStartAndCorrectedWhenRead() throws {
        do {
            let queue = try makeQueue(eventsPerBatch: 100)
            for event in numbered(4) { _ = try queue.append(QueuedEvent(event: event)) }
        }
        let open = directory.appendingPathComponent(
            try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: directory.path).first))
        // A flipped payload byte in the second record: its header still says a frame.
        var bytes = [UInt8](try Data(contentsOf: open))
        bytes[bytes.count / 4 + 20] ^= 0xFF
        try Data(bytes).write(to: open)
        let queue = try makeQueue()
        XCTAssertEqual(queue.queuedEvents, 4, "counted from the headers")
        XCTAssertEqual(queue.counters.corruptRecords, 0, "not checked at start")
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        XCTAssertEqual(indices(queue.read(batch)), [0, 2, 3])
        XCTAssertEqual(queue.counters.corruptRecords, 1)
        XCTAssertEqual(queue.queuedEvents, 3, "corrected by the read")
    }

    func testAnOpenSegmentThatStartsWithGarbageIsRepairedAtStart() throws {
        do {
            let queue = try makeQueue(eventsPerBatch: 100)
            for event in numbered(3) { _ = try queue.append(QueuedEvent(event: event)) }
        }
        let open = directory.appendingPathComponent(
            try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: directory.path).first))
        var bytes = [UInt8](try Data(contentsOf: open))
        bytes[0] = 0x00  // the first frame's magic
        try Data(bytes).write(to: open)
        let queue = try makeQueue()
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        XCTAssertTrue(batch.url.lastPathComponent.hasSuffix("-2.batch"), batch.url.lastPathComponent)
        XCTAssertEqual(indices(queue.read(batch)), [1, 2])
    }

    func testTruncatedBatchAndRandomBytesAreSkippedCountedAndDoNotBlockOthers() throws {
        do {
            let queue = try makeQueue(eventsPerBatch: 10)
            for event in numbered(30) { _ = try queue.append(QueuedEvent(event: event)) }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertEqual(names.count, 3)
        // The first batch loses its tail mid-record; the second becomes random bytes.
        let first = directory.appendingPathComponent(names[0])
        let firstData = try Data(contentsOf: first)
        try firstData.prefix(firstData.count - 20).write(to: first)
        var generator = SystemRandomNumberGenerator()
        try Data((0..<4_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
            .write(to: directory.appendingPathComponent(names[1]))
        try Data("not ours".utf8).write(to: directory.appendingPathComponent("notes.txt"))

        let queue = try makeQueue()
        var delivered: [Int] = []
        while let batch = queue.nextBatch(sealingOpenSegmentWithAtLeast: 1) {
            delivered += indices(queue.read(batch))
            queue.consume(through: DiskQueue.Position(sequence: batch.sequence, record: .max))
        }
        XCTAssertEqual(delivered, Array(0..<9) + Array(20..<30))
        XCTAssertEqual(queue.counters.tornRecordsRepaired, 1)
        XCTAssertEqual(queue.counters.unreadableFiles, 1)
        XCTAssertEqual(queue.queuedEvents, 0)
    }

    func testCorruptRecordInTheMiddleIsSkippedAndCounted() throws {
        do {
            let queue = try makeQueue(eventsPerBatch: 100)
            for event in numbered(3) { _ = try queue.append(QueuedEvent(event: event)) }
            queue.sealOpenSegment(durable: false)
        }
        let name = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: directory.path).first)
        let url = directory.appendingPathComponent(name)
        var bytes = [UInt8](try Data(contentsOf: url))
        let recordLength = bytes.count / 3
        bytes[recordLength + 20] ^= 0xFF  // inside the second record's payload
        try Data(bytes).write(to: url)
        let queue = try makeQueue()
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        XCTAssertEqual(indices(queue.read(batch)), [0, 2])
        XCTAssertEqual(queue.counters.corruptRecords, 1)
    }

    /// A server's batch of thousands is decoded in chunks on the machine's cores
    /// (`ConcurrentChunks`): the events come back in order, a damaged record in any chunk is
    /// skipped and counted, and the records around it are read.
    func testALargeBatchIsReadInOrderWithDamagedRecordsInSeveralChunksSkipped() throws {
        do {
            let queue = try makeQueue(eventsPerBatch: 3_000, maximumEvents: 10_000)
            for event in numbered(3_000) { _ = try queue.append(QueuedEvent(event: event)) }
            queue.sealOpenSegment(durable: false)
        }
        let name = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: directory.path).first)
        let url = directory.appendingPathComponent(name)
        var bytes = [UInt8](try Data(contentsOf: url))
        let records = RecordFraming.scan(bytes).records
        XCTAssertEqual(records.count, 3_000)
        for damaged in [100, 2_100, 2_999] { bytes[records[damaged].lowerBound + 20] ^= 0xFF }
        try Data(bytes).write(to: url)
        let queue = try makeQueue(maximumEvents: 10_000)
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        XCTAssertGreaterThan(ConcurrentChunks.count(for: 3_000, maximumChunks: 4), 1)
        XCTAssertEqual(indices(queue.read(batch)), (0..<3_000).filter { ![100, 2_100, 2_999].contains($0) })
        XCTAssertEqual(queue.counters.corruptRecords, 3)
    }

    func testAtTheCapTheOldestEventsAreDroppedOneByOneAndCounted() throws {
        let queue = try makeQueue(eventsPerBatch: 10, maximumEvents: 45)
        for event in numbered(73) { _ = try queue.append(QueuedEvent(event: event)) }
        XCTAssertEqual(queue.queuedEvents, 45)
        XCTAssertEqual(queue.counters.droppedAtCap, 28)
        var kept: [Int] = []
        while let batch = queue.nextBatch(sealingOpenSegmentWithAtLeast: 1) {
            kept += indices(queue.read(batch))
            queue.consume(through: DiskQueue.Position(sequence: batch.sequence, record: .max))
        }
        XCTAssertEqual(kept, Array(28..<73), "the newest 45, whatever the batches' bounds")
    }

    func testTheFrontInsideABatchSurvivesARestart() throws {
        do {
            let queue = try makeQueue(eventsPerBatch: 10, maximumEvents: 25)
            for event in numbered(33) { _ = try queue.append(QueuedEvent(event: event)) }
            XCTAssertEqual(queue.front, DiskQueue.Position(sequence: 1, record: 8))
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("front").path))
        let queue = try makeQueue(eventsPerBatch: 10, maximumEvents: 25)
        XCTAssertEqual(queue.queuedEvents, 25)
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        XCTAssertEqual(indices(queue.read(batch)), [8, 9], "the 8 dropped before the restart stay dropped")
        queue.consume(through: DiskQueue.Position(sequence: batch.sequence, record: 10))
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: directory.appendingPathComponent("front").path),
            "the front is a batch's start again")
    }

    func testARequestOnTheWireKeepsItsEventsUntilItIsAnswered() throws {
        let queue = try makeQueue(eventsPerBatch: 10, maximumEvents: 20)
        for event in numbered(20) { _ = try queue.append(QueuedEvent(event: event)) }
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        XCTAssertTrue(queue.beginSending(from: DiskQueue.Position(sequence: batch.sequence, record: 0)))
        for event in numbered(5, from: 20) { _ = try queue.append(QueuedEvent(event: event)) }
        XCTAssertEqual(queue.queuedEvents, 25, "the cap waits for the answer")
        queue.consume(through: DiskQueue.Position(sequence: batch.sequence, record: 4))  // 4 accepted
        queue.endSending()
        XCTAssertEqual(queue.queuedEvents, 20)
        XCTAssertEqual(queue.counters.droppedAtCap, 1)
        XCTAssertFalse(queue.beginSending(from: DiskQueue.Position(sequence: batch.sequence, record: 4)), "dropped")
        XCTAssertTrue(queue.beginSending(from: DiskQueue.Position(sequence: batch.sequence, record: 5)))
    }

    /// Two requests on the wire (a server's tracker): the cap waits until both are answered.
    func testTwoRequestsOnTheWireKeepTheirEventsUntilBothAreAnswered() throws {
        let queue = try makeQueue(eventsPerBatch: 10, maximumEvents: 20)
        for event in numbered(20) { _ = try queue.append(QueuedEvent(event: event)) }
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        XCTAssertTrue(queue.beginSending(from: DiskQueue.Position(sequence: batch.sequence, record: 0)))
        XCTAssertTrue(queue.beginSending(from: DiskQueue.Position(sequence: batch.sequence, record: 5)))
        for event in numbered(5, from: 20) { _ = try queue.append(QueuedEvent(event: event)) }
        queue.endSending()
        XCTAssertEqual(queue.queuedEvents, 25, "one request still on the wire: the cap waits")
        queue.endSending()
        XCTAssertEqual(queue.queuedEvents, 20, "both answered: the cap applies")
        XCTAssertEqual(queue.counters.droppedAtCap, 5)
    }

    func testTrackerRecoversBadFilesAndDeliversTheRest() throws {
        let collector = LoopbackCollector()
        try collector.start()
        defer { collector.stop() }
        let queueDirectory = directory.appendingPathComponent("queue")
        do {
            let queue = try DiskQueue(
                directory: queueDirectory,
                limits: .init(eventsPerBatch: 10, bytesPerBatch: 1 << 20, maximumEvents: 1_000, maximumBytes: 1 << 30),
                log: { _ in })
            for event in numbered(20) { _ = try queue.append(QueuedEvent(event: event)) }
        }
        try Data(repeating: 0xAB, count: 500).write(to: queueDirectory.appendingPathComponent("000000000000-10.batch"))
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "k", baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration())
        try tracker.consentDidChange(to: .granted)
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 10))
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<20))
        XCTAssertEqual(tracker.diagnostics.unreadableFiles, 1)
        XCTAssertEqual(queueFiles(directory), [])
    }
}
