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

/// Requests per 10,000 events queued and then sent (a backlog), each encoder with its default
/// limits, against the loopback collector: every request wakes a phone's radio, so each is filled
/// up to the vendor's documented size limit. Each request stays within that limit. Steady use is
/// `RequestsInSteadyUseTests`'.
final class RequestsPerTenThousandEventsTests: LoopbackTestCase {
    /// An event as an app sends it: a few args, an identity, a session and a full context.
    private func events(_ count: Int) -> [MeasurementEvent] {
        (0..<count).map { index in
            var event = MeasurementEvent(
                "feed/item_tapped", type: .click, category: "feed",
                args: ["index": .int(index), "item_id": .string("item-\(index % 500)"), "position": .int(index % 20)])
            event.attribution = EncoderSamples.attribution
            return event
        }
    }

    /// Sends `count` events through a tracker with `encoder`; returns the requests the collector received.
    private func run(_ encoder: any BatchEncoder, count: Int = 10_000) throws -> [LoopbackCollector.Request] {
        var configuration = testConfiguration()
        configuration.flushPolicies = [ManualFlushPolicy()]
        let tracker = try HTTPTracker(encoder: encoder, directory: directory, configuration: configuration)
        for event in events(count) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 120))
        XCTAssertEqual(tracker.diagnostics.delivered, count)
        if encoder is SegmentEncoder { XCTAssertEqual(Set(receivedIndices(collector.requests)), Set(0..<count)) }
        let requests = collector.requests
        let payload = requests.reduce(0) { $0 + $1.body.count }
        let wire = requests.reduce(0) { $0 + $1.wireBody.count }
        print(
            "\(type(of: encoder)): \(requests.count) requests per \(count) events; largest payload "
                + "\(requests.map(\.body.count).max() ?? 0) bytes; \(payload / count) bytes per event before gzip, "
                + "\(wire / count) on the wire")
        return requests
    }

    func testAPayloadLimitIsFilledClosely() throws {
        let limits = BatchLimits(maximumEvents: 2_000, maximumBytes: 20_000)
        let requests = try run(
            SegmentEncoder(writeKey: "key", baseURL: collector.baseURL, limits: limits), count: 1_000)
        let payload = requests.reduce(0) { $0 + $1.body.count }
        XCTAssertTrue(requests.allSatisfy { $0.body.count <= 20_000 })
        // Filled to about 95 % (a body cut in proportion spares 5 %), across the queue's files (of
        // 20 KB on disk): at most a fifth more requests than the bytes need.
        XCTAssertLessThanOrEqual(requests.count, payload / 20_000 * 12 / 10 + 2)
    }

    func testAWireLimitIsMeasuredAfterGzip() throws {
        let limits = BatchLimits(maximumEvents: 2_000, maximumBytes: 4_000, measure: .wire)
        let requests = try run(OTLPLogsEncoder(baseURL: collector.baseURL, limits: limits), count: 1_000)
        XCTAssertTrue(requests.allSatisfy { $0.isGzip && $0.wireBody.count <= 4_000 })
        XCTAssertTrue(requests.contains { $0.body.count > 4_000 }, "the payload may exceed a limit on the wire")
        let wire = requests.reduce(0) { $0 + $1.wireBody.count }
        XCTAssertLessThanOrEqual(requests.count, wire / 4_000 * 12 / 10 + 2)
    }

    func testSegmentFillsRequestsUpToItsLimit() throws {
        let requests = try run(SegmentEncoder(writeKey: "key", baseURL: collector.baseURL))
        XCTAssertLessThanOrEqual(requests.count, 20, "Segment's own SDK needs 20")
        // Segment: 500 KB per batch request (twilio.com/docs/segment/connections/sources/catalog/libraries/server/http-api, "Max request size").
        for request in requests { XCTAssertLessThanOrEqual(request.body.count, 500_000) }
        XCTAssertTrue(requests.allSatisfy(\.isGzip))
    }

    func testAmplitudeFillsRequestsUpToItsLimit() throws {
        let requests = try run(AmplitudeEncoder(apiKey: "key", baseURL: collector.baseURL))
        XCTAssertLessThanOrEqual(requests.count, 20)
        for request in requests {
            XCTAssertLessThan(request.body.count, 1_000_000)
            let body = try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
            XCTAssertLessThan((body?["events"] as? [Any])?.count ?? 0, 2_000)
        }
    }

    func testGA4SendsItsTwentyFiveEventsPerRequest() throws {
        let requests = try run(
            GA4Encoder(measurementID: "G-TEST", apiSecret: "secret", baseURL: collector.baseURL, validation: .off))
        XCTAssertEqual(requests.count, 400)
        for request in requests { XCTAssertLessThan(request.body.count, 130_000) }
    }

    func testOTLPFillsRequestsUpToItsDefaultLimit() throws {
        let requests = try run(OTLPLogsEncoder(baseURL: collector.baseURL))
        XCTAssertLessThanOrEqual(requests.count, 10)
        for request in requests { XCTAssertLessThanOrEqual(request.body.count, 1_000_000) }
    }
}
