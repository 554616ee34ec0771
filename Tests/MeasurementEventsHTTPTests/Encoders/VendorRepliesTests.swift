import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsOTLP
import XCTest

@testable import MeasurementEventsHTTP

/// What the vendors' replies say beyond the status: OTLP's partial success and retryable codes,
/// Amplitude's silenced events and devices. Against the loopback collector.
final class VendorRepliesTests: LoopbackTestCase {
    private func otlpTracker(_ clock: TestClock = TestClock(runsImmediately: true)) throws -> HTTPTracker {
        try HTTPTracker(
            encoder: OTLPLogsEncoder(baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(clock: clock, flushAt: 1_000))
    }

    private func amplitudeTracker() throws -> HTTPTracker {
        try HTTPTracker(
            encoder: AmplitudeEncoder(apiKey: "key", baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(flushAt: 1_000))
    }

    func testOTLPPartialSuccessCountsTheRejectedRecordsAsRefused() throws {
        collector.script([
            .status(200, body: #"{"partialSuccess":{"rejectedLogRecords":"3","errorMessage":"3 records too old"}}"#)
        ])
        let tracker = try otlpTracker()
        for event in numbered(10) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.delivered, 7)
        XCTAssertEqual(diagnostics.refusedEvents, 3)
        let report = try XCTUnwrap(diagnostics.recentProblems.last)
        XCTAssertTrue(report.contains("refused 3 of its 10 events"), report)
        XCTAssertTrue(report.contains("The collector said: 3 records too old"), report)
    }

    func testOTLPPartialSuccessWithNonsenseCountsIsReportedWithoutACrash() throws {
        let encoder = OTLPLogsEncoder(baseURL: collector.baseURL)
        func partial(_ body: String) -> PartialRefusal? {
            encoder.partialRefusal(in: HTTPResponse(status: 200, body: Array(body.utf8)), ofEventCount: 10)
        }
        XCTAssertNil(partial(""))
        XCTAssertNil(partial("{}"))
        XCTAssertNil(partial("not json"))
        XCTAssertNil(partial(#"{"partialSuccess":{}}"#))
        XCTAssertEqual(partial(#"{"partial_success":{"rejected_log_records":2}}"#)?.refused, 2)
        let negative = try XCTUnwrap(partial(#"{"partialSuccess":{"rejectedLogRecords":"-4"}}"#))
        XCTAssertEqual(negative.refused, 0)
        XCTAssertTrue(negative.message.contains("not a count"), negative.message)
        let huge = try XCTUnwrap(partial(#"{"partialSuccess":{"rejectedLogRecords":"99999999999999999999999"}}"#))
        XCTAssertEqual(huge.refused, 0)
        let word = try XCTUnwrap(partial(#"{"partialSuccess":{"rejectedLogRecords":"many","errorMessage":"x"}}"#))
        XCTAssertTrue(word.message.contains("\"many\""), word.message)
        let tooMany = try XCTUnwrap(partial(#"{"partialSuccess":{"rejectedLogRecords":50}}"#))
        XCTAssertEqual(tooMany.refused, 10)
        XCTAssertTrue(tooMany.message.contains("more than the 10 records sent"), tooMany.message)
        let warning = try XCTUnwrap(partial(#"{"partialSuccess":{"rejectedLogRecords":"0","errorMessage":"slow"}}"#))
        XCTAssertEqual(warning.refused, 0)

        collector.script([.status(200, body: #"{"partialSuccess":{"rejectedLogRecords":-1}}"#)])
        let tracker = try otlpTracker()
        for event in numbered(5) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.delivered, 5)
        XCTAssertTrue(tracker.diagnostics.recentProblems.last?.contains("not a count") == true)
    }

    func testOTLPRetriesOnlyTheCodesTheSpecificationNames() {
        let encoder = OTLPLogsEncoder(baseURL: collector.baseURL)
        for status in [429, 502, 503, 504] { XCTAssertTrue(encoder.retries(HTTPResponse(status: status)), "\(status)") }
        for status in [400, 408, 500, 501, 505] {
            XCTAssertFalse(encoder.retries(HTTPResponse(status: status)), "\(status)")
        }
        let segment = SegmentEncoder(writeKey: "k", baseURL: collector.baseURL)
        for status in [408, 429, 500, 501] { XCTAssertTrue(segment.retries(HTTPResponse(status: status)), "\(status)") }
    }

    func testAnOTLPCollectorAnswering500ToOnePayloadDoesNotBlockTheQueue() throws {
        collector.respond { request in request.bodyText.contains("\"intValue\":\"3\"") ? .status(500) : nil }
        let tracker = try otlpTracker()
        for event in numbered(8) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.retries, 0)
        XCTAssertEqual(diagnostics.refusedEvents, 1)
        XCTAssertEqual(diagnostics.delivered, 7)
    }

    func testOTLP503HonoursRetryAfter() throws {
        collector.script([LoopbackCollector.Reply(status: 503, headers: ["Retry-After": "42"])])
        let clock = TestClock(runsImmediately: true)
        let tracker = try otlpTracker(clock)
        for event in numbered(4) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(clock.scheduledDelays, [42])
        XCTAssertEqual(tracker.diagnostics.delivered, 4)
    }

    func testAmplitudeSilencedEventsAndDevicesAreDroppedWithoutSplitting() throws {
        collector.script([
            .status(
                400,
                body: #"{"code":400,"error":"Events silenced for device_id","silenced_devices":["device-b"],"#
                    + #""silenced_events":[1]}"#)
        ])
        let tracker = try amplitudeTracker()
        for index in 0..<6 {
            var event = MeasurementEvent("test/numbered", args: ["index": .int(index)])
            let device = index >= 4 ? "device-b" : "device-a"
            event.attribution = EventAttribution(identity: EventIdentity(anonymousID: device))
            try tracker.track(event)
        }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.refusedEvents, 3)  // position 1, and 4 and 5 of device-b
        XCTAssertEqual(diagnostics.delivered, 3)
        XCTAssertEqual(diagnostics.splitRequests, 0)
        XCTAssertEqual(diagnostics.requests, 2)
        let resent = try XCTUnwrap(collector.requests.last)
        let body = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(resent.body)) as? [String: Any])
        let indices = (body["events"] as? [[String: Any]])?.compactMap {
            ($0["event_properties"] as? [String: Any])?["index"] as? Int
        }
        XCTAssertEqual(indices, [0, 2, 3])
    }

    func testAmplitudeIndicesOutOfRangeAreReportedAndNothingElseIsDropped() throws {
        collector.script([
            .status(400, body: #"{"code":400,"events_with_invalid_fields":{"time":[2,17]},"silenced_events":[-1]}"#)
        ])
        let tracker = try amplitudeTracker()
        for event in numbered(4) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.refusedEvents, 1)
        XCTAssertEqual(diagnostics.delivered, 3)
        XCTAssertEqual(diagnostics.splitRequests, 0)
        let report = try XCTUnwrap(diagnostics.recentProblems.first { $0.contains("did not have") })
        XCTAssertTrue(report.contains("-1, 17"), report)
    }

    func testAmplitudeNamingEveryEventDropsThemWithoutSplitting() throws {
        collector.script([.status(400, body: #"{"code":400,"silenced_events":[0,1,2]}"#)])
        let tracker = try amplitudeTracker()
        for event in numbered(3) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.refusedEvents, 3)
        XCTAssertEqual(tracker.diagnostics.requests, 1)
    }

    func testAmplitudeInvalidKeyRepliesRefuseTheConfiguration() {
        let encoder = AmplitudeEncoder(apiKey: "k", baseURL: collector.baseURL)
        func refuses(_ status: Int, _ body: String) -> Bool {
            encoder.refusesConfiguration(HTTPResponse(status: status, body: Array(body.utf8)))
        }
        XCTAssertTrue(refuses(400, #"{"code":400,"error":"Invalid API key"}"#))
        XCTAssertTrue(refuses(400, #"{"code":400,"error":"Request missing required field","missing_field":"api_key"}"#))
        XCTAssertTrue(refuses(401, ""))
        XCTAssertFalse(refuses(400, #"{"code":400,"events_with_invalid_fields":{"time":[0]}}"#))
        XCTAssertFalse(refuses(400, "<html>bad</html>"))
    }
}
