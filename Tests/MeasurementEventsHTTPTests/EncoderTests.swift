import Foundation
import MeasurementEvents
@testable import MeasurementEventsHTTP
import XCTest

/// One event of each type; the first carries every arg type and a personal arg, hashed.
private func sampleBatch() -> [QueuedEvent] {
    let privacy = PersonalDataProcessor(personalArgs: ["email"], treatment: .hash(salt: "salt-1"))
    func id(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-8000-00000000000\(n)")! }
    let tapped = MeasurementEvent(
        "feed/item_tapped", type: .click, category: "feed",
        args: ["item_id": "42", "position": 3, "ratio": 0.5, "promoted": true, "email": "jane@example.com"],
        label: "Feed Item Tapped", id: id(1), timestamp: Date(timeIntervalSince1970: 1_714_566_600.5))
    let events = [
        privacy.process(tapped)!,
        MeasurementEvent("feed/item_shown", type: .impression, id: id(2), timestamp: Date(timeIntervalSince1970: 1_714_566_601.25)),
        MeasurementEvent("app/launched", type: .activity, id: id(3), timestamp: Date(timeIntervalSince1970: 1_714_566_602)),
        MeasurementEvent("web/redirected", type: .redirect, id: id(4), timestamp: Date(timeIntervalSince1970: 1_714_566_603)),
        MeasurementEvent("settings/saved", type: .userAction, id: id(5), timestamp: Date(timeIntervalSince1970: 1_714_566_604)),
    ]
    return events.map { QueuedEvent(event: $0, userID: "user-42") }
}

private let context = BatchContext(anonymousID: "anon-1234", sentAt: Date(timeIntervalSince1970: 1_714_566_610))

final class SegmentEncoderTests: XCTestCase {
    func testBatchBecomesTrackCallsWithMessageIDsAndBasicAuth() throws {
        let encoded = SegmentEncoder(writeKey: "WRITE_KEY").encode(sampleBatch(), context: context)
        let request = try XCTUnwrap(encoded.request)
        XCTAssertEqual(request.url.absoluteString, "https://api.segment.io/v1/batch")
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.headers, ["Authorization": "Basic V1JJVEVfS0VZOg==", "Content-Type": "application/json"])
        XCTAssertEqual(String(decoding: request.body, as: UTF8.self), #"{"batch":[{"anonymousId":"anon-1234","context":{"library":{"name":"MeasurementEventsHTTP","version":"1.0.0"}},"event":"Feed Item Tapped","messageId":"00000000-0000-4000-8000-000000000001","properties":{"category":"feed","email":"sha256:41278b42cbc7630764121402901b1f51d4f61e23539fb20bdda56058f4ce108f","event_type":"click","item_id":"42","position":3,"promoted":true,"ratio":0.5},"timestamp":"2024-05-01T12:30:00.500Z","type":"track","userId":"user-42"},{"anonymousId":"anon-1234","context":{"library":{"name":"MeasurementEventsHTTP","version":"1.0.0"}},"event":"feed/item_shown","messageId":"00000000-0000-4000-8000-000000000002","properties":{"event_type":"impression"},"timestamp":"2024-05-01T12:30:01.250Z","type":"track","userId":"user-42"},{"anonymousId":"anon-1234","context":{"library":{"name":"MeasurementEventsHTTP","version":"1.0.0"}},"event":"app/launched","messageId":"00000000-0000-4000-8000-000000000003","properties":{"event_type":"activity"},"timestamp":"2024-05-01T12:30:02.000Z","type":"track","userId":"user-42"},{"anonymousId":"anon-1234","context":{"library":{"name":"MeasurementEventsHTTP","version":"1.0.0"}},"event":"web/redirected","messageId":"00000000-0000-4000-8000-000000000004","properties":{"event_type":"redirect"},"timestamp":"2024-05-01T12:30:03.000Z","type":"track","userId":"user-42"},{"anonymousId":"anon-1234","context":{"library":{"name":"MeasurementEventsHTTP","version":"1.0.0"}},"event":"settings/saved","messageId":"00000000-0000-4000-8000-000000000005","properties":{"event_type":"user_action"},"timestamp":"2024-05-01T12:30:04.000Z","type":"track","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#)
        XCTAssertTrue(encoded.rejected.isEmpty)
        XCTAssertFalse(String(decoding: request.body, as: UTF8.self).contains("jane@example.com"))
    }

    func testBaseURLKeepsItsPathForProxies() {
        let encoder = SegmentEncoder(writeKey: "k", baseURL: URL(string: "https://proxy.example.com/segment/")!)
        XCTAssertEqual(encoder.endpoint.absoluteString, "https://proxy.example.com/segment/v1/batch")
    }

    func testCallOver32KBIsRejectedWithReasonAndOthersAreSent() throws {
        let big = MeasurementEvent("big/event", args: ["blob": .string(String(repeating: "x", count: 40_000))])
        let encoded = SegmentEncoder(writeKey: "k").encode(
            [QueuedEvent(event: big), QueuedEvent(event: MeasurementEvent("small/event"))], context: context)
        XCTAssertEqual(encoded.rejected.map(\.event), ["big/event"])
        XCTAssertTrue(encoded.rejected[0].reason.contains("32000"), encoded.rejected[0].reason)
        let body = String(decoding: try XCTUnwrap(encoded.request).body, as: UTF8.self)
        XCTAssertTrue(body.contains("small/event"))
        XCTAssertFalse(body.contains("big/event"))
    }
}

final class AmplitudeEncoderTests: XCTestCase {
    func testBatchCarriesAPIKeyInsertIDsAndDeviceID() throws {
        let encoded = AmplitudeEncoder(apiKey: "AMP_KEY").encode(sampleBatch(), context: context)
        let request = try XCTUnwrap(encoded.request)
        XCTAssertEqual(request.url.absoluteString, "https://api2.amplitude.com/2/httpapi")
        XCTAssertEqual(request.headers, ["Accept": "*/*", "Content-Type": "application/json"])
        XCTAssertEqual(String(decoding: request.body, as: UTF8.self), #"{"api_key":"AMP_KEY","events":[{"device_id":"anon-1234","event_properties":{"category":"feed","email":"sha256:41278b42cbc7630764121402901b1f51d4f61e23539fb20bdda56058f4ce108f","event_type":"click","item_id":"42","position":3,"promoted":true,"ratio":0.5},"event_type":"Feed Item Tapped","insert_id":"00000000-0000-4000-8000-000000000001","time":1714566600500,"user_id":"user-42"},{"device_id":"anon-1234","event_properties":{"event_type":"impression"},"event_type":"feed/item_shown","insert_id":"00000000-0000-4000-8000-000000000002","time":1714566601250,"user_id":"user-42"},{"device_id":"anon-1234","event_properties":{"event_type":"activity"},"event_type":"app/launched","insert_id":"00000000-0000-4000-8000-000000000003","time":1714566602000,"user_id":"user-42"},{"device_id":"anon-1234","event_properties":{"event_type":"redirect"},"event_type":"web/redirected","insert_id":"00000000-0000-4000-8000-000000000004","time":1714566603000,"user_id":"user-42"},{"device_id":"anon-1234","event_properties":{"event_type":"user_action"},"event_type":"settings/saved","insert_id":"00000000-0000-4000-8000-000000000005","time":1714566604000,"user_id":"user-42"}]}"#)
        XCTAssertTrue(encoded.adaptations.isEmpty)
    }

    func testUserIDShorterThanFiveCharactersIsLeftOutAndCounted() throws {
        let encoded = AmplitudeEncoder(apiKey: "k").encode(
            [QueuedEvent(event: MeasurementEvent("a/b"), userID: "abc")], context: context)
        XCTAssertFalse(String(decoding: try XCTUnwrap(encoded.request).body, as: UTF8.self).contains("user_id"))
        XCTAssertEqual(encoded.adaptations.count, 1)
    }

    func testA400ThatNamesEventsGivesTheirPositions() {
        let reply = HTTPResponse(status: 400, body: Array(#"""
            {"code": 400, "error": "Request missing required field",
             "events_with_invalid_fields": {"time": [3, 1], "device_id": [1]},
             "events_with_missing_fields": {"event_type": [0]}}
            """#.utf8))
        XCTAssertEqual(AmplitudeEncoder(apiKey: "k").refusedEvents(in: reply, of: sampleBatch()), [0, 1, 3])
    }

    func testIndicesThatAreNotPositionsOfTheBatchAreIgnored() {
        let reply = HTTPResponse(status: 400, body: Array(#"""
            {"events_with_invalid_fields": {"time": [-1, 5, 1.5, true, "2", 99999999999999999999, 4]}}
            """#.utf8))
        XCTAssertEqual(AmplitudeEncoder(apiKey: "k").refusedEvents(in: reply, of: sampleBatch()), [4])
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
}

final class GA4EncoderTests: XCTestCase {
    private let encoder = GA4Encoder(measurementID: "G-TEST123", apiSecret: "SECRET")

    func testBatchGoesToCollectWithClientIDAndGA4Names() throws {
        let encoded = encoder.encode(sampleBatch(), context: context)
        let request = try XCTUnwrap(encoded.request)
        XCTAssertEqual(
            request.url.absoluteString,
            "https://www.google-analytics.com/mp/collect?measurement_id=G-TEST123&api_secret=SECRET")
        XCTAssertEqual(request.headers, ["Content-Type": "application/json"])
        XCTAssertEqual(String(decoding: request.body, as: UTF8.self), #"{"client_id":"anon-1234","user_id":"user-42","events":[{"name":"feed_item_tapped","params":{"category":"feed","email":"sha256:41278b42cbc7630764121402901b1f51d4f61e23539fb20bdda56058f4ce108f","event_type":"click","item_id":"42","position":3,"promoted":"true","ratio":0.5},"timestamp_micros":1714566600500000},{"name":"feed_item_shown","params":{"event_type":"impression"},"timestamp_micros":1714566601250000},{"name":"app_launched","params":{"event_type":"activity"},"timestamp_micros":1714566602000000},{"name":"web_redirected","params":{"event_type":"redirect"},"timestamp_micros":1714566603000000},{"name":"settings_saved","params":{"event_type":"user_action"},"timestamp_micros":1714566604000000}]}"#)
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
        XCTAssertEqual(params.count, 25)
        XCTAssertEqual((params["long"] as? String)?.count, 100)
        XCTAssertEqual(params["my_param"] as? Int, 2)
        XCTAssertNil(params["ga_secret"])
        XCTAssertTrue(encoded.adaptations.contains { $0.reason.contains("params dropped") })
        XCTAssertTrue(encoded.adaptations.contains { $0.reason.contains("cut to 100") })
        XCTAssertTrue(encoded.adaptations.contains { $0.reason.contains("ga_secret") })
    }

    func testNeverMoreThan25EventsPerRequest() {
        let encoder = GA4Encoder(measurementID: "G", apiSecret: "s", limits: BatchLimits(maximumEvents: 100, maximumBytes: 1_000_000))
        XCTAssertEqual(encoder.limits, BatchLimits(maximumEvents: 25, maximumBytes: 130_000))
    }
}
