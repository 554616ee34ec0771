import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsAmplitude
@testable import MeasurementEventsHTTP

// Fields traced to Amplitude's documentation (amplitude.com/docs/apis/analytics):
// - api_key, events; user_id, device_id, event_type, time, event_properties, insert_id,
//   session_id (-1: no session), app_version, platform, os_name, os_version, device_model,
//   device_manufacturer, language, groups, group_properties, user_properties: http-v2,
//   "Upload request" and "Keys for the event argument".
// - $identify with user_properties {"$set": …}: identify, "User property operations".
//   $groupidentify with group_properties {"$set": …}: group-identify, "Request".
final class AmplitudeEncoderTests: XCTestCase {
    private let fullEncoder = AmplitudeEncoder(apiKey: "AMP_KEY")

    func testTrackWithFullContext() {
        XCTAssertEqual(
            EncoderSamples.body(fullEncoder, EncoderSamples.track),
            #"{"api_key":"AMP_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"category":"feed","event_type":"click","item_id":"42","position":3},"event_type":"Feed Item Tapped","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000001","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566600500,"user_id":"user-42"}]}"#
        )
    }

    func testAnIPadAppOnAMacIsSentAsMacOS() {
        let body = EncoderSamples.body(fullEncoder, EncoderSamples.trackOnAMac)
        XCTAssertTrue(body.contains(#""device_model":"iMac21,1""#), body)
        XCTAssertTrue(body.contains(#""os_name":"macOS","os_version":"14.2.1","platform":"macOS""#), body)
    }

    func testIdentifyWithFullContext() {
        XCTAssertEqual(
            EncoderSamples.body(fullEncoder, EncoderSamples.identify),
            #"{"api_key":"AMP_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_type":"$identify","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000002","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566601000,"user_id":"user-42","user_properties":{"$set":{"plan":"pro","seats":3}}}]}"#
        )
    }

    func testGroupWithFullContext() {
        XCTAssertEqual(
            EncoderSamples.body(fullEncoder, EncoderSamples.group),
            #"{"api_key":"AMP_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_type":"$groupidentify","group_properties":{"$set":{"employees":120,"name":"Acme Inc"}},"groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000003","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566602000,"user_id":"user-42"}]}"#
        )
    }

    func testBatchCarriesAPIKeyInsertIDsAndDeviceID() throws {
        let encoded = AmplitudeEncoder(apiKey: "AMP_KEY").encode(sampleBatch(), context: context)
        let request = try XCTUnwrap(encoded.request)
        XCTAssertEqual(request.url.absoluteString, "https://api2.amplitude.com/2/httpapi")
        XCTAssertEqual(request.headers, ["Accept": "*/*", "Content-Type": "application/json"])
        XCTAssertEqual(
            String(decoding: request.body, as: UTF8.self),
            #"{"api_key":"AMP_KEY","events":[{"device_id":"anon-1234","event_properties":{"category":"feed","email":"sha256:41278b42cbc7630764121402901b1f51d4f61e23539fb20bdda56058f4ce108f","event_type":"click","item_id":"42","position":3,"promoted":true,"ratio":0.5},"event_type":"Feed Item Tapped","insert_id":"00000000-0000-4000-8000-000000000001","session_id":-1,"time":1714566600500,"user_id":"user-42"},{"device_id":"anon-1234","event_properties":{"event_type":"impression"},"event_type":"feed/item_shown","insert_id":"00000000-0000-4000-8000-000000000002","session_id":-1,"time":1714566601250,"user_id":"user-42"},{"device_id":"anon-1234","event_properties":{"event_type":"activity"},"event_type":"app/launched","insert_id":"00000000-0000-4000-8000-000000000003","session_id":-1,"time":1714566602000,"user_id":"user-42"},{"device_id":"anon-1234","event_properties":{"event_type":"redirect"},"event_type":"web/redirected","insert_id":"00000000-0000-4000-8000-000000000004","session_id":-1,"time":1714566603000,"user_id":"user-42"},{"device_id":"anon-1234","event_properties":{"event_type":"user_action"},"event_type":"settings/saved","insert_id":"00000000-0000-4000-8000-000000000005","session_id":-1,"time":1714566604000,"user_id":"user-42"}]}"#
        )
        XCTAssertTrue(encoded.adaptations.isEmpty)
    }

    func testUserIDShorterThanFiveCharactersIsLeftOutAndCounted() throws {
        let encoded = AmplitudeEncoder(apiKey: "k").encode(
            [QueuedEvent(event: withUser("abc", MeasurementEvent("a/b")))], context: context)
        XCTAssertFalse(String(decoding: try XCTUnwrap(encoded.request).body, as: UTF8.self).contains("user_id"))
        XCTAssertEqual(encoded.adaptations.count, 1)
    }

    func testA400ThatNamesEventsGivesTheirPositions() {
        let reply = HTTPResponse(
            status: 400,
            body: Array(
                #"""
                {"code": 400, "error": "Request missing required field",
                 "events_with_invalid_fields": {"time": [3, 1], "device_id": [1]},
                 "events_with_missing_fields": {"event_type": [0]}}
                """#.utf8))
        XCTAssertEqual(AmplitudeEncoder(apiKey: "k").refusedEvents(in: reply, of: sampleBatch()), [0, 1, 3])
    }

    /// Whole-number indices are returned even when the request had no such position: the
    /// uploader reports those and drops nothing for them. Other entries are ignored.
    func testOnlyWholeNumberIndicesAreReturned() {
        let reply = HTTPResponse(
            status: 400,
            body: Array(
                #"""
                {"events_with_invalid_fields": {"time": [-1, 5, 1.5, true, "2", 99999999999999999999, 4]}}
                """#.utf8))
        XCTAssertEqual(AmplitudeEncoder(apiKey: "k").refusedEvents(in: reply, of: sampleBatch()), [-1, 5, 4])
    }

    func testAReplyThatNamesNoEventGivesNil() {
        let encoder = AmplitudeEncoder(apiKey: "k")
        for (status, body) in [
            (400, #"{"code": 400, "error": "Invalid API key"}"#),
            (400, #"{"events_with_invalid_fields": {"time": []}}"#),
            (400, #"{"events_with_invalid_fields": [1, 2]}"#),
            (400, #"{"events_with_invalid_fields": {"time": [1, 2"#),
            (400, "<html>Bad Request</html>"),
            (403, #"{"events_with_invalid_fields": {"time": [1]}}"#),
        ] {
            XCTAssertNil(
                encoder.refusedEvents(in: HTTPResponse(status: status, body: Array(body.utf8)), of: sampleBatch()),
                "\(status) \(body)")
        }
    }

    func testRequestsOfMoreThanThirtyEventsGoToTheBatchAPI() throws {
        // amplitude.com/docs/faq/api-choice and http-api-batching-retries: the Batch Event Upload API for
        // historical data and more than 30 events a second of one device; same body.
        let thirty = Array(repeating: EncoderSamples.track, count: 30)
        let request = try XCTUnwrap(fullEncoder.encode(thirty, context: context).request)
        XCTAssertEqual(request.url.absoluteString, "https://api2.amplitude.com/2/httpapi")
        let backlog = try XCTUnwrap(fullEncoder.encode(thirty + [EncoderSamples.track], context: context).request)
        XCTAssertEqual(backlog.url.absoluteString, "https://api2.amplitude.com/batch")
        XCTAssertEqual(AmplitudeEncoder.defaultLimits.maximumEvents, 1_000)
    }

    func testA429NamingThrottledDevicesWaitsThirtySecondsAndADailyQuotaAnHour() {
        func reply(_ status: Int, _ body: String) -> HTTPResponse {
            HTTPResponse(status: status, headers: [:], body: Array(body.utf8))
        }
        let events = [EncoderSamples.track]
        // amplitude.com/docs/apis/analytics/http-v2, "429 response": throttled_devices, throttled_users,
        // exceeded_daily_quota_devices, exceeded_daily_quota_users.
        XCTAssertEqual(
            fullEncoder.retryDelay(
                after: reply(
                    429, #"{"code":429,"eps_threshold":30,"throttled_devices":{"anon-1234":31},"throttled_events":[0]}"#
                ),
                of: events), 30)
        XCTAssertEqual(
            fullEncoder.retryDelay(after: reply(429, #"{"throttled_users":{"user-42":40}}"#), of: events), 30)
        XCTAssertEqual(
            fullEncoder.retryDelay(
                after: reply(429, #"{"exceeded_daily_quota_devices":{"anon-1234":500001}}"#), of: events),
            3_600)
        XCTAssertNil(fullEncoder.retryDelay(after: reply(429, #"{"throttled_devices":{}}"#), of: events))
        XCTAssertNil(fullEncoder.retryDelay(after: reply(429, "slow down"), of: events))
        XCTAssertNil(fullEncoder.retryDelay(after: reply(503, #"{"throttled_devices":{"a":1}}"#), of: events))
    }
}

/// A server's events, each posted in its own request context (or none), through an aggregator:
/// each body carries its event's own user and the context's attributes (RequestContextSamples).
extension AmplitudeEncoderTests {
    func testEachEventOfARequestContextCarriesItsOwnUserAndAttributes() {
        let bodies = RequestContextSamples.bodies(fullEncoder)
        XCTAssertEqual(bodies.count, 3)
        let expected: [[String]] = [
            [
                #""user_id":"alice-1""#,
                #""device_id":"anon-alice""#,
                #""tenant":"acme""#,
                #""request_id":"r-1""#,
            ],
            [
                #""user_id":"bob-22""#,
                #""device_id":"anon-bob""#,
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
