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

/// Requests an hour for an app that posts steadily (issue 48): with the default policies (20
/// events, or 30 seconds after an event was queued) a request carries what the interval or the
/// count gathered, whatever the vendor's limits; filling requests by bytes pays only for a
/// backlog (`RequestsPerTenThousandEventsTests`). Beside ours, Segment's SDK defaults as
/// analytics-swift implements them: `CountBasedFlushPolicy` (20 events since the last flush) and
/// `IntervalBasedFlushPolicy`, a timer that repeats every 30 seconds from the start (its
/// `QueueTimer`), here a flush the test makes every 30 seconds of the manual clock.
final class RequestsInSteadyUseTests: LoopbackTestCase {
    private enum Policies {
        /// `HTTPTracker.Configuration()`'s own.
        case ours
        /// Segment's SDK defaults: 20 events since the last flush, and a flush every 30 s.
        case segmentSDK
    }

    /// Requests made in one hour of the manual clock by an app posting one event every `period`
    /// seconds, from 0 s on; each upload is answered before the clock moves on, as a loopback
    /// server answers within milliseconds. Events and timers due at the same second: the timer
    /// first.
    private func requestsInAnHour(
        _ encoder: any BatchEncoder, period: TimeInterval, policies: Policies = .ours
    ) throws -> (requests: Int, events: Int) {
        let clock = TestClock(runsImmediately: false)
        var configuration = HTTPTracker.Configuration()
        configuration.clock = clock
        configuration.logHandler = { _ in }
        if policies == .segmentSDK { configuration.flushPolicies = [CountFlushPolicy(count: 20)] }
        let directory = self.directory.appendingPathComponent(UUID().uuidString)
        let tracker = try HTTPTracker(encoder: encoder, directory: directory, configuration: configuration)
        let before = collector.requests.count
        var second: TimeInterval = 0
        var posted = 0
        while second <= 3_600 {
            if policies == .segmentSDK, second > 0, second.truncatingRemainder(dividingBy: 30) == 0 {
                try tracker.flush()
            }
            settle(tracker)
            if second < 3_600, second.truncatingRemainder(dividingBy: period) == 0 {
                var event = MeasurementEvent(
                    "feed/item_shown", type: .activity,
                    args: ["index": .int(posted), "item_id": .string("item-\(posted % 97)")])
                event.attribution = EncoderSamples.attribution
                try tracker.track(event)
                posted += 1
                settle(tracker)
            }
            second += 1
            clock.advance(by: 1)
        }
        settle(tracker)
        XCTAssertEqual(tracker.diagnostics.delivered + tracker.diagnostics.queued, posted)
        return (collector.requests.count - before, posted)
    }

    /// Waits (real time, bounded) until the uploader has taken what it was asked and no request
    /// is on the wire: the answer of a loopback server, not a timed expectation.
    private func settle(_ tracker: HTTPTracker) {
        let deadline = Date().addingTimeInterval(10)
        while tracker.uploader.activity.requestInFlight, Date() < deadline { usleep(100) }
    }

    private func encoders() -> [(String, any BatchEncoder)] {
        [
            ("Segment", SegmentEncoder(writeKey: "key", baseURL: collector.baseURL)),
            ("Amplitude", AmplitudeEncoder(apiKey: "key", baseURL: collector.baseURL)),
            (
                "GA4",
                GA4Encoder(measurementID: "G-TEST", apiSecret: "secret", baseURL: collector.baseURL, validation: .off)
            ),
            ("OTLP", OTLPLogsEncoder(baseURL: collector.baseURL)),
        ]
    }

    /// Requests an hour with one event every `period` seconds, for each encoder with our
    /// defaults and for Segment's SDK defaults, printed for Benchmarks/README.md.
    private func assertRequestsInAnHour(period: TimeInterval, expected: Int, _ why: String) throws {
        for (vendor, encoder) in encoders() {
            let ours = try requestsInAnHour(encoder, period: period)
            print(
                "one event every \(Int(period)) s, an hour (\(ours.events) events): \(vendor) \(ours.requests) requests"
            )
            XCTAssertEqual(ours.requests, expected, "\(vendor): \(why)")
        }
        let segment = try requestsInAnHour(
            SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), period: period, policies: .segmentSDK)
        print("one event every \(Int(period)) s, an hour: Segment's SDK defaults \(segment.requests) requests")
        XCTAssertEqual(segment.requests, expected, "Segment's SDK defaults: \(why)")
    }

    func testOneEventEveryThreeSecondsMakesOneRequestAnIntervalForEveryVendorAsSegmentsSDKDoes() throws {
        try assertRequestsInAnHour(period: 3, expected: 120, "10 events a request, one every 30 seconds")
    }

    func testOneEventASecondMakesARequestAtTwentyEventsAndAtTheInterval() throws {
        try assertRequestsInAnHour(period: 1, expected: 240, "20 events, then the 10 the interval gathered")
    }
}
