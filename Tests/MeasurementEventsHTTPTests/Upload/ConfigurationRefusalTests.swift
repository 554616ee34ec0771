import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsOTLP
import XCTest

@testable import MeasurementEventsHTTP

/// A reply that refuses the key or the endpoint (401, 403, 404, Amplitude's "Invalid API key")
/// keeps every event: sending stops, one report, and it resumes with a new encoder or after the
/// long delay. Time is a manual clock: nothing here waits for the delays it checks.
final class ConfigurationRefusalTests: LoopbackTestCase {
    private let validKey = LockedValue("old-key")

    private func segment(_ key: String) -> SegmentEncoder {
        SegmentEncoder(writeKey: key, baseURL: collector.baseURL)
    }

    /// A collector that answers 401 to a request whose Basic user is not the valid key.
    private func refuseOtherKeys() {
        let validKey = validKey
        collector.respond { request in
            let expected = "Basic " + Data((validKey.withLock { $0 } + ":").utf8).base64EncodedString()
            return request.headers["authorization"] == expected
                ? nil : .status(401, body: #"{"error":"Invalid write key"}"#)
        }
    }

    /// Waits (real time, generously) until `condition` holds: the uploader works on its own queue.
    private func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if condition() { return true }
            usleep(2_000)
        }
        return condition()
    }

    func testAKeyRotatedMidRunAndFixedTenMinutesLaterLosesNothing() throws {
        refuseOtherKeys()
        let clock = TestClock(runsImmediately: false)
        let tracker = try HTTPTracker(
            encoder: segment("old-key"), directory: directory, configuration: testConfiguration(clock: clock))
        for event in numbered(200) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.delivered, 200)

        // The key is rotated on the server; the app still sends the old one.
        let requestsBefore = collector.requests.count
        validKey.withLock { $0 = "new-key" }
        for event in numbered(300, from: 200) { try tracker.track(event) }
        try tracker.flush()
        XCTAssertTrue(eventually { tracker.diagnostics.refusedConfiguration != nil })
        let requestsWhenStopped = collector.requests.count
        // Ten minutes pass, events keep coming; nothing is sent, nothing dropped.
        for minute in 0..<10 {
            clock.advance(by: 60)
            for event in numbered(50, from: 500 + 50 * minute) { try tracker.track(event) }
            try tracker.flush()
        }
        XCTAssertFalse(collector.waitForRequests(requestsWhenStopped + 1, timeout: 0.3))
        let stopped = tracker.diagnostics
        XCTAssertEqual(stopped.queued, 800)
        XCTAssertEqual(stopped.delivered, 200)
        XCTAssertEqual(stopped.refusedEvents + stopped.rejectedByServer + stopped.droppedAtCap, 0)
        let reports = stopped.recentProblems.filter { $0.contains("HTTP 401") }
        XCTAssertEqual(reports.count, 1, "\(stopped.recentProblems)")
        XCTAssertTrue(reports[0].contains("Invalid write key"), reports[0])
        XCTAssertTrue(reports[0].contains("not the events"), reports[0])
        XCTAssertEqual(stopped.refusedConfiguration, reports[0])

        // The app gets the new key.
        try tracker.updateEncoder(segment("new-key"))
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let fixed = tracker.diagnostics
        XCTAssertEqual(fixed.delivered, 1_000)
        XCTAssertNil(fixed.refusedConfiguration)
        XCTAssertEqual(fixed.refusedEvents + fixed.rejectedByServer + fixed.droppedAtCap, 0)
        let newKey = "Basic " + Data("new-key:".utf8).base64EncodedString()
        let received = receivedIndices(collector.requests.filter { $0.headers["authorization"] == newKey })
        XCTAssertEqual(Set(received), Set(200..<1_000))
        XCTAssertEqual((tracker.encoder as? SegmentEncoder)?.writeKey, "new-key")
        print(
            "Rotated key: 800 events queued while refused (\(requestsWhenStopped - requestsBefore) request refused), "
                + "1 report: \"\(reports[0])\", delivered after the fix \(fixed.delivered - 200), "
                + "lost \(1_000 - fixed.delivered)")
    }

    func testAnAmplitudeInvalidKeyWaitsForTheLongDelayAndReportsOnce() throws {
        let refusing = LockedValue(true)
        collector.respond { _ in
            refusing.withLock { $0 }
                ? .status(400, body: #"{"code":400,"error":"Invalid API key"}"#) : nil
        }
        let clock = TestClock(runsImmediately: false)
        var configuration = testConfiguration(clock: clock)
        configuration.retryPolicy = RetryPolicy(configurationRetryDelay: 3_600, random: { 0 })
        let tracker = try HTTPTracker(
            encoder: AmplitudeEncoder(apiKey: "key-1", baseURL: collector.baseURL), directory: directory,
            configuration: configuration)
        for event in numbered(120) { try tracker.track(event) }
        try tracker.flush()
        XCTAssertTrue(eventually { tracker.diagnostics.refusedConfiguration != nil })
        XCTAssertEqual(collector.requests.count, 1)
        // The refusal is counted before its retry is scheduled: the hour is measured from when
        // the uploader schedules it, so the clock moves only once it is (a busy machine ran the
        // advance in between, and the retry then waited an hour from the advanced time).
        XCTAssertTrue(eventually { clock.scheduledDelays.filter { $0 == 3_600 }.count == 1 })
        clock.advance(by: 3_599)
        XCTAssertFalse(collector.waitForRequests(2, timeout: 0.3))
        clock.advance(by: 1)  // asks again, still refused: no new report
        XCTAssertTrue(collector.waitForRequests(2, timeout: 10))
        XCTAssertTrue(eventually { clock.scheduledDelays.filter { $0 == 3_600 }.count == 2 })
        refusing.withLock { $0 = false }  // the key works again (a project setting was fixed)
        clock.advance(by: 3_600)
        XCTAssertTrue(eventually { tracker.diagnostics.delivered == 120 })
        let diagnostics = tracker.diagnostics
        XCTAssertNil(diagnostics.refusedConfiguration)
        XCTAssertEqual(diagnostics.refusedEvents + diagnostics.rejectedByServer, 0)
        XCTAssertEqual(diagnostics.splitRequests, 0)
        XCTAssertEqual(diagnostics.recentProblems.filter { $0.contains("Invalid API key") }.count, 1)
    }

    func testA401WithAnEmptyBodyFromAnOTLPCollectorIsReportedClearly() throws {
        collector.setDefaultReply(.status(401))
        let clock = TestClock(runsImmediately: false)
        let tracker = try HTTPTracker(
            encoder: OTLPLogsEncoder(baseURL: collector.baseURL, headers: ["Authorization": "Bearer expired"]),
            directory: directory, configuration: testConfiguration(clock: clock))
        for event in numbered(30) { try tracker.track(event) }
        try tracker.flush()
        XCTAssertTrue(eventually { tracker.diagnostics.refusedConfiguration != nil })
        let report = try XCTUnwrap(tracker.diagnostics.refusedConfiguration)
        XCTAssertTrue(report.hasPrefix("HTTP 401"), report)
        XCTAssertTrue(report.contains("the reply has no body"), report)
        XCTAssertTrue(report.contains("30 events queued are kept"), report)
        XCTAssertEqual(tracker.diagnostics.queued, 30)
        collector.setDefaultReply(.status(200))
        try tracker.updateEncoder(
            OTLPLogsEncoder(baseURL: collector.baseURL, headers: ["Authorization": "Bearer fresh"]))
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.delivered, 30)
    }

    func testWhatOverflowsTheCapWhileStoppedIsCountedAsToday() throws {
        collector.setDefaultReply(.status(403, body: "forbidden"))
        var configuration = testConfiguration(clock: TestClock(runsImmediately: false))
        configuration.maximumQueuedEvents = 300
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(
                writeKey: "key", baseURL: collector.baseURL,
                limits: BatchLimits(maximumEvents: 100, maximumBytes: 500_000)),
            directory: directory, configuration: configuration)
        for event in numbered(100) { try tracker.track(event) }
        try tracker.flush()
        XCTAssertTrue(eventually { tracker.diagnostics.refusedConfiguration != nil })
        for event in numbered(400, from: 100) { try tracker.track(event) }
        collector.setDefaultReply(.status(200))
        try tracker.updateEncoder(SegmentEncoder(writeKey: "key-2", baseURL: collector.baseURL))
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let diagnostics = tracker.diagnostics
        XCTAssertGreaterThan(diagnostics.droppedAtCap, 0)
        XCTAssertEqual(diagnostics.delivered + diagnostics.droppedAtCap, 500)
        XCTAssertEqual(diagnostics.refusedEvents + diagnostics.rejectedByServer, 0)
    }

    func testAnInsecureNewEncoderIsRefusedAndTheOldOneKept() throws {
        let tracker = try HTTPTracker(
            encoder: segment("old-key"), directory: directory, configuration: testConfiguration())
        XCTAssertThrowsError(
            try tracker.updateEncoder(SegmentEncoder(writeKey: "k", baseURL: URL(string: "http://example.com")!)))
        XCTAssertEqual((tracker.encoder as? SegmentEncoder)?.writeKey, "old-key")
    }

    /// A refused key reaches the aggregator: its problem handler, its diagnostics and its trail
    /// (so the inspector), once per episode, however often the server repeats it (issue 48).
    func testARefusedKeyIsToldToTheAggregatorOncePerEpisode() throws {
        final class Entries: EventTrailObserver, @unchecked Sendable {
            // @unchecked: behind its lock.
            let all = LockedValue<[EventTrailEntry]>([])
            func record(_ entry: EventTrailEntry) { all.withLock { $0.append(entry) } }
        }
        collector.setDefaultReply(.status(401, body: #"{"error":"Invalid write key"}"#))
        let clock = TestClock(runsImmediately: false)
        let tracker = try HTTPTracker(
            encoder: segment("revoked"), directory: directory, configuration: testConfiguration(clock: clock))
        let problems = LockedValue<[String]>([])
        let entries = Entries()
        var configuration = EventAggregator.Configuration.testing
        configuration.problemHandler = { problem in
            if case .trackerProblem = problem { problems.withLock { $0.append(problem.description) } }
        }
        configuration.trail = entries
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, destinations: [Destination(tracker, name: "segment")],
            configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("feed/item_tapped", args: ["index": 0], to: center)
        aggregator.flush()
        XCTAssertTrue(eventually { problems.withLock { $0.count } == 1 })
        // Asked again later, the server still refuses; more events come. The clock moves on
        // until the request goes: the retry may be scheduled only after the problem was told.
        XCTAssertTrue(
            eventually {
                clock.advance(by: 3_600)
                return collector.requests.count >= 2
            })
        MeasurementEvent.post("feed/item_tapped", args: ["index": 1], to: center)
        aggregator.flush()
        XCTAssertTrue(
            eventually {
                clock.advance(by: 3_600)
                return collector.requests.count >= 3
            })
        XCTAssertEqual(problems.withLock { $0.count }, 1, "once per episode: \(problems.withLock { $0 })")
        XCTAssertTrue(problems.withLock { $0 }.first?.hasPrefix("destination segment: HTTP 401") == true)
        XCTAssertTrue(problems.withLock { $0 }.first?.contains("Invalid write key") == true)
        XCTAssertEqual(aggregator.diagnostics.trackerProblems, 1)
        let told = entries.all.withLock { $0 }.filter {
            if case .trackerProblem = $0.fate { true } else { false }
        }
        XCTAssertEqual(told.map(\.event.name), ["destination/segment"])
        XCTAssertEqual(tracker.diagnostics.delivered, 0, "nothing was dropped either")
    }
}
