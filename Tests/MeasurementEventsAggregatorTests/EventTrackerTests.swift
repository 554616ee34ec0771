import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

final class EventTrackerTests: XCTestCase {
    private struct Failure: Error, CustomStringConvertible {
        var description: String { "boom" }
    }

    private let event = MeasurementEvent(
        "feed/item_tapped", type: .click, args: ["item_id": "42", "position": 3],
        timestamp: Date(timeIntervalSince1970: 1_700_000_000.123))

    func testCombinedTrackerReachesEveryTrackerDespiteAFailure() {
        let first = RecordingTracker()
        let last = RecordingTracker()
        let combined = first.combined(with: ClosureTracker { _ in throw Failure() }, last)
        XCTAssertThrowsError(try combined.track(event)) { error in
            XCTAssertEqual("\(error)", "ClosureTracker: boom")
        }
        XCTAssertEqual(first.names, ["feed/item_tapped"])
        XCTAssertEqual(last.names, ["feed/item_tapped"])
    }

    func testCombinedTrackersFlattenAndForwardFlushAndDiscard() throws {
        let inner = RecordingTracker()
        let outer = RecordingTracker()
        let combined = outer.combined(with: inner.combined(with: RecordingTracker()))
        XCTAssertEqual(combined.trackers.count, 3)
        try combined.flush()
        try combined.discardPending()
        XCTAssertEqual(inner.flushCount, 1)
        XCTAssertEqual(outer.discardCount, 1)
    }

    func testConsoleTrackerWritesOneReadableLine() throws {
        let lines = LockedValue<[String]>([])
        let tracker = ConsoleTracker { line in lines.withLock { $0.append(line) } }
        try tracker.track(event)
        XCTAssertEqual(
            lines.withLock { $0 }, ["[MeasurementEvents] 22:13:20.123 [cl] feed/item_tapped item_id=42 position=3"])
    }

    func testJSONLinesTrackerAppendsOneDecodableObjectPerLine() throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("jsonl-\(EventIDGenerator.makeID().uuidString)/events.jsonl")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let tracker = try JSONLinesFileTracker(url: url)
        try tracker.track(event)
        try tracker.track(MeasurementEvent("feed/closed", args: ["ok": true, "ratio": 0.5]))
        try tracker.flush()

        let text = try String(contentsOf: url, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 3, "two lines and the final newline")
        XCTAssertEqual(lines.last, "")
        let decoded = try lines.dropLast().map { try JSONDecoder().decode(MeasurementEvent.self, from: Data($0.utf8)) }
        XCTAssertEqual(decoded.first, event)
        XCTAssertEqual(decoded.last?.args, ["ok": true, "ratio": 0.5])
        XCTAssertTrue(lines[0].hasPrefix(#"{"args":{"item_id":"42","position":3},"id":""#))
    }

    func testJSONLinesTrackerAppendsToAnExistingFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "jsonl-\(EventIDGenerator.makeID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        try JSONLinesFileTracker(url: url).track(event)
        try JSONLinesFileTracker(url: url).track(event)
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8).split(separator: "\n").count, 2)
    }

    func testJSONLinesTrackerReportsAFailedWrite() throws {
        guard FileManager.default.fileExists(atPath: "/dev/full") else { throw XCTSkip("needs /dev/full") }
        let tracker = try JSONLinesFileTracker(url: URL(fileURLWithPath: "/dev/full"))
        XCTAssertThrowsError(try tracker.track(event)) { error in
            XCTAssertTrue("\(error)".hasPrefix("cannot write to /dev/full: "), "\(error)")
        }
    }

    func testJSONLinesTrackerReportsAnUnwritablePath() {
        XCTAssertThrowsError(try JSONLinesFileTracker(url: URL(fileURLWithPath: "/proc/no-such-dir/events.jsonl"))) {
            error in
            XCTAssertTrue(
                "\(error)".hasPrefix("cannot open /proc/no-such-dir/events.jsonl for appending: "), "\(error)")
        }
    }
}
