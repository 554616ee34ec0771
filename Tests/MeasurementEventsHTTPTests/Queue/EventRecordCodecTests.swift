import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

final class EventRecordCodecTests: XCTestCase {
    private func roundTrip(_ queued: QueuedEvent) throws -> QueuedEvent {
        var bytes: [UInt8] = []
        EventRecordCodec.encode(queued, into: &bytes)
        return try EventRecordCodec.decode(bytes[...])
    }

    /// `records` written and read one after the other with one cache for writing and one for
    /// reading, as a queue does: each record's bytes are checked to be those the codec writes
    /// without a cache, and what is read to be what is read without one. Returns what was read.
    private func throughTheCaches(
        _ records: [QueuedEvent], file: StaticString = #filePath, line: UInt = #line
    ) throws -> [QueuedEvent] {
        let writing = EventRecordCodec.ContextCache()
        let reading = EventRecordCodec.ContextCache()
        var decoded: [QueuedEvent] = []
        for queued in records {
            var plain: [UInt8] = []
            EventRecordCodec.encode(queued, into: &plain)
            var cached: [UInt8] = []
            EventRecordCodec.encode(queued, into: &cached, contextCache: writing)
            XCTAssertEqual(cached, plain, file: file, line: line)
            decoded.append(try EventRecordCodec.decode(cached[...], contextCache: reading))
            XCTAssertEqual(decoded.last, try EventRecordCodec.decode(plain[...]), file: file, line: line)
        }
        return decoded
    }

    func testRecordsRoundTripWithEveryValueKind() throws {
        var event = MeasurementEvent(
            "a/b", type: .impression, category: "c", args: ["s": "é☃", "i": -7, "d": 0.25, "b": false], label: "L")
        event.attribution = EventAttribution(identity: EventIdentity(userID: "u1", anonymousID: "anon-1"))
        XCTAssertEqual(try roundTrip(QueuedEvent(event: event)), QueuedEvent(event: event))
    }

    func testIdentityTraitsGroupSessionAndFullContextRoundTrip() throws {
        let queued = EncoderSamples.identify
        XCTAssertEqual(try roundTrip(queued), queued)
        XCTAssertEqual(try roundTrip(EncoderSamples.group), EncoderSamples.group)
        XCTAssertEqual(try roundTrip(EncoderSamples.track).event.attribution, EncoderSamples.track.event.attribution)
    }

    func testTheForegroundTimeSinceThePreviousEventRoundTrips() throws {
        var queued = EncoderSamples.track
        for milliseconds: Int64 in [0, 1, 10_000, 1_800_000, Int64(UInt32.max)] {
            queued.foregroundMillisecondsSincePrevious = milliseconds
            XCTAssertEqual(try roundTrip(queued), queued)
        }
        queued.foregroundMillisecondsSincePrevious = nil
        XCTAssertNil(try roundTrip(queued).foregroundMillisecondsSincePrevious)
    }

    /// A queue's records share their context: the cache copies its bytes when writing and
    /// reuses the context read when the bytes are the same; records of other contexts between
    /// them are written and read in full, as without a cache.
    func testTheContextCacheWritesAndReadsWhatTheCodecDoesWithoutIt() throws {
        var other = EncoderSamples.track
        var context = try XCTUnwrap(other.context)
        context.locale = "fr_FR"
        other.event.attribution?.context = context
        let records = [EncoderSamples.track, EncoderSamples.track, other, EncoderSamples.identify, other]
        XCTAssertEqual(try throughTheCaches(records).map(\.context), records.map(\.context))
    }

    /// A server's records come in runs of one request's events between those of others: the
    /// cache writes and reads the latest attributions once, and what it writes and reads is what
    /// the codec does without it, also past the number it remembers, and for records whose
    /// bytes begin alike but whose flags differ (no user id, then an empty one).
    func testTheLatestAttributionsAreWrittenAndReadOnceAndAsWithoutTheCache() throws {
        func event(
            user: String?, anonymousID: String = "anon", purposes: [String: Bool]? = nil, context: Bool = true
        ) -> QueuedEvent {
            var event = MeasurementEvent("a/b", args: ["n": 1])
            var attribution = EventAttribution(
                identity: EventIdentity(userID: user, anonymousID: anonymousID),
                context: context ? EncoderSamples.track.context : nil)
            attribution.purposeConsents = purposes
            event.attribution = attribution
            return QueuedEvent(event: event)
        }
        let requests = (0..<(EventRecordCodec.ContextCache.recentAttributions + 4)).map { event(user: "user-\($0)") }
        // Two rounds of every request in turn (more requests than the cache remembers), then
        // runs of two requests alternating, then the same bytes under other flags, and purposes.
        var records = requests + requests + [requests[0], requests[1], requests[0], requests[1]]
        // Without a context, a record of no user id is a prefix of one of an empty user id.
        records += [
            event(user: nil, context: false), event(user: "", context: false), event(user: nil, context: false),
        ]
        records += [event(user: "", purposes: ["ads": true])]
        records += [event(user: "", purposes: ["ads": false]), event(user: nil, anonymousID: "")]
        let decoded = try throughTheCaches(records)
        XCTAssertEqual(decoded, records)
        // Read once: the records of one request in the alternating run share one attribution.
        let run = decoded[(2 * requests.count)...]
        XCTAssertTrue(run[run.startIndex].event.attributionStorage === run[run.startIndex + 2].event.attributionStorage)
        XCTAssertFalse(
            run[run.startIndex].event.attributionStorage === run[run.startIndex + 1].event.attributionStorage)
        XCTAssertEqual(decoded[decoded.count - 3].event.attribution?.purposeConsents, ["ads": true])
        XCTAssertEqual(decoded[decoded.count - 2].event.attribution?.purposeConsents, ["ads": false])
    }

    func testAContextWithOnlyRequiredFieldsRoundTrips() throws {
        var event = MeasurementEvent("a/b")
        event.attribution = EventAttribution(
            identity: EventIdentity(anonymousID: "a"), sessionID: -5,
            context: EventContext(os: .init(name: "Linux", version: "6.1")))
        XCTAssertEqual(try roundTrip(QueuedEvent(event: event)), QueuedEvent(event: event))
    }

    func testVersion1RecordsDecodeWithTheirUserIDAndAskForTheLegacyAnonymousID() throws {
        let event = MeasurementEvent("a/b", type: .click, category: "c", args: ["i": 3, "s": "x"], label: "L")
        let decoded = try EventRecordCodec.decode(LegacyRecords.version1(event, userID: "user-1")[...])
        XCTAssertTrue(decoded.isLegacy)
        XCTAssertEqual(decoded.kind, .track)
        XCTAssertEqual(decoded.event.args, event.args)
        XCTAssertEqual(decoded.event.label, "L")
        let filled = decoded.fillingLegacyIdentity(anonymousID: "legacy-anon")
        XCTAssertEqual(filled.identity, EventIdentity(userID: "user-1", anonymousID: "legacy-anon"))
        XCTAssertFalse(filled.isLegacy)
    }

    func testLengthsAndCountsFromDiskAreCheckedBeforeUse() throws {
        var bytes: [UInt8] = []
        EventRecordCodec.encode(EncoderSamples.identify, into: &bytes)
        // Every truncation fails with an error, never a trap.
        for length in 0..<bytes.count {
            XCTAssertThrowsError(try EventRecordCodec.decode(bytes[0..<length]), "length \(length)")
        }
        // A huge varint where the name's length sits (offset: version, kind, id, time, type, flags).
        var huge = Array(bytes[0..<28])
        huge += [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        XCTAssertThrowsError(try EventRecordCodec.decode(huge[...])) { error in
            XCTAssertTrue("\(error)".contains("string length"), "\(error)")
        }
        var badKind = bytes
        badKind[1] = 9
        XCTAssertThrowsError(try EventRecordCodec.decode(badKind[...])) { error in
            XCTAssertTrue("\(error)".contains("record kind 9"), "\(error)")
        }
        var badVersion = bytes
        badVersion[0] = 4
        XCTAssertThrowsError(try EventRecordCodec.decode(badVersion[...])) { error in
            XCTAssertTrue("\(error)".contains("version 4, expected 1 to 3"), "\(error)")
        }
    }

    func testPurposesConsentsRoundTripInVersion3AndOnlyEventsWithThemUseIt() throws {
        var event = MeasurementEvent("checkout/completed", args: ["total": 12.5])
        var attribution = EventAttribution(identity: EventIdentity(userID: "u1", anonymousID: "anon-1"), sessionID: 7)
        var bytes: [UInt8] = []
        event.attribution = attribution
        EventRecordCodec.encode(QueuedEvent(event: event), into: &bytes)
        XCTAssertEqual(bytes.first, 2, "an event without purposes is written as version 2 reads it")

        attribution.purposeConsents = ["analytics": true, "advertising": false, "com.example.surveys": true]
        event.attribution = attribution
        bytes = []
        EventRecordCodec.encode(QueuedEvent(event: event), into: &bytes)
        XCTAssertEqual(bytes.first, 3)
        let decoded = try EventRecordCodec.decode(bytes[...])
        XCTAssertEqual(decoded.event.attribution?.purposeConsents, attribution.purposeConsents)
        XCTAssertEqual(decoded, QueuedEvent(event: event))
        for length in 0..<bytes.count {
            XCTAssertThrowsError(try EventRecordCodec.decode(bytes[0..<length]), "length \(length)")
        }
        var flaggedInVersion2 = bytes
        flaggedInVersion2[0] = 2
        XCTAssertThrowsError(try EventRecordCodec.decode(flaggedInVersion2[...])) { error in
            XCTAssertTrue("\(error)".contains("version 3 fields flagged in a version 2 record"), "\(error)")
        }
        var badByte = bytes
        badByte[badByte.count - 1] = 7
        XCTAssertThrowsError(try EventRecordCodec.decode(badByte[...])) { error in
            XCTAssertTrue("\(error)".contains("consent byte 7"), "\(error)")
        }
    }
}

/// Records as version 1 of the queue wrote them (the encoder of that version, kept here), for
/// the tests that a queue left by it still delivers.
enum LegacyRecords {
    static func version1(_ event: MeasurementEvent, userID: String?) -> [UInt8] {
        var buffer: [UInt8] = [1]
        withUnsafeBytes(of: event.id.uuid) { buffer.append(contentsOf: $0) }
        appendUInt64(event.timestamp.timeIntervalSinceReferenceDate.bitPattern, to: &buffer)
        buffer.append(UInt8(EventType.allCases.firstIndex(of: event.type)!))
        var flags: UInt8 = 0
        if event.category != nil { flags |= 1 }
        if event.label != nil { flags |= 2 }
        if userID != nil { flags |= 4 }
        buffer.append(flags)
        appendString(event.name.rawValue, to: &buffer)
        if let category = event.category { appendString(category, to: &buffer) }
        if let label = event.label { appendString(label, to: &buffer) }
        if let userID { appendString(userID, to: &buffer) }
        appendVarint(UInt64(event.args.count), to: &buffer)
        for (key, value) in event.args {
            appendString(key, to: &buffer)
            switch value {
            case .string(let string):
                buffer.append(UInt8(ascii: "s"))
                appendString(string, to: &buffer)
            case .int(let int):
                buffer.append(UInt8(ascii: "i"))
                appendUInt64(UInt64(bitPattern: Int64(int)), to: &buffer)
            case .double(let double):
                buffer.append(UInt8(ascii: "d"))
                appendUInt64(double.bitPattern, to: &buffer)
            case .bool(let bool):
                buffer.append(UInt8(ascii: "b"))
                buffer.append(bool ? 1 : 0)
            }
        }
        return buffer
    }

    /// A sealed queue file of version 1 records, as a tracker of that version left it.
    static func writeBatch(_ records: [[UInt8]], sequence: UInt64, queueDirectory: URL) throws {
        var file: [UInt8] = []
        for record in records { RecordFraming.appendFrame(payload: record[...], to: &file) }
        try FileManager.default.createDirectory(at: queueDirectory, withIntermediateDirectories: true)
        try Data(file).write(
            to: queueDirectory.appendingPathComponent(QueueFiles.batchName(sequence, count: records.count)))
    }

    private static func appendUInt64(_ value: UInt64, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
    }

    private static func appendVarint(_ value: UInt64, to buffer: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        buffer.append(UInt8(value))
    }

    private static func appendString(_ string: String, to buffer: inout [UInt8]) {
        let utf8 = Array(string.utf8)
        appendVarint(UInt64(utf8.count), to: &buffer)
        buffer.append(contentsOf: utf8)
    }
}
