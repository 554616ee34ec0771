import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsGA4
@testable import MeasurementEventsHTTP

// Fields traced to Google's documentation (developers.google.com/analytics/devguides/collection/
// protocol/ga4): client_id, user_id, events[].name/params/timestamp_micros: sending-events,
// "Format the request" and reference, "Request body". user_properties {"name": {"value": …}}:
// user-properties, "Example usage". session_id, engagement_time_msec params: sending-events
// ("In order for user activity to display in reports…") and use-cases, "Summary of requirements".
// Name and value limits: sending-events, "Limitations".
final class GA4EncoderTests: XCTestCase {
    private let fullEncoder = GA4Encoder(measurementID: "G-TEST123", apiSecret: "SECRET")

    func testTrackWithFullContext() {
        XCTAssertEqual(
            EncoderSamples.body(fullEncoder, EncoderSamples.track),
            #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}},"device":{"brand":"Apple","category":"mobile","language":"en-US","model":"iPhone15,2","operating_system":"iOS","operating_system_version":"17.2.1"},"events":[{"name":"feed_item_tapped","params":{"category":"feed","engagement_time_msec":1,"event_type":"click","item_id":"42","position":3,"session_id":"1714566000000"},"timestamp_micros":1714566600500000}]}"#
        )
    }

    func testEngagementTimeIsTheMeasuredForegroundTimeWithinOneMillisecondAndThirtyMinutes() throws {
        // use-cases, "Summary of requirements": engagement_time_msec is the time since the previous
        // event; capped at GA4's default session timeout (support.google.com/analytics/answer/12798876).
        func engagementTimes(_ milliseconds: Int64?) throws -> [Int] {
            var events: [QueuedEvent] = []
            for sample in [EncoderSamples.track, StandardCallSamples.screen, StandardCallSamples.order] {
                var queued = sample
                queued.foregroundMillisecondsSincePrevious = milliseconds
                events.append(queued)
            }
            return try events.map { queued in
                let body = try XCTUnwrap(fullEncoder.encode([queued], context: EncoderTestContext.value).request).body
                let root = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
                let event = try XCTUnwrap((root["events"] as? [[String: Any]])?.last)
                return try XCTUnwrap((event["params"] as? [String: Any])?["engagement_time_msec"] as? Int)
            }
        }
        XCTAssertEqual(try engagementTimes(10_000), [10_000, 10_000, 10_000], "an event, a screen, an order")
        XCTAssertEqual(try engagementTimes(0), [1, 1, 1], "at least 1")
        XCTAssertEqual(try engagementTimes(nil), [1, 1, 1], "not measured")
        XCTAssertEqual(try engagementTimes(7_200_000), [1_800_000, 1_800_000, 1_800_000], "at most 30 minutes")
        XCTAssertEqual(GA4Encoder.maximumEngagementTime, 1_800)
    }

    func testIdentifyGoesWithTheNextEvent() throws {
        // No identify or group call in the Measurement Protocol, and no request without events (validator:
        // events minItems 1): alone, nothing is sent; with an event, the traits are its request's user_properties.
        XCTAssertEqual(EncoderSamples.body(fullEncoder, EncoderSamples.identify), "")
        let request = try XCTUnwrap(
            fullEncoder.encode([EncoderSamples.identify, EncoderSamples.track], context: context).request)
        let body = String(decoding: request.body, as: UTF8.self)
        XCTAssertTrue(
            body.hasPrefix(
                #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}}"#
            ), body)
        XCTAssertEqual(body.components(separatedBy: #""name":"#).count - 1, 1, "one event: the track")
    }

    func testGroupGoesWithTheNextEvent() throws {
        // No identify or group call in the Measurement Protocol, and no request without events (validator:
        // events minItems 1): alone, nothing is sent; with an event, the traits are its request's user_properties.
        XCTAssertEqual(EncoderSamples.body(fullEncoder, EncoderSamples.group), "")
        let request = try XCTUnwrap(
            fullEncoder.encode([EncoderSamples.group, EncoderSamples.track], context: context).request)
        let body = String(decoding: request.body, as: UTF8.self)
        XCTAssertTrue(
            body.hasPrefix(
                #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}}"#
            ), body)
        XCTAssertEqual(body.components(separatedBy: #""name":"#).count - 1, 1, "one event: the track")
    }

    private let encoder = GA4Encoder(measurementID: "G-TEST123", apiSecret: "SECRET")

    func testBatchGoesToCollectWithClientIDAndGA4Names() throws {
        let encoded = encoder.encode(sampleBatch(), context: context)
        let request = try XCTUnwrap(encoded.request)
        XCTAssertEqual(
            request.url.absoluteString,
            "https://www.google-analytics.com/mp/collect?measurement_id=G-TEST123&api_secret=SECRET")
        XCTAssertEqual(request.headers, ["Content-Type": "application/json"])
        XCTAssertEqual(
            String(decoding: request.body, as: UTF8.self),
            #"{"client_id":"anon-1234","user_id":"user-42","events":[{"name":"feed_item_tapped","params":{"category":"feed","email":"sha256:41278b42cbc7630764121402901b1f51d4f61e23539fb20bdda56058f4ce108f","engagement_time_msec":1,"event_type":"click","item_id":"42","position":3,"promoted":"true","ratio":0.5},"timestamp_micros":1714566600500000},{"name":"feed_item_shown","params":{"engagement_time_msec":1,"event_type":"impression"},"timestamp_micros":1714566601250000},{"name":"app_launched","params":{"engagement_time_msec":1,"event_type":"activity"},"timestamp_micros":1714566602000000},{"name":"web_redirected","params":{"engagement_time_msec":1,"event_type":"redirect"},"timestamp_micros":1714566603000000},{"name":"settings_saved","params":{"engagement_time_msec":1,"event_type":"user_action"},"timestamp_micros":1714566604000000}]}"#
        )
        XCTAssertEqual(encoded.adaptations.filter { $0.reason.hasPrefix("sent to GA4 as") }.count, 5)
    }

    func testSlashNamesMapToUnderscores() {
        XCTAssertEqual(try GA4Encoder.ga4Name("feed/item_tapped", reservedPrefixes: []).get(), "feed_item_tapped")
        XCTAssertEqual(try GA4Encoder.ga4Name("Feed Item Tapped", reservedPrefixes: []).get(), "Feed_Item_Tapped")
    }

    func testNamesBreakingGA4RulesAreRejectedWithReasons() {
        let names: [EventName] = [
            "session_start", "screen_view", "firebase_thing", "google/x", "ga_custom", "_private", "1st/event",
            EventName(String(repeating: "a", count: 41)),
        ]
        let encoded = encoder.encode(names.map { QueuedEvent(event: MeasurementEvent($0)) }, context: context)
        XCTAssertNil(encoded.request)
        XCTAssertEqual(encoded.rejected.map(\.event), names)
        XCTAssertTrue(encoded.rejected[0].reason.contains("reserved"), encoded.rejected[0].reason)
        XCTAssertTrue(encoded.rejected[6].reason.contains("start with a letter"), encoded.rejected[6].reason)
        XCTAssertTrue(encoded.rejected[7].reason.contains("at most 40"), encoded.rejected[7].reason)
    }

    func testFortyCharacterNameIsAccepted() throws {
        let name = EventName(String(repeating: "a", count: 40))
        let encoded = encoder.encode([QueuedEvent(event: MeasurementEvent(name))], context: context)
        XCTAssertTrue(encoded.rejected.isEmpty)
        XCTAssertNotNil(encoded.request)
    }

    func testParamsAreLimitedTo25AndLongValuesCut() throws {
        var args: EventArgs = ["long": .string(String(repeating: "v", count: 150)), "ga_secret": 1, "my/param": 2]
        for index in 0..<30 { args[String(format: "p%02d", index)] = .int(index) }
        let encoded = encoder.encode([QueuedEvent(event: MeasurementEvent("x/y", args: args))], context: context)
        let body = try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(encoded.request).body)) as! [String: Any]
        let params = ((body["events"] as! [[String: Any]])[0]["params"]) as! [String: Any]
        XCTAssertEqual(params.count, 24, "23 args and engagement_time_msec (no session here)")
        XCTAssertEqual((params["long"] as? String)?.count, 100)
        XCTAssertEqual(params["my_param"] as? Int, 2)
        XCTAssertNil(params["ga_secret"])
        XCTAssertTrue(encoded.adaptations.contains { $0.reason.contains("params dropped") })
        XCTAssertTrue(encoded.adaptations.contains { $0.reason.contains("cut to 100") })
        XCTAssertTrue(encoded.adaptations.contains { $0.reason.contains("ga_secret") })
    }

    func testNeverMoreThan25EventsPerRequest() {
        let encoder = GA4Encoder(
            measurementID: "G", apiSecret: "s", limits: BatchLimits(maximumEvents: 100, maximumBytes: 1_000_000))
        XCTAssertEqual(encoder.limits, BatchLimits(maximumEvents: 25, maximumBytes: 130_000))
    }

    func testAdaptationMessagesQuoteInputWithControlCharactersEscaped() {
        let encoded = encoder.encode(
            [QueuedEvent(event: MeasurementEvent("x/y", args: ["bad\nkey": 1]))], context: context)
        let reasons = encoded.adaptations.map(\.reason)
        XCTAssertTrue(reasons.contains { $0.contains(#""bad\nkey""#) }, "\(reasons)")
        XCTAssertFalse(reasons.contains { $0.contains("\n") }, "one report, one line: \(reasons)")
    }
}

/// A server's events, each posted in its own request context (or none), through an aggregator:
/// each body carries its event's own user and the context's attributes (RequestContextSamples).
extension GA4EncoderTests {
    func testEachEventOfARequestContextCarriesItsOwnUserAndAttributes() {
        let bodies = RequestContextSamples.bodies(fullEncoder)
        XCTAssertEqual(bodies.count, 3)
        let expected: [[String]] = [
            [
                #""user_id":"alice-1""#,
                #""client_id":"anon-alice""#,
                #""tenant":"acme""#,
                #""request_id":"r-1""#,
            ],
            [
                #""user_id":"bob-22""#,
                #""client_id":"anon-bob""#,
                #""tenant":"globex""#,
            ],
            [
                #""user_id":"app-user""#
            ],
        ]
        for (body, fields) in zip(bodies, expected) {
            for field in fields { XCTAssertTrue(body.contains(field), "\(field) not in \(body)") }
        }
        XCTAssertFalse(bodies[0].contains("bob-22") || bodies[1].contains("alice-1"), "\(bodies)")
        XCTAssertFalse(bodies[2].contains(#""tenant""#), "outside any context: no attributes: \(bodies[2])")
    }
}
