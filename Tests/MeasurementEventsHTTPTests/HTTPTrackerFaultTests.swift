import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// Faults around the tracker: a full disk, hostile endpoints, timeouts the platform cannot
/// honour, dropped keep-alive connections, a server with a small request limit, a log handler
/// that reads the diagnostics.
final class HTTPTrackerFaultTests: LoopbackTestCase {
    private func makeTracker(
        _ configuration: HTTPTracker.Configuration = testConfiguration(), maximumEvents: Int = 100
    ) throws -> HTTPTracker {
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(
                writeKey: "k", baseURL: collector.baseURL,
                limits: BatchLimits(maximumEvents: maximumEvents, maximumBytes: 500_000)),
            directory: directory, configuration: configuration)
        try tracker.consentDidChange(to: .granted)
        return tracker
    }

    #if os(Linux)
        func testAFullDiskIsCountedAsFailedWritesWithOneLogLine() throws {
            let logged = LockedValue<[String]>([])
            var configuration = testConfiguration()
            configuration.logHandler = { line in logged.withLock { $0.append(line) } }
            let tracker = try makeTracker(configuration)
            // The next segment the queue opens is /dev/full: every write fails with ENOSPC.
            let segment = directory.appendingPathComponent("queue").appendingPathComponent(QueueFiles.openName(1))
            try FileManager.default.createSymbolicLink(atPath: segment.path, withDestinationPath: "/dev/full")
            var thrown = 0
            for event in numbered(25) {
                do { try tracker.track(event) } catch { thrown += 1 }
            }
            XCTAssertEqual(thrown, 25)
            XCTAssertEqual(tracker.diagnostics.accepted, 0)
            XCTAssertEqual(tracker.diagnostics.failedWrites, 25)
            // The test's queue sits in the temporary directory, which debug builds warn of first.
            let lines = logged.withLock { $0 }.filter { !$0.contains("is inside the temporary directory") }
            XCTAssertEqual(lines.count, 1, "\(lines)")
            XCTAssertTrue(lines.first?.contains("No space left") == true)
        }
    #endif

    func testPlainHTTPGoesOnlyToLoopbackAddressesParsedNotPrefixed() {
        let allowed = [
            "http://127.0.0.1:8080/v1", "http://127.1.2.3/", "http://localhost:9/", "http://[::1]:80/",
            "http://LOCALHOST/", "https://api.segment.io/v1/batch", "https://127.attacker.example/",
        ]
        let refused = [
            "http://127.attacker.example/", "http://127.0.0.1.attacker.example/", "http://128.0.0.1/",
            "http://127.0.0.1./", "http://0127.0.0.1/", "http://127.0.1/", "http://localhost.attacker.example/",
            "http://[::2]/", "http://[::ffff:8.8.8.8]/", "http://api.segment.io/", "ftp://127.0.0.1/",
        ]
        for text in allowed { XCTAssertTrue(HTTPTracker.isAllowedEndpoint(URL(string: text)!), text) }
        for text in refused { XCTAssertFalse(HTTPTracker.isAllowedEndpoint(URL(string: text)!), text) }
    }

    func testASubSecondTimeoutIsRoundedUpAndDeliveryProceeds() throws {
        XCTAssertEqual(URLSessionTransport.honouredTimeout(0.5), 1)
        XCTAssertEqual(URLSessionTransport.honouredTimeout(0.999), 1)
        XCTAssertEqual(URLSessionTransport.honouredTimeout(-3), 1)
        XCTAssertEqual(URLSessionTransport.honouredTimeout(.nan), 1)
        #if canImport(FoundationNetworking)
            XCTAssertEqual(URLSessionTransport.honouredTimeout(2.5), 3)
        #endif
        var configuration = testConfiguration()
        configuration.requestTimeout = 0.5
        let tracker = try makeTracker(configuration)
        for event in numbered(30) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<30))
        XCTAssertEqual(tracker.diagnostics.retries, 0)
    }

    /// A server that closes each connection shortly after answering, without saying so. On
    /// Linux the next request used to go out on the dying connection, be retried by curl on a
    /// fresh one without its body, and hang for the whole timeout.
    func testADroppedKeepAliveConnectionDoesNotStallTheNextRequest() throws {
        collector.dropConnections(after: 0.02)
        let tracker = try makeTracker(testConfiguration(flushAt: 1))
        for event in numbered(10) {
            try tracker.track(event)
            XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        }
        XCTAssertEqual(receivedIndices(collector.requests), Array(0..<10))
        XCTAssertEqual(tracker.diagnostics.retries, 0, "a request timed out")
    }

    func testA413LimitIsRememberedForLaterBatches() throws {
        collector.respond { request in
            segmentCalls([request]).count > 10 ? .status(413, body: "at most 10 events") : nil
        }
        let tracker = try makeTracker()
        for event in numbered(2_000) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 60))
        XCTAssertEqual(receivedIndices(collector.requests.filter { segmentCalls([$0]).count <= 10 }), Array(0..<2_000))
        let requests = collector.requests.count
        print("413 test: \(requests) requests for 2,000 events, at most 10 per request")
        XCTAssertLessThanOrEqual(requests, 215)  // 200 at 10 each, plus the search and a probe
    }

    func testTheSizeGrowsBackAfterManyAcceptedRequests() {
        var learner = RequestSizeLearner(maximum: 100)
        learner.refused(100)
        XCTAssertEqual(learner.next, 50)
        learner.refused(50)
        learner.accepted(25)
        XCTAssertEqual(learner.next, 37)
        learner.refused(37)
        learner.accepted(31)
        learner.accepted(34)
        learner.refused(35)
        XCTAssertEqual(learner.next, 34)
        for _ in 0..<(RequestSizeLearner.probeAfter - 1) { learner.accepted(34) }
        XCTAssertEqual(learner.next, 34)
        learner.accepted(34)
        XCTAssertEqual(learner.next, (34 + 52) / 2)  // probes up to half as much again as refused
    }

    /// Issue 12.4: no log handler runs under the queue's lock (a re-entrant lock deadlocks on
    /// Linux and aborts on Apple platforms).
    func testALogHandlerMayReadTheDiagnostics() throws {
        let box = LockedValue<HTTPTracker?>(nil)
        let seen = LockedValue<[Int]>([])
        // The retry after the first 503 waits for a clock that does not move: the cap, which
        // waits while a request is on the wire, drops while tracking goes on.
        var configuration = testConfiguration(clock: TestClock(runsImmediately: false))
        configuration.maximumQueuedEvents = 100
        configuration.logHandler = { _ in
            guard let tracker = box.withLock({ $0 }) else { return }
            let queued = tracker.diagnostics.queued
            seen.withLock { $0.append(queued) }
        }
        collector.setDefaultReply(.status(503))
        let tracker = try makeTracker(configuration, maximumEvents: 10)
        box.withLock { $0 = tracker }
        let finished = DispatchSemaphore(value: 0)
        Thread {
            // Past the cap: the queue drops the oldest events and logs it.
            for event in numbered(150) { try? tracker.track(event) }
            finished.signal()
        }.start()
        XCTAssertEqual(finished.wait(timeout: .now() + 30), .success, "tracking deadlocked in the log handler")
        // A request still on the wire when tracking ended: the cap catches up at its answer.
        while tracker.uploader.activity.requestInFlight { usleep(1_000) }
        XCTAssertEqual(tracker.diagnostics.droppedAtCap, 50)
        XCTAssertFalse(seen.withLock { $0.isEmpty })
        box.withLock { $0 = nil }
    }
}
