import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Damaged queues and hostile file names, delivered through a real server on loopback: every
/// intact event arrives, and the counters say what was lost.
final class QueueFaultTests: LoopbackTestCase {
    private var queueDirectory: URL { directory.appendingPathComponent("queue") }

    /// Writes `count` events (`first`…) into sealed batch files of `perBatch` events, as a
    /// previous process would have left them; returns the files' names, oldest first.
    @discardableResult
    private func leaveBatches(_ count: Int, from first: Int = 0, perBatch: Int = 10) throws -> [String] {
        let before = Set(queueFiles(directory))
        let queue = try DiskQueue(
            directory: queueDirectory,
            limits: .init(
                eventsPerBatch: perBatch, bytesPerBatch: 1 << 20, maximumEvents: 1_000_000, maximumBytes: 1 << 30),
            log: { _ in })
        for event in numbered(count, from: first) { _ = try queue.append(QueuedEvent(event: event)) }
        queue.sealOpenSegment(durable: false)
        return queueFiles(directory).filter { !before.contains($0) }
    }

    /// A tracker told that consent is granted, as an aggregator's start() would: what a previous
    /// run left is uploaded only then.
    private func makeTracker(_ configuration: HTTPTracker.Configuration = testConfiguration()) throws -> HTTPTracker {
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "k", baseURL: collector.baseURL), directory: directory,
            configuration: configuration)
        try tracker.consentDidChange(to: .granted)
        return tracker
    }

    private func url(_ name: String) -> URL { queueDirectory.appendingPathComponent(name) }

    /// The frames of a queue file: where each record starts and ends.
    private func frames(_ name: String) throws -> [Range<Int>] {
        let bytes = [UInt8](try Data(contentsOf: url(name)))
        return RecordFraming.scan(bytes).records.map { ($0.lowerBound - RecordFraming.headerSize)..<$0.upperBound }
    }

    private func damage(_ name: String, _ change: (inout [UInt8]) -> Void) throws {
        var bytes = [UInt8](try Data(contentsOf: url(name)))
        change(&bytes)
        try Data(bytes).write(to: url(name))
    }

    func testEveryIntactEventIsDeliveredWhateverTheDamageAndTheLossIsCounted() throws {
        let files = try leaveBatches(100)
        XCTAssertEqual(files.count, 10)
        var generator = SeededGenerator(seed: 2026)
        var lost: Set<Int> = []
        var damagedBytes = 0
        // 1. A truncated record: the file ends in the middle of its last record.
        try damage(files[0]) { $0.removeLast(20) }
        lost.insert(9)
        // 2. Flipped payload bytes in one record.
        let payload = try frames(files[1])[3]
        try damage(files[1]) { for offset in (payload.upperBound - 8)..<payload.upperBound { $0[offset] ^= 0xA5 } }
        lost.insert(13)
        damagedBytes += payload.count
        // 3. A corrupted length.
        let lengthFrame = try frames(files[2])[4]
        try damage(files[2]) {
            $0.replaceSubrange(
                (lengthFrame.lowerBound + 2)..<(lengthFrame.lowerBound + 6), with: [0xFF, 0xFF, 0xFF, 0x7F])
        }
        lost.insert(24)
        damagedBytes += lengthFrame.count
        // 4. A corrupted magic.
        let magicFrame = try frames(files[3])[5]
        try damage(files[3]) { $0[magicFrame.lowerBound + 1] = 0x00 }
        lost.insert(35)
        damagedBytes += magicFrame.count
        // 5. Random bit flips, in records 2 and 7.
        let flipped = try frames(files[4])
        try damage(files[4]) { bytes in
            for record in [2, 7] {
                bytes[Int.random(in: flipped[record], using: &generator)] ^=
                    1 << UInt8.random(in: 0..<8, using: &generator)
            }
        }
        lost.formUnion([42, 47])
        damagedBytes += flipped[2].count + flipped[7].count
        // 6. A garbage file.
        try Data((0..<2_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: url(files[5]))
        lost.formUnion(50..<60)
        damagedBytes += 2_000
        // 7. An empty file.
        try Data().write(to: url(files[6]))
        lost.formUnion(60..<70)
        // 8. A directory in place of a file.
        try FileManager.default.removeItem(at: url(files[7]))
        try FileManager.default.createDirectory(at: url(files[7]), withIntermediateDirectories: false)
        lost.formUnion(70..<80)
        // 9. An unreadable file. The tests run as root, which reads a chmod 000 file anyway, so
        // this is a FIFO (which would also block a naive reader) and a dangling symbolic link.
        try FileManager.default.removeItem(at: url(files[8]))
        XCTAssertEqual(mkfifo(url(files[8]).path, 0o600), 0)
        try FileManager.default.createSymbolicLink(
            atPath: url("000000000090-10.batch").path,
            withDestinationPath: directory.appendingPathComponent("gone").path)
        lost.formUnion(80..<90)

        let tracker = try makeTracker()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), (0..<100).filter { !lost.contains($0) })
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.tornRecordsRepaired, 1)
        XCTAssertEqual(diagnostics.corruptRecords, 5)
        XCTAssertEqual(diagnostics.damagedBytes, damagedBytes)
        XCTAssertEqual(diagnostics.unreadableFiles, 4)  // garbage, directory, FIFO, link
        XCTAssertEqual(diagnostics.emptyFilesRemoved, 1)
        XCTAssertEqual(diagnostics.queued, 0)
        // What cannot be read stays on disk for the next start.
        XCTAssertEqual(queueFiles(directory), [files[7], files[8], "000000000090-10.batch"].sorted())
    }

    func testAnOpenSegmentWithDamageInTheMiddleKeepsItsIntactRecords() throws {
        let queue = try DiskQueue(
            directory: queueDirectory,
            limits: .init(eventsPerBatch: 100, bytesPerBatch: 1 << 20, maximumEvents: 1_000, maximumBytes: 1 << 30),
            log: { _ in })
        for event in numbered(10) { _ = try queue.append(QueuedEvent(event: event)) }
        let open = try XCTUnwrap(queueFiles(directory).first)
        XCTAssertTrue(open.hasSuffix(".open"))
        let frame = try frames(open)[3]
        try damage(open) { $0[frame.lowerBound] = 0x00 }

        let tracker = try makeTracker()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), [0, 1, 2, 4, 5, 6, 7, 8, 9])
        XCTAssertEqual(tracker.diagnostics.corruptRecords, 1)
        _ = queue
    }

    func testHostileNamesNeitherCrashNorDropRealEvents() throws {
        try leaveBatches(30)
        let hostile = [
            "000000000100-9223372036854775807.batch",  // an absurd count: overflowed the sum
            "000000000101--5.batch",  // a negative count
            "000000000102-10000000.batch",  // a count over the cap: made it drop real batches
            "000000000103-1x.batch",  // non-digits in the count
            "00000000abc4-10.batch",  // non-digits in the sequence
            "18446744073709551615-1.batch",  // the largest sequence: overflowed the next one
            // 300 characters cannot be a name on Linux or APFS (at most 255 bytes): the longest
            // possible name instead.
            "000000000105-" + String(repeating: "9", count: 255 - 19) + ".batch",
        ]
        // Three empty; the others hold a few bytes that are not records.
        let empty: Set = [hostile[0], hostile[4], hostile[6]]
        for name in hostile {
            try Data(empty.contains(name) ? [] : [0x4D, 0x45, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]).write(
                to: url(name))
        }
        var configuration = testConfiguration()
        configuration.maximumQueuedEvents = 100
        let tracker = try makeTracker(configuration)
        for event in numbered(20, from: 30) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<50))
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.droppedAtCap, 0)
        XCTAssertEqual(diagnostics.accepted, 20)
        XCTAssertEqual(diagnostics.unrecognizedFiles, 2)
        XCTAssertEqual(diagnostics.emptyFilesRemoved, 2)
        // The non-empty ones are read: nothing good in them, their bytes counted and removed.
        XCTAssertEqual(diagnostics.damagedBytes, 3 * 14)
        XCTAssertEqual(Set(queueFiles(directory)), ["00000000abc4-10.batch", "18446744073709551615-1.batch"])
    }

    func testAnUnreadableFileIsKeptAndSentAtALaterStart() throws {
        let files = try leaveBatches(20)
        let saved = try Data(contentsOf: url(files[0]))
        try FileManager.default.removeItem(at: url(files[0]))
        try FileManager.default.createDirectory(at: url(files[0]), withIntermediateDirectories: false)
        let logged = LockedValue<[String]>([])
        var configuration = testConfiguration()
        configuration.logHandler = { line in logged.withLock { $0.append(line) } }
        do {
            let tracker = try makeTracker(configuration)
            XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
            XCTAssertEqual(tracker.diagnostics.unreadableFiles, 1)
            XCTAssertEqual(logged.withLock { $0.filter { $0.contains(files[0]) }.count }, 1)
        }
        XCTAssertEqual(receivedIndices(collector.requests), Array(10..<20))
        // The file becomes readable again (a restored backup, a fixed permission).
        try FileManager.default.removeItem(at: url(files[0]))
        try saved.write(to: url(files[0]))
        let restarted = try makeTracker()
        XCTAssertTrue(restarted.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), Array(10..<20) + Array(0..<10))
        XCTAssertEqual(queueFiles(directory), [])
    }

    func testAFileThatBecomesUnreadableWhileRunningIsKeptNotDeleted() throws {
        let files = try leaveBatches(10)
        let queue = try DiskQueue(
            directory: queueDirectory,
            limits: .init(eventsPerBatch: 10, bytesPerBatch: 1 << 20, maximumEvents: 1_000, maximumBytes: 1 << 30),
            log: { _ in })
        let batch = try XCTUnwrap(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        try FileManager.default.removeItem(at: url(files[0]))
        XCTAssertEqual(mkfifo(url(files[0]).path, 0o600), 0)
        XCTAssertNil(queue.read(batch))
        XCTAssertEqual(queue.counters.unreadableFiles, 1)
        XCTAssertEqual(queue.queuedEvents, 0)
        XCTAssertNil(queue.nextBatch(sealingOpenSegmentWithAtLeast: 1))
        XCTAssertEqual(queueFiles(directory), files)
    }
}
