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
        while !tracker.uploader.isIdle { usleep(500) }
        XCTAssertEqual(tracker.diagnostics.delivered, 50)
        XCTAssertEqual(
            server.seen.acceptedRealTimeRequests, 2,
            "25 events a request: the HTTP V2 API; \(collector.requests.map { "\($0.target) \($0.body.count)" })")
    }
}
