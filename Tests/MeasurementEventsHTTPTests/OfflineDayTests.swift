import EncoderTestSupport
import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsGA4
import MeasurementEventsOTLP
import XCTest

@testable import MeasurementEventsHTTP

/// Issue 48: a device that was offline for a day comes back online. Per vendor, against a
/// loopback server that enforces the vendor's documented limits, with a manual clock: every
/// event is delivered or counted with the vendor's reason, and the upload never stalls.
final class OfflineDayTests: LoopbackTestCase {
    private func tracker(_ encoder: any BatchEncoder, clock: TestClock) throws -> HTTPTracker {
        var configuration = testConfiguration(clock: clock, flushAt: 100_000)
        configuration.maximumQueuedEvents = 100_000
        return try HTTPTracker(encoder: encoder, directory: directory, configuration: configuration)
    }

    /// Whether the uploader went idle with `delivered` events delivered (within 10 s of real time).
    private func waitUntilIdle(_ tracker: HTTPTracker, delivered: Int) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if tracker.diagnostics.delivered >= delivered && tracker.uploader.isIdle { return true }
            usleep(500)
        }
        return false
    }

    func testAmplitudeReceivesTheDayThroughTheBatchAPIWithinItsLimits() throws {
        let clock = TestClock(runsImmediately: false)
        let server = AmplitudeServer(now: { clock.now() })
        collector.playAmplitude(server)
        let tracker = try tracker(AmplitudeEncoder(apiKey: "key", baseURL: collector.baseURL), clock: clock)
        let outcome = try OfflineDay.run(OfflineDay.items(endingAt: clock.now()), through: tracker, clock: clock)
        print("Amplitude, a day offline: \(outcome); server: \(server.seen.replies)")

        XCTAssertFalse(outcome.stalled, "\(outcome)")
        let seen = server.seen
        XCTAssertEqual(outcome.diagnostics.delivered, OfflineDay.count)
        // 5,000 queued events, 2 of them identify calls ($identify), and 6 product events of the
        // two orders of three products: each kept once.
        XCTAssertEqual(seen.events.count, OfflineDay.count + 6)
        XCTAssertEqual(seen.events.values.filter { $0 == "$identify" }.count, 2)
        XCTAssertEqual(seen.replies[413, default: 0], 0, "no request over 2,000 events or 1 MB")
        XCTAssertLessThanOrEqual(seen.largestRequest, 1_000, "at most a second of /batch's 1,000 events per device")
        XCTAssertEqual(
            seen.acceptedBatchRequests + seen.acceptedRealTimeRequests + seen.replies[429, default: 0],
            outcome.diagnostics.requests)
        XCTAssertGreaterThanOrEqual(seen.acceptedBatchRequests, 5, "the backlog goes to /batch")
        // Revenue: each product of both orders, and the refund as negative revenue.
        let products = seen.revenue.filter { $0.value["productId"]?.hasPrefix("sku-") == true }
        XCTAssertEqual(products.count, 6 + 1)
        XCTAssertEqual(products.values.filter { $0["revenueType"] == "refund" }.map { $0["revenue"] }, ["-19.98"])
    }

    func testAmplitudeThrottledDevicesWaitThirtySecondsBeforeTheRequestGoesAgain() throws {
        let clock = TestClock(runsImmediately: false)
        let server = AmplitudeServer(now: { clock.now() })
        server.realTimeEventsPerSecond = 1  // 30 events in the 30-second window
        collector.playAmplitude(server)
        let tracker = try tracker(AmplitudeEncoder(apiKey: "key", baseURL: collector.baseURL), clock: clock)
        for event in numbered(25) { try tracker.track(event) }
        try tracker.flush()
        XCTAssertTrue(collector.waitForRequests(1, timeout: 10))
        // The first request done with before the next events are queued (a flush still under way
        // would send the first of them on their own).
        XCTAssertTrue(waitUntilIdle(tracker, delivered: 25))
        for event in numbered(25, from: 25) { try tracker.track(event) }
        try tracker.flush()
        XCTAssertTrue(collector.waitForRequests(2, timeout: 10))
        while tracker.uploader.activity.requestInFlight { usleep(500) }
        XCTAssertEqual(server.seen.replies[429], 1, "25 + 25 events in 30 seconds: the second request is throttled")
        XCTAssertEqual(clock.scheduledDelays.last, AmplitudeEncoder.throttlePause)
        clock.advance(by: 29)
        XCTAssertEqual(collector.requests.count, 2, "nothing sent again before the pause is over")
        clock.advance(by: 1)
        XCTAssertTrue(collector.waitForRequests(3, timeout: 10))
        XCTAssertTrue(waitUntilIdle(tracker, delivered: 50))
        XCTAssertEqual(
            server.seen.acceptedRealTimeRequests, 2,
            "25 events a request: the HTTP V2 API; \(collector.requests.map { "\($0.target) \($0.body.count)" })")
    }

    func testGA4ReceivesTheDayAsItsValidatorWantsIt() throws {
        let clock = TestClock(runsImmediately: false)
        let server = GA4Server(carriesCampaign: { event in
            ((event["params"] as? [String: Any])?["index"] as? Int).map { $0 > 100 } ?? false
        })
        collector.playGA4(server)
        let encoder = try GA4Encoder(
            stream: .app(firebaseAppID: "1:1234:ios:abcd", appInstanceID: "0123456789abcdef0123456789abcdef"),
            apiSecret: "s", baseURL: collector.baseURL, validation: .off)
        let tracker = try tracker(encoder, clock: clock)
        let items = OfflineDay.items(endingAt: clock.now())
        let outcome = try OfflineDay.run(items, through: tracker, clock: clock)
        let seen = server.seen
        print("GA4, a day offline: \(outcome); server: \(seen.requests) requests, \(seen.flaggedRequests) flagged")

        XCTAssertFalse(outcome.stalled, "\(outcome)")
        XCTAssertEqual(seen.flaggedRequests, 0, "\(seen.messages)")
        XCTAssertEqual(seen.requests, outcome.diagnostics.requests)
        XCTAssertLessThanOrEqual(seen.largestRequest, 25)
        XCTAssertLessThanOrEqual(seen.largestParams, 25)
        XCTAssertEqual(seen.campaignRequestsWithoutDetails, 0, "every request of the campaign's events carries it")
        // As few requests as GA4's rules allow: one user a request (the identify at 200 changes
        // it) and 25 entries, the campaign's details among them. Items 0–99: 25 events a request;
        // 100–199: 24 and the campaign; from 200, 4,798 events (the two identify calls go as
        // user_properties) 24 a request. The queue's files of 25 made 394 before (issue 48).
        let fewest = 100 / 25 + (100 + 23) / 24 + (4_798 + 23) / 24
        XCTAssertEqual(seen.requests, fewest)
        XCTAssertEqual(seen.events["screen_viewed"], 3)
        XCTAssertEqual(seen.events["purchase"], 2)
        XCTAssertEqual(seen.events["refund"], 1)
        XCTAssertEqual(seen.events["app_deep_link_opened"], 1)
        // Every tracked event arrives; the identify calls go as user_properties (delivered with the
        // request they fall in, or, alone, with the user's next event: an adaptation).
        let tracked = seen.events.filter { $0.key != "campaign_details" }.values.reduce(0, +)
        XCTAssertEqual(tracked, OfflineDay.count - 2)
        XCTAssertEqual(outcome.diagnostics.rejectedByEncoder + outcome.diagnostics.expiredBeforeSending, 0)
        XCTAssertGreaterThanOrEqual(outcome.diagnostics.delivered, OfflineDay.count - 2)
        // engagement_time_msec as measured when each event was tracked, a day before it was sent:
        // the foreground time since the previous event (8 s after a trip to the background, 34 s
        // after an identify call, which is no event), adding up to the day's foreground time.
        let times = seen.engagementTimes
        XCTAssertEqual(Set(times), [1_000, 8_000, 17_000, 34_000], "\(Set(times))")
        XCTAssertEqual(times.filter { $0 == 8_000 }.count, 100)
        let dayInTheForeground = items.last.flatMap { item -> TimeInterval? in
            guard case .track(let event) = item else { return nil }
            return event.foregroundReading?.foregroundTime
        }
        XCTAssertEqual(times.reduce(0, +), dayInTheForeground.map { Int(($0 * 1000).rounded()) })
    }

    func testSegmentReceivesTheDayWithinItsLimits() throws {
        let clock = TestClock(runsImmediately: false)
        let server = SegmentServer()
        collector.playSegment(server)
        let tracker = try tracker(SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), clock: clock)
        let outcome = try OfflineDay.run(OfflineDay.items(endingAt: clock.now()), through: tracker, clock: clock)
        let seen = server.seen
        print("Segment, a day offline: \(outcome); server: \(seen.replies)")

        XCTAssertFalse(outcome.stalled, "\(outcome)")
        XCTAssertEqual(outcome.diagnostics.delivered, OfflineDay.count)
        XCTAssertEqual(seen.calls.count, OfflineDay.count)
        XCTAssertEqual(seen.replies[400, default: 0], 0, "no call over 32 KB, no batch over 500 KB")
        XCTAssertLessThanOrEqual(seen.largestBody, 500 * 1024)
        let calls = Array(seen.calls.values)
        XCTAssertEqual(calls.filter { $0 == "identify" }.count, 2)
        XCTAssertEqual(calls.filter { $0 == "screen" }.count, 3)
        XCTAssertEqual(calls.filter { $0 == "track Order Completed" }.count, 2)
        XCTAssertEqual(calls.filter { $0 == "track Order Refunded" }.count, 1)
    }

    func testOTLPCountsTheRecordsTheReceiverRefusesInAPartialSuccess() throws {
        let clock = TestClock(runsImmediately: false)
        // The receiver refuses five records (index 999, 1,999 …), as a partial success.
        let server = OTLPServer(rejects: { record in
            OTLPServer.attribute("index", of: record).flatMap { Int($0) }.map { $0 % 1_000 == 999 } ?? false
        })
        collector.playOTLP(server)
        let tracker = try tracker(OTLPLogsEncoder(baseURL: collector.baseURL), clock: clock)
        let outcome = try OfflineDay.run(OfflineDay.items(endingAt: clock.now()), through: tracker, clock: clock)
        let seen = server.seen
        print("OTLP, a day offline: \(outcome); server: \(seen.replies), \(seen.partialSuccesses) partial successes")

        XCTAssertFalse(outcome.stalled, "\(outcome)")
        XCTAssertEqual(outcome.diagnostics.refusedEvents, 5, "counted with the receiver's message")
        XCTAssertEqual(outcome.diagnostics.delivered, OfflineDay.count - 5)
        XCTAssertEqual(seen.records.values.reduce(0, +), OfflineDay.count - 5)
        XCTAssertEqual(seen.records["identify"], 2)
        XCTAssertEqual(seen.refunds, 1)
        XCTAssertTrue(
            outcome.diagnostics.recentProblems.contains { $0.contains("records refused by the test receiver") },
            "\(outcome.diagnostics.recentProblems)")
    }
}
