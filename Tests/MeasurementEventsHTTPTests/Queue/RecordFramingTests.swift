import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// The reader finds every good record whatever damage sits before it, and says how much it lost.
final class RecordFramingTests: XCTestCase {
    /// Ten framed records; returns the bytes and where each frame starts and ends.
    private func tenRecords() -> (bytes: [UInt8], frames: [Range<Int>]) {
        var bytes: [UInt8] = []
        var frames: [Range<Int>] = []
        for event in numbered(10) {
            var payload: [UInt8] = []
            EventRecordCodec.encode(QueuedEvent(event: event), into: &payload)
            let start = bytes.count
            RecordFraming.appendFrame(payload: payload[...], to: &bytes)
            frames.append(start..<bytes.count)
        }
        return (bytes, frames)
    }

    private func indices(_ bytes: [UInt8], _ scan: RecordFraming.Scan) -> [Int] {
        scan.records.compactMap { try? EventRecordCodec.decode(bytes[$0]).event.args["index"]?.intValue }
    }

    func testRecordsAfterACorruptedMagicAreRead() {
        var (bytes, frames) = tenRecords()
        bytes[frames[3].lowerBound] = 0x00
        let scan = RecordFraming.scan(bytes)
        XCTAssertEqual(indices(bytes, scan), [0, 1, 2, 4, 5, 6, 7, 8, 9])
        XCTAssertEqual(scan.corruptRecords, 1)
        XCTAssertEqual(scan.damagedBytes, frames[3].count)
        XCTAssertEqual(scan.validLength, bytes.count)
    }

    func testRecordsAfterACorruptedLengthAreRead() {
        let longerThanTheRecord = UInt32(tenRecords().frames[3].count - RecordFraming.headerSize + 50)
        for length: UInt32 in [0xFFFF_FFFF, 0x7FFF_FFFF, 3, longerThanTheRecord] {
            var (bytes, frames) = tenRecords()
            var field: [UInt8] = []
            RecordFraming.appendUInt32(length, to: &field)
            bytes.replaceSubrange((frames[3].lowerBound + 2)..<(frames[3].lowerBound + 6), with: field)
            let scan = RecordFraming.scan(bytes)
            XCTAssertEqual(indices(bytes, scan), [0, 1, 2, 4, 5, 6, 7, 8, 9], "length \(length)")
            XCTAssertEqual(scan.corruptRecords, 1, "length \(length)")
        }
    }

    func testRecordsAfterAFailedChecksumAreRead() {
        var (bytes, frames) = tenRecords()
        bytes[frames[5].upperBound - 3] ^= 0xFF
        let scan = RecordFraming.scan(bytes)
        XCTAssertEqual(indices(bytes, scan), [0, 1, 2, 3, 4, 6, 7, 8, 9])
        XCTAssertEqual(scan.corruptRecords, 1)
    }

    func testRandomBitFlipsLoseOnlyTheRecordsTheyHit() {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<200 {
            var (bytes, frames) = tenRecords()
            let hit = [1, 6]
            for record in hit {
                let position = Int.random(in: frames[record], using: &generator)
                bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
            }
            let scan = RecordFraming.scan(bytes)
            XCTAssertEqual(indices(bytes, scan), [0, 2, 3, 4, 5, 7, 8, 9])
            XCTAssertEqual(scan.corruptRecords, 2)
            XCTAssertEqual(scan.damagedBytes, frames[1].count + frames[6].count)
        }
    }

    func testATornLastRecordIsNotCountedAsDamage() {
        let (bytes, frames) = tenRecords()
        let torn = Array(bytes.dropLast(7))
        let scan = RecordFraming.scan(torn)
        XCTAssertEqual(indices(torn, scan), Array(0..<9))
        XCTAssertTrue(scan.tornTail)
        XCTAssertEqual(scan.corruptRecords, 0)
        XCTAssertEqual(scan.validLength, frames[8].upperBound)
    }

    func testGarbageIsCountedInBytes() {
        var generator = SeededGenerator(seed: 3)
        let garbage = (0..<5_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let scan = RecordFraming.scan(garbage)
        XCTAssertEqual(scan.records, [])
        XCTAssertEqual(scan.damagedBytes, 5_000)
        XCTAssertEqual(scan.validLength, 0)
    }

    /// Issue 12.1: the check happens on the unsigned value, with the limit given, so this test
    /// on a 64-bit machine runs the same code as a 32-bit watch with `Int32`-sized limits.
    func testALengthAboveTheLimitIsRefusedBeforeItBecomesAnInt() {
        let int32Maximum = Int(Int32.max)
        XCTAssertNil(RecordFraming.payloadLength(UInt32.max, maximum: int32Maximum))
        XCTAssertNil(RecordFraming.payloadLength(UInt32(Int32.max) + 1, maximum: int32Maximum))
        XCTAssertEqual(RecordFraming.payloadLength(UInt32(Int32.max), maximum: int32Maximum), int32Maximum)
        XCTAssertNil(RecordFraming.payloadLength(UInt32(RecordFraming.maximumPayloadSize) + 1))
        XCTAssertNil(RecordFraming.payloadLength(0, maximum: -1))
    }

    /// zlib's crc32 is the checksum the queue has always written: files of earlier versions read.
    func testZlibsChecksumIsTheTablesOne() {
        XCTAssertEqual(CRC32.checksum(Array("123456789".utf8)), 0xCBF4_3926, "the CRC-32 check value")
        XCTAssertEqual(CRC32.checksum([UInt8]()), 0)
        var generator = SeededGenerator(seed: 49)
        for length in [1, 7, 64, 1_000, 65_537] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            XCTAssertEqual(CRC32.checksum(bytes), CRC32.tableChecksum(bytes), "\(length) bytes")
            XCTAssertEqual(
                CRC32.checksum(bytes.dropFirst(3)), CRC32.tableChecksum(bytes.dropFirst(3)), "a slice of \(length)")
        }
    }
}

/// SplitMix64: reproducible randomness for damage.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
