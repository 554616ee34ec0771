import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsStandard
import XCTest

@testable import MeasurementEventsGA4
@testable import MeasurementEventsHTTP

/// GA4 stream kinds, the backdating window and purchase de-duplication, each field traced to
/// Google's documentation (developers.google.com/analytics/devguides/collection/protocol/ga4).
final class GA4StreamTests: XCTestCase {
    private let instanceID = "0123456789abcdef0123456789abcdef"

    private func appEncoder() throws -> GA4Encoder {
        try GA4Encoder(
            stream: .app(firebaseAppID: "1:1234567890:ios:abcdef", appInstanceID: instanceID), apiSecret: "SECRET")
    }

    func testAppStreamSendsFirebaseAppIDAndAppInstanceID() throws {
        // sending-events, "Key request components by stream type": firebase_app_id in the URL and
        // app_instance_id in the body for an app stream (no client_id).
        let encoded = try appEncoder().encode([StandardCallSamples.alias], context: EncoderTestContext.value)
        let request = try XCTUnwrap(encoded.request)
        XCTAssertEqual(
            request.url.absoluteString,
            "https://www.google-analytics.com/mp/collect?firebase_app_id=1:1234567890:ios:abcdef&api_secret=SECRET")
        let body = String(decoding: request.body, as: UTF8.self)
        XCTAssertTrue(
            body.hasPrefix(#"{"app_instance_id":"0123456789abcdef0123456789abcdef","user_id":"user-42""#), body)
        XCTAssertFalse(body.contains("client_id"), body)
    }

    func testAppStreamSendsScreenViewsAsTheCustomEventScreenViewed() throws {
        // The Measurement Protocol reserves screen_view (reference, "Reserved names"; the validator answers
        // NAME_RESERVED): the custom event screen_viewed with screen_name and screen_class, as on a web stream.
        let body = EncoderSamples.body(try appEncoder(), StandardCallSamples.screen)
        XCTAssertTrue(
            body.contains(
                #"{"name":"screen_viewed","params":{"engagement_time_msec":1,"event_type":"activity","screen_class":"FeedViewController","screen_name":"Feed","session_id":"1714566000000","tab":"home"}"#
            ), body)
    }

    func testAnAppInstanceIDThatIsNot32HexDigitsIsAnErrorAtInit() {
        // reference, app_instance_id: the Firebase SDK's id, 32 hexadecimal digits.
        for bad in [
            "0123456789abcdef", "0123456789abcdef0123456789abcdeg", "0123456789abcdef-0123456789abcdef",
            "é" + String(repeating: "a", count: 31),
        ] {
            XCTAssertThrowsError(
                try GA4Encoder(stream: .app(firebaseAppID: "1:1:ios:a", appInstanceID: bad), apiSecret: "s"), bad
            ) { error in
                let message = String(describing: error)
                XCTAssertTrue(message.contains("32 hexadecimal digits"), message)
                XCTAssertTrue(message.contains(bad), message)
            }
        }
        XCTAssertNoThrow(
            try GA4Encoder(
                stream: .app(firebaseAppID: "1:1:ios:a", appInstanceID: "0123456789ABCDEF0123456789abcdef"),
                apiSecret: "s"))
    }

    func testAScreenWithManyPropertiesStaysWithin25Params() throws {
        var screen = StandardCallSamples.screen
        for index in 0..<30 { screen.event.args["property_\(index)"] = .int(index) }
        let body = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(EncoderSamples.body(try appEncoder(), screen).utf8))
                as? [String: Any])
        let params = try XCTUnwrap((body["events"] as? [[String: Any]])?.first?["params"] as? [String: Any])
        XCTAssertEqual(params.count, 25)
        XCTAssertEqual(params["screen_name"] as? String, "Feed")
        XCTAssertEqual(params["screen_class"] as? String, "FeedViewController")
        XCTAssertNotNil(params["session_id"])
        XCTAssertNotNil(params["engagement_time_msec"])
    }

    func testIdentifyCallsAloneSendNoRequestAndTheirTraitsGoWithTheNextEvent() throws {
        // The validator requires at least one event (events: minItems 1).
        let encoder = GA4Encoder(measurementID: "G-1", apiSecret: "s")
        let alone = encoder.encode([EncoderSamples.identify, EncoderSamples.group], context: context)
        XCTAssertNil(alone.request)
        XCTAssertEqual(alone.adaptations.count, 2)
        XCTAssertTrue(alone.adaptations[0].reason.contains("user_properties with the user's next event"))
        XCTAssertEqual(encoder.requestEntryCount(of: [EncoderSamples.identify, EncoderSamples.group]), 0)
        let body = EncoderSamples.body(encoder, EncoderSamples.track)
        XCTAssertTrue(body.contains(#""user_properties":{"group_employees""#), body)
        XCTAssertTrue(body.contains(#""plan":{"value":"pro"}"#), body)
    }

    func testAnAppStreamWithoutItsInstanceIDIsAnErrorAtInit() {
        XCTAssertThrowsError(
            try GA4Encoder(stream: .app(firebaseAppID: "1:1234567890:ios:abcdef", appInstanceID: ""), apiSecret: "s")
        ) { error in
            let message = String(describing: error)
            XCTAssertTrue(message.contains("app instance id"), message)
            XCTAssertTrue(message.contains("Analytics.appInstanceID()"), message)
        }
        XCTAssertThrowsError(try GA4Encoder(stream: .app(firebaseAppID: "", appInstanceID: instanceID), apiSecret: "s"))
        XCTAssertThrowsError(try GA4Encoder(stream: .web(measurementID: ""), apiSecret: "s"))
        XCTAssertNoThrow(try GA4Encoder(stream: .web(measurementID: "G-1"), apiSecret: "s"))
    }

    func testEventsOlderThan72HoursAreLeftOutAndCountedApart() throws {
        // reference, timestamp_micros: events may be backdated up to 72 hours.
        let encoder = GA4Encoder(measurementID: "G-1", apiSecret: "s")
        let sentAt = EncoderTestContext.value.sentAt
        var old = StandardCallSamples.alias
        old.event.timestamp = sentAt.addingTimeInterval(-GA4Encoder.backdatingWindow - 1)
        var edge = StandardCallSamples.error
        edge.event.timestamp = sentAt.addingTimeInterval(-GA4Encoder.backdatingWindow)
        let encoded = encoder.encode([old, edge], context: EncoderTestContext.value)
        XCTAssertEqual(encoded.expired.map(\.event), ["user/aliased"])
        XCTAssertTrue(encoded.expired[0].reason.contains("72-hour"), encoded.expired[0].reason)
        XCTAssertTrue(encoded.rejected.isEmpty)
        let body = String(decoding: encoded.request?.body ?? [], as: UTF8.self)
        XCTAssertFalse(body.contains("user_aliased"), body)
        XCTAssertTrue(body.contains("error_occurred"), body)

        let allOld = encoder.encode([old], context: EncoderTestContext.value)
        XCTAssertNil(allOld.request)
        XCTAssertEqual(allOld.expired.count, 1)
    }

    func testPurchaseWithoutOrderIDGetsTransactionIDFromTheEventID() throws {
        // developers.google.com/analytics/devguides/collection/ga4/reference/events#purchase: transaction_id;
        // GA4 de-duplicates purchases with the same transaction_id (support.google.com/analytics/answer/12313109).
        var order = StandardCallSamples.order
        order.event.args["order_id"] = nil
        XCTAssertNotNil(try? Order(validating: order.event), "still an order")
        let encoder = GA4Encoder(measurementID: "G-1", apiSecret: "s")
        let first = encoder.encode([order], context: EncoderTestContext.value)
        let again = encoder.encode([order], context: BatchContext(sentAt: EncoderTestContext.value.sentAt + 60))
        let body = String(decoding: first.request?.body ?? [], as: UTF8.self)
        XCTAssertTrue(body.contains(#""transaction_id":"00000000-0000-4000-8000-000000000012""#), body)
        XCTAssertEqual(first.request?.body, again.request?.body, "a retry sends the same transaction_id")
        XCTAssertTrue(first.adaptations.contains { $0.reason.contains("transaction_id derived") })
    }

    func testCampaignDetailsIsSentOncePerCampaignAndRequest() throws {
        var second = StandardCallSamples.campaignTrack
        second.event.id = UUID()
        var other = StandardCallSamples.campaignTrack
        other.event.args["utm_campaign"] = "summer"
        let body = EncoderSamples.bodyOf(
            GA4Encoder(measurementID: "G-1", apiSecret: "s"), [StandardCallSamples.campaignTrack, second, other])
        XCTAssertEqual(body.components(separatedBy: #""name":"campaign_details""#).count - 1, 2, body)
        XCTAssertFalse(body.contains("utm_"), body)
        XCTAssertFalse(body.contains("campaign_source"), body)
    }
}
