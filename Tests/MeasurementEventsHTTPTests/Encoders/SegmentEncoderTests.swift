import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

// Fields traced to Segment's documentation (twilio.com/docs/segment):
// - anonymousId, userId, messageId, timestamp, type, context: connections/spec/common, "Structure".
// - context.app.name/version/build/namespace, context.device.model/manufacturer, context.os.name/
//   version, context.library.name/version, context.locale, context.timezone: connections/spec/
//   common, "Context fields".
// - event, properties: connections/spec/track. traits: connections/spec/identify, "Traits".
//   groupId, traits (of the group): connections/spec/group.
// - batch, sentAt, Basic auth with the write key: connections/sources/catalog/libraries/server/
//   http-api, "Batch" and "Authentication".
final class SegmentEncoderTests: XCTestCase {
    private let fullEncoder = SegmentEncoder(writeKey: "WRITE_KEY")

    func testTrackWithFullContext() {
        XCTAssertEqual(
            EncoderSamples.body(fullEncoder, EncoderSamples.track),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"event":"Feed Item Tapped","messageId":"00000000-0000-4000-8000-000000000001","properties":{"category":"feed","event_type":"click","item_id":"42","position":3},"timestamp":"2024-05-01T12:30:00.500Z","type":"track","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }

    /// Consent in Segment Connections, "Consent object": `context.consent.categoryPreferences`,
    /// keyed by the workspace's category ids (twilio.com/docs/segment/privacy/consent-management/
    /// consent-in-segment-connections).
    func testPurposesGoAsCategoryPreferencesUnderTheAppsCategories() {
        var queued = EncoderSamples.track
        var attribution = queued.event.attribution!
        attribution.purposeConsents = ["advertising": false, "analytics": true, "surveys": true]
        queued.event.attribution = attribution
        var encoder = SegmentEncoder(writeKey: "WRITE_KEY")
        XCTAssertEqual(encoder.defaultPurposes, [], "Segment's own consent management routes by category")
        XCTAssertTrue(
            EncoderSamples.body(encoder, queued).contains(
                #""consent":{"categoryPreferences":{"advertising":false,"analytics":true,"surveys":true}}"#))
        encoder.consentCategories = [.advertising: "C0004", .analytics: "C0002"]
        let body = EncoderSamples.body(encoder, queued)
        XCTAssertTrue(
            body.contains(#""consent":{"categoryPreferences":{"C0002":true,"C0004":false,"surveys":true}}"#), body)
        XCTAssertFalse(EncoderSamples.body(encoder, EncoderSamples.track).contains("consent"))
    }

    func testAnIPadAppOnAMacIsSentAsMacOS() {
        let body = EncoderSamples.body(fullEncoder, EncoderSamples.trackOnAMac)
        XCTAssertTrue(body.contains(#""device":{"model":"iMac21,1","manufacturer":"Apple"}"#), body)
        XCTAssertTrue(body.contains(#""os":{"name":"macOS","version":"14.2.1"}"#), body)
    }

    func testIdentifyWithFullContext() {
        XCTAssertEqual(
            EncoderSamples.body(fullEncoder, EncoderSamples.identify),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"messageId":"00000000-0000-4000-8000-000000000002","timestamp":"2024-05-01T12:30:01.000Z","traits":{"plan":"pro","seats":3},"type":"identify","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }

    func testGroupWithFullContext() {
        XCTAssertEqual(
            EncoderSamples.body(fullEncoder, EncoderSamples.group),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"groupId":"acme","messageId":"00000000-0000-4000-8000-000000000003","timestamp":"2024-05-01T12:30:02.000Z","traits":{"employees":120,"name":"Acme Inc"},"type":"group","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }

    func testBatchBecomesTrackCallsWithMessageIDsAndBasicAuth() throws {
        let encoded = SegmentEncoder(writeKey: "WRITE_KEY").encode(sampleBatch(), context: context)
        let request = try XCTUnwrap(encoded.request)
        XCTAssertEqual(request.url.absoluteString, "https://api.segment.io/v1/batch")
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(
            request.headers, ["Authorization": "Basic V1JJVEVfS0VZOg==", "Content-Type": "application/json"])
        XCTAssertEqual(
            String(decoding: request.body, as: UTF8.self),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"library":{"name":"MeasurementEventsHTTP","version":"\#(PackageVersion.current)"}},"event":"Feed Item Tapped","messageId":"00000000-0000-4000-8000-000000000001","properties":{"category":"feed","email":"sha256:41278b42cbc7630764121402901b1f51d4f61e23539fb20bdda56058f4ce108f","event_type":"click","item_id":"42","position":3,"promoted":true,"ratio":0.5},"timestamp":"2024-05-01T12:30:00.500Z","type":"track","userId":"user-42"},{"anonymousId":"anon-1234","context":{"library":{"name":"MeasurementEventsHTTP","version":"\#(PackageVersion.current)"}},"event":"feed/item_shown","messageId":"00000000-0000-4000-8000-000000000002","properties":{"event_type":"impression"},"timestamp":"2024-05-01T12:30:01.250Z","type":"track","userId":"user-42"},{"anonymousId":"anon-1234","context":{"library":{"name":"MeasurementEventsHTTP","version":"\#(PackageVersion.current)"}},"event":"app/launched","messageId":"00000000-0000-4000-8000-000000000003","properties":{"event_type":"activity"},"timestamp":"2024-05-01T12:30:02.000Z","type":"track","userId":"user-42"},{"anonymousId":"anon-1234","context":{"library":{"name":"MeasurementEventsHTTP","version":"\#(PackageVersion.current)"}},"event":"web/redirected","messageId":"00000000-0000-4000-8000-000000000004","properties":{"event_type":"redirect"},"timestamp":"2024-05-01T12:30:03.000Z","type":"track","userId":"user-42"},{"anonymousId":"anon-1234","context":{"library":{"name":"MeasurementEventsHTTP","version":"\#(PackageVersion.current)"}},"event":"settings/saved","messageId":"00000000-0000-4000-8000-000000000005","properties":{"event_type":"user_action"},"timestamp":"2024-05-01T12:30:04.000Z","type":"track","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
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

/// A server's events, each posted in its own request context (or none), through an aggregator:
/// each body carries its event's own user and the context's attributes (RequestContextSamples).
extension SegmentEncoderTests {
    func testEachEventOfARequestContextCarriesItsOwnUserAndAttributes() {
        let bodies = RequestContextSamples.bodies(fullEncoder)
        XCTAssertEqual(bodies.count, 3)
        let expected: [[String]] = [
            [
                #""userId":"alice-1""#,
                #""anonymousId":"anon-alice""#,
                #""tenant":"acme""#,
                #""request_id":"r-1""#,
            ],
            [
                #""userId":"bob-22""#,
                #""anonymousId":"anon-bob""#,
                #""tenant":"globex""#,
            ],
            [
                #""userId":"app-user""#
            ],
        ]
        for (body, fields) in zip(bodies, expected) {
            for field in fields { XCTAssertTrue(body.contains(field), "\(field) not in \(body)") }
        }
        XCTAssertFalse(bodies[0].contains("bob-22") || bodies[1].contains("alice-1"), "\(bodies)")
        XCTAssertFalse(bodies[2].contains(#""tenant""#), "outside any context: no attributes: \(bodies[2])")
    }
}
