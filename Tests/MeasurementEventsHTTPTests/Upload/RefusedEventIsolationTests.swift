import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsOTLP
import XCTest

@testable import MeasurementEventsHTTP

/// A server that refuses a whole batch for one bad event (Segment's and PostHog's HTTP APIs
/// answer 400): the tracker splits refused requests until the bad events are alone, and drops
/// only those.
final class RefusedEventIsolationTests: LoopbackTestCase {
    private static let marker = "REFUSE-ME"
    private static let badIndices: Set<Int> = [7, 400, 401, 1_234, 1_999]

    /// `count` numbered events; those at `bad` carry the marker the collector refuses.
    private func events(_ count: Int, bad: Set<Int>) -> [MeasurementEvent] {
        numbered(count).enumerated().map { index, event in
            guard bad.contains(index) else { return event }
            var args = event.args
            args["note"] = .string(Self.marker)
            return MeasurementEvent(event.name, args: args, id: event.id, timestamp: event.timestamp)
        }
    }

    /// A Segment tracker whose batches, and uploads, hold `count` events.
    private func segmentTracker(batchesOf count: Int) throws -> HTTPTracker {
        try HTTPTracker(
            encoder: SegmentEncoder(
                writeKey: "key", baseURL: collector.baseURL,
                limits: BatchLimits(maximumEvents: count, maximumBytes: 500_000)),
            directory: directory, configuration: testConfiguration(flushAt: count))
    }

    private func accepted(_ requests: [LoopbackCollector.Request]) -> [LoopbackCollector.Request] {
        requests.filter { !$0.bodyText.contains(Self.marker) }
    }

    func testFiveRefusedEventsAmongTwoThousandCostOnlyThemWithSegment() throws {
        collector.refuseRequests(containing: Self.marker)
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(flushAt: 100))
        for event in events(2_000, bad: Self.badIndices) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 60))
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(
            Set(receivedIndices(accepted(collector.requests))), Set(0..<2_000).subtracting(Self.badIndices),
            "every good event is delivered")
        XCTAssertEqual(diagnostics.delivered, 1_995)
        XCTAssertEqual(diagnostics.refusedEvents, 5)
        XCTAssertEqual(diagnostics.rejectedByServer, 0)
        // Requests are filled by bytes (up to 2,000 calls): 2·⌈log₂ 2,000⌉ = 22 extra requests at
        // most per refused event (400 and 401 share levels).
        XCTAssertLessThanOrEqual(diagnostics.splitRequests, 5 * 22)
        XCTAssertLessThanOrEqual(diagnostics.requests - diagnostics.splitRequests, 20)
        print(
            "Segment, 2,000 events, 5 refused: lost \(2_000 - 5 - diagnostics.delivered) good events, "
                + "\(diagnostics.splitRequests) extra requests (of \(diagnostics.requests))")
        let problems = diagnostics.recentProblems.filter { $0.contains("the server refused test/numbered") }
        XCTAssertEqual(problems.count, 5, "one report per refused event: \(diagnostics.recentProblems)")
    }

    func testFiveRefusedEventsAmongTwoThousandCostOnlyThemWithOTLP() throws {
        collector.refuseRequests(containing: Self.marker)
        let tracker = try HTTPTracker(
            encoder: OTLPLogsEncoder(baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(flushAt: 200))
        for event in events(2_000, bad: Self.badIndices) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 60))
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(
            Set(accepted(collector.requests).flatMap(otlpIndices)), Set(0..<2_000).subtracting(Self.badIndices))
        XCTAssertEqual(diagnostics.delivered, 1_995)
        XCTAssertEqual(diagnostics.refusedEvents, 5)
        XCTAssertEqual(diagnostics.rejectedByServer, 0, "no good record lost")
        // As for Segment: requests are filled by bytes up to OTLP's 2,000 records, so a refused
        // record costs at most 2·⌈log₂ 2,000⌉ = 22 extra requests. (The bound was 16, from the
        // batches of 200 before requests were filled by bytes: on a busy machine more records
        // wait for one request, and a run needed 82 for the five.)
        XCTAssertLessThanOrEqual(diagnostics.splitRequests, 5 * 22)
        print(
            "OTLP, 2,000 events, 5 refused: lost \(2_000 - 5 - diagnostics.delivered) good events, "
                + "\(diagnostics.splitRequests) extra requests (of \(diagnostics.requests))")
    }

    func testThirtyRefusedRecordsAmongTwoThousandCostOnlyThemWithOTLP() throws {
        // Spread so that no two share a half before the last levels: with the fixed budget of
        // 8·⌈log₂ n⌉ requests (isolating about four), most of the batch was lost. Accepted halves
        // give their split back, so only the splits with two refused halves (at most 29) spend it.
        let bad = Set((0..<30).map { $0 * 66 + 5 })
        collector.refuseRequests(containing: Self.marker)
        let tracker = try HTTPTracker(
            encoder: OTLPLogsEncoder(baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(flushAt: 2_000))
        for event in events(2_000, bad: bad) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 120))
        let diagnostics = tracker.diagnostics
        let lost = Set(0..<2_000).subtracting(bad).subtracting(accepted(collector.requests).flatMap(otlpIndices))
        XCTAssertEqual(lost.count, 0, "good records lost")
        XCTAssertEqual(diagnostics.delivered, 1_970)
        XCTAssertEqual(diagnostics.refusedEvents, 30)
        XCTAssertEqual(diagnostics.rejectedByServer, 0, "no good record lost")
        XCTAssertLessThanOrEqual(diagnostics.splitRequests, 30 * 22)
        print(
            "OTLP, 2,000 events, 30 refused: lost \(2_000 - 30 - diagnostics.delivered) good events, "
                + "\(diagnostics.splitRequests) extra requests (of \(diagnostics.requests))")
    }

    func testAServerRefusingEverythingCostsABoundedNumberOfRequestsAndOneReport() throws {
        collector.setDefaultReply(.status(400, body: "no"))
        let tracker = try segmentTracker(batchesOf: 100)
        for event in numbered(300) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 60))
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.delivered, 0)
        XCTAssertEqual(diagnostics.refusedEvents + diagnostics.rejectedByServer, 300, "every dropped event is counted")
        // The first batch spends its budget (4 × 2·⌈log₂ 100⌉ = 56); the next ones one split each.
        XCTAssertLessThanOrEqual(diagnostics.splitRequests, 56 + 2 + 2)
        XCTAssertGreaterThanOrEqual(diagnostics.splitRequests, 2 + 2 + 2)
        XCTAssertEqual(diagnostics.requests, 3 + diagnostics.splitRequests)
        let reports = diagnostics.recentProblems.filter { $0.contains("split budget") }
        XCTAssertEqual(reports.count, 1, "one report for the episode: \(diagnostics.recentProblems)")
    }

    func testAnAcceptedRequestEndsTheEpisodeAndRestoresTheBudget() throws {
        collector.setDefaultReply(.status(400))
        let tracker = try segmentTracker(batchesOf: 8)
        for event in numbered(8) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.refusedEvents, 8, "a budget of 24 splits isolates all 8")
        XCTAssertEqual(tracker.diagnostics.splitRequests, 14)

        collector.setDefaultReply(.ok)
        collector.refuseRequests(containing: Self.marker)
        for event in events(8, bad: [3]) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.delivered, 7)
        XCTAssertEqual(tracker.diagnostics.refusedEvents, 9)
        XCTAssertEqual(tracker.diagnostics.rejectedByServer, 0)
    }

    func testAMalformedOrHugeRefusalIsReportedCutShort() throws {
        let huge = String(repeating: "\u{FFFD}x", count: 2_000_000)
        collector.script([.status(400, body: huge)])
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(flushAt: 1))
        try tracker.track(numbered(1)[0])
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.refusedEvents, 1)
        let problem = try XCTUnwrap(tracker.diagnostics.recentProblems.last)
        XCTAssertLessThan(problem.utf8.count, 1_000)
    }

    func testHalvesSplitTheEventsStillToSendAndKeepTheRestOfTheSpan() {
        XCTAssertEqual(
            RefusalIsolation.halves(of: 0..<8, positions: Array(0..<8), span: 0..<20), [0..<4, 4..<8, 8..<20])
        XCTAssertEqual(RefusalIsolation.halves(of: 2..<8, positions: [2, 5, 7], span: 2..<8), [2..<5, 5..<8])
        XCTAssertEqual(RefusalIsolation.ceilingLog2(1), 0)
        XCTAssertEqual(RefusalIsolation.ceilingLog2(100), 7)
        XCTAssertEqual(RefusalIsolation.ceilingLog2(128), 7)
        XCTAssertEqual(RefusalIsolation.splitBudget(forBatchOf: 1), 2)
    }
}

/// The `index` attribute of every log record in an OTLP request.
func otlpIndices(_ request: LoopbackCollector.Request) -> [Int] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else { return [] }
    let resources = object["resourceLogs"] as? [[String: Any]] ?? []
    let records = resources.flatMap { ($0["scopeLogs"] as? [[String: Any]] ?? []) }
        .flatMap { ($0["logRecords"] as? [[String: Any]] ?? []) }
    return records.compactMap { record in
        let attributes = record["attributes"] as? [[String: Any]] ?? []
        let index = attributes.first { $0["key"] as? String == "index" }
        return ((index?["value"] as? [String: Any])?["intValue"] as? String).flatMap { Int($0) }
    }
}
