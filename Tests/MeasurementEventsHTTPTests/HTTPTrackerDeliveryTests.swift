import EncoderTestSupport
import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsGA4
import XCTest

@testable import MeasurementEventsHTTP

/// Delivery through a real HTTP server on loopback, in the normal case and under faults.
final class HTTPTrackerDeliveryTests: LoopbackTestCase {
    private func makeTracker(
        _ configuration: HTTPTracker.Configuration = testConfiguration(), maximumEvents: Int = 100
    ) throws -> HTTPTracker {
        try HTTPTracker(
            encoder: SegmentEncoder(
                writeKey: "key", baseURL: collector.baseURL,
                limits: BatchLimits(maximumEvents: maximumEvents, maximumBytes: 500_000)),
            directory: directory, configuration: configuration)
    }

    private func assertEachDeliveredAtLeastOnce(_ count: Int, file: StaticString = #filePath, line: UInt = #line) {
        let indices = receivedIndices(collector.requests)
        XCTAssertEqual(
            Set(indices), Set(0..<count), "missing: \(Set(0..<count).subtracting(indices).sorted().prefix(10))",
            file: file, line: line)
    }

    func testEveryEventIsReceivedExactlyOnce() throws {
        let tracker = try makeTracker()
        for event in numbered(1_000) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests).sorted(), Array(0..<1_000))
        XCTAssertEqual(tracker.diagnostics.delivered, 1_000)
        XCTAssertEqual(queueFiles(directory), [])
        let first = collector.requests[0]
        XCTAssertEqual(first.method, "POST")
        XCTAssertEqual(first.target, "/v1/batch")
        XCTAssertEqual(first.headers["authorization"], "Basic a2V5Og==")
    }

    func testEventsKeepTheirOrderAcrossBatches() throws {
        let tracker = try makeTracker(maximumEvents: 7)
        for event in numbered(100) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<100))
    }

    func testUploadStartsAtFlushAtWithoutAnExplicitFlush() throws {
        let tracker = try makeTracker(testConfiguration(flushAt: 10))
        for event in numbered(9) { try tracker.track(event) }
        XCTAssertFalse(collector.waitForRequests(1, timeout: 0.3))
        try tracker.track(numbered(1, from: 9)[0])
        XCTAssertTrue(collector.waitForRequests(1, timeout: 10))
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<10))
    }

    func testTimerFlushesWhatIsQueued() throws {
        let clock = TestClock(runsImmediately: false)
        var configuration = testConfiguration(clock: clock)
        configuration.flushInterval = 30
        let tracker = try makeTracker(configuration)
        for event in numbered(3) { try tracker.track(event) }
        clock.advance(by: 29)
        XCTAssertFalse(collector.waitForRequests(1, timeout: 0.3))
        clock.advance(by: 1)
        XCTAssertTrue(collector.waitForRequests(1, timeout: 10))
        XCTAssertEqual(receivedIndices(collector.requests), [0, 1, 2])
        _ = tracker
    }

    func testServerErrorThenSuccessLosesNothing() throws {
        collector.script([.status(500), .status(503)])
        let clock = TestClock(runsImmediately: true)
        let tracker = try makeTracker(testConfiguration(clock: clock))
        for event in numbered(50) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        assertEachDeliveredAtLeastOnce(50)
        XCTAssertEqual(tracker.diagnostics.retries, 2)
        // Backoff doubles: 1 s, then 2 s (jitter fixed at 0 by the test policy).
        XCTAssertEqual(clock.scheduledDelays, [1, 2])
    }

    func testTooManyRequestsWaitsForRetryAfter() throws {
        collector.script([.tooManyRequests(retryAfter: 17)])
        let clock = TestClock(runsImmediately: true)
        let tracker = try makeTracker(testConfiguration(clock: clock))
        for event in numbered(5) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(clock.scheduledDelays, [17])
        assertEachDeliveredAtLeastOnce(5)
    }

    func testPayloadTooLargeHalvesDownAndKeepsTheSizeTheServerTook() throws {
        collector.script([.status(413), .status(413), .status(413)])
        let tracker = try makeTracker()
        for event in numbered(8) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        // 8 → 4 → 2 refused, 1 accepted: the server takes 1 and not 2, so the rest go one by one.
        let sizes = collector.requests.map { segmentCalls([$0]).count }
        XCTAssertEqual(sizes, [8, 4, 2] + Array(repeating: 1, count: 8))
        XCTAssertEqual(receivedIndices(Array(collector.requests.dropFirst(3))), Array(0..<8))
    }

    func testSingleEventRefusedWith413IsDroppedAndCounted() throws {
        collector.script([.status(413), .status(413, body: "too big")])
        let tracker = try makeTracker()
        for event in numbered(2) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.refusedEvents, 1)
        XCTAssertEqual(tracker.diagnostics.delivered, 1)
        XCTAssertTrue(tracker.diagnostics.recentProblems.last?.contains("too big") == true)
    }

    func testARefusedRequestIsSentAgainInHalvesAndLosesNothingWhenTheHalvesAreAccepted() throws {
        collector.script([.status(400, body: "{\"error\":\"bad batch\"}")])
        let tracker = try makeTracker(maximumEvents: 5)
        for event in numbered(15) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let sizes = collector.requests.map { segmentCalls([$0]).count }
        XCTAssertEqual(sizes, [5, 2, 3, 5, 5])
        XCTAssertEqual(receivedIndices(Array(collector.requests.dropFirst())), Array(0..<15))
        XCTAssertEqual(tracker.diagnostics.splitRequests, 2)
        XCTAssertEqual(tracker.diagnostics.refusedEvents + tracker.diagnostics.rejectedByServer, 0)
    }

    func testAnEventRefusedAloneIsDroppedCountedAndReportedWithTheServerMessage() throws {
        collector.script([.status(400, body: "{\"error\":\"bad event\"}")])
        let tracker = try makeTracker()
        try tracker.track(numbered(1)[0])
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.refusedEvents, 1)
        XCTAssertEqual(tracker.diagnostics.splitRequests, 0)
        XCTAssertTrue(tracker.diagnostics.recentProblems.last?.contains("bad event") == true)
    }

    func testAmplitudeRefusingSomeEventsDropsOnlyThoseAndSendsTheRestAgain() throws {
        collector.script([
            .status(
                400,
                body: #"""
                    {"code":400,"error":"Invalid field values on some events",
                     "events_with_invalid_fields":{"time":[1,3]},"events_with_missing_fields":{"event_type":[3]}}
                    """#)
        ])
        let tracker = try HTTPTracker(
            encoder: AmplitudeEncoder(apiKey: "key", baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration())
        for event in numbered(5) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let sent = collector.requests.map { request -> [Int] in
            let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
            let events = body?["events"] as? [[String: Any]] ?? []
            return events.compactMap { ($0["event_properties"] as? [String: Any])?["index"] as? Int }
        }
        XCTAssertEqual(sent, [[0, 1, 2, 3, 4], [0, 2, 4]])
        XCTAssertEqual(tracker.diagnostics.refusedEvents, 2)
        XCTAssertEqual(tracker.diagnostics.splitRequests, 0, "the reply named them: no split")
        XCTAssertEqual(tracker.diagnostics.delivered, 3)
        let problem = try XCTUnwrap(tracker.diagnostics.recentProblems.last)
        XCTAssertTrue(problem.contains("refused 2 of 5 events (test/numbered)"), problem)
        XCTAssertTrue(problem.contains("Invalid field values"), problem)
    }

    func testAnEncoderRejectionIsCountedOnceThoughTheBatchIsRetried() throws {
        collector.script([.status(500), .status(503)])
        let tracker = try makeTracker()
        let big = MeasurementEvent("big/event", args: ["blob": .string(String(repeating: "x", count: 40_000))])
        try tracker.track(big)
        for event in numbered(3) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.retries, 2)
        XCTAssertEqual(tracker.diagnostics.rejectedByEncoder, 1)
        XCTAssertEqual(tracker.diagnostics.delivered, 3)
    }

    func testConnectionRefusedUntilServerComesUp() throws {
        let port = try LoopbackCollector.unusedPort()
        let late = LoopbackCollector(port: port)
        defer { late.stop() }
        let clock = TestClock(runsImmediately: false)
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: URL(string: "http://127.0.0.1:\(port)")!),
            directory: directory, configuration: testConfiguration(clock: clock))
        for event in numbered(20) { try tracker.track(event) }
        try tracker.flush()
        let deadline = Date().addingTimeInterval(10)
        while tracker.diagnostics.retries == 0 && Date() < deadline { usleep(5_000) }
        XCTAssertEqual(tracker.diagnostics.retries, 1)
        XCTAssertEqual(tracker.diagnostics.queued, 20)
        try late.start()
        clock.advance(by: 1)
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(late.requests), Array(0..<20))
    }

    func testSlowReplyPastTimeoutIsRetriedWithoutLoss() throws {
        collector.script([.slow(3)])
        var configuration = testConfiguration()
        configuration.requestTimeout = 1
        let tracker = try makeTracker(configuration)
        for event in numbered(10) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        assertEachDeliveredAtLeastOnce(10)
        XCTAssertGreaterThanOrEqual(tracker.diagnostics.retries, 1)
        // The first try reached the server too: the repeat carries the same message ids.
        let ids = segmentCalls(collector.requests).map { $0["messageId"] as! String }
        XCTAssertEqual(Set(ids).count, 10)
    }

    func testPlainHTTPIsRefusedExceptLoopback() {
        XCTAssertThrowsError(
            try HTTPTracker(
                encoder: SegmentEncoder(writeKey: "k", baseURL: URL(string: "http://collector.example.com")!),
                directory: directory, configuration: testConfiguration()))
        XCTAssertTrue(HTTPTracker.isAllowedEndpoint(URL(string: "http://localhost:8080/x")!))
        XCTAssertTrue(HTTPTracker.isAllowedEndpoint(URL(string: "http://[::1]:8080/x")!))
        XCTAssertTrue(HTTPTracker.isAllowedEndpoint(URL(string: "https://api.segment.io")!))
        XCTAssertFalse(HTTPTracker.isAllowedEndpoint(URL(string: "http://10.0.0.1")!))
    }

    func testASecondLiveTrackerOnTheSameDirectoryIsRefused() throws {
        var first: HTTPTracker? = try makeTracker()
        XCTAssertThrowsError(try makeTracker()) { error in
            XCTAssertEqual(
                "\(error)", "another HTTPTracker is using \(directory.path); give each tracker its own directory")
        }
        try first?.track(numbered(1)[0])
        XCTAssertTrue(first?.waitUntilDelivered(timeout: 30) == true)
        first = nil
        XCTAssertNoThrow(try makeTracker(), "the lock goes with the tracker")
    }

    func testEachEventIsSentWithTheIdentityItCarries() throws {
        let tracker = try makeTracker()
        try tracker.track(withUser(nil, numbered(1)[0]))
        try tracker.track(withUser("user-777", numbered(1, from: 1)[0]))
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let calls = segmentCalls(collector.requests)
        XCTAssertEqual(calls.map { $0["anonymousId"] as? String }, ["anon-1234", "anon-1234"])
        XCTAssertEqual(calls.map { $0["userId"] as? String }, [nil, "user-777"])
    }

    func testEventsTrackedWithoutAnAggregatorShareOneAnonymousID() throws {
        let tracker = try makeTracker()
        for event in numbered(2) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let ids = segmentCalls(collector.requests).compactMap { $0["anonymousId"] as? String }
        XCTAssertEqual(ids.count, 2)
        XCTAssertEqual(Set(ids).count, 1)
        XCTAssertFalse(ids[0].isEmpty)
    }

    func testAQueueWrittenByVersion1DeliversWithItsUserIDsAndTheDirectorysAnonymousID() throws {
        // What a tracker of the previous version left: its anonymous-id file and a sealed
        // queue file of version 1 records, each with the user id set when it was tracked.
        try Data("legacy-anon-5678\n".utf8).write(to: directory.appendingPathComponent("anonymous-id"))
        let records = numbered(3).enumerated().map { index, event in
            LegacyRecords.version1(event, userID: index == 1 ? "user-old" : nil)
        }
        try LegacyRecords.writeBatch(records, sequence: 0, queueDirectory: directory.appendingPathComponent("queue"))
        let tracker = try makeTracker()
        try tracker.consentDidChange(to: .granted)
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let calls = segmentCalls(collector.requests)
        XCTAssertEqual(receivedIndices(collector.requests), [0, 1, 2])
        XCTAssertEqual(calls.map { $0["anonymousId"] as? String }, Array(repeating: "legacy-anon-5678", count: 3))
        XCTAssertEqual(calls.map { $0["userId"] as? String }, [nil, "user-old", nil])
        XCTAssertEqual(tracker.diagnostics.corruptRecords, 0)
    }

    func testBatchesAreSplitWhereTheEncodersRequestKeyChangesAndOnlyThere() throws {
        let events = [
            withUser("user-a", numbered(1)[0]), withUser("user-a", numbered(1, from: 1)[0]),
            withUser("user-b", numbered(1, from: 2)[0]), withUser(nil, numbered(1, from: 3)[0]),
        ]
        let ga4 = try HTTPTracker(
            encoder: GA4Encoder(measurementID: "G-1", apiSecret: "s", baseURL: collector.baseURL, validation: .off),
            directory: directory.appendingPathComponent("ga4"), configuration: testConfiguration())
        for event in events { try ga4.track(event) }
        XCTAssertTrue(ga4.waitUntilDelivered(timeout: 30))
        let users = collector.requests.filter { !$0.target.hasPrefix("/debug/") }.map { request -> String in
            let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
            return "\(body?["user_id"] as? String ?? "-") x\((body?["events"] as? [Any])?.count ?? 0)"
        }
        XCTAssertEqual(users, ["user-a x2", "user-b x1", "- x1"], "GA4: one request per client and user")

        let segment = try makeTracker()
        for event in events { try segment.track(event) }
        XCTAssertTrue(segment.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(collector.requests.count, 4, "Segment mixes users in one request")
    }
}
