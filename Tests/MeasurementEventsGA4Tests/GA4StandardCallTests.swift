import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsGA4
@testable import MeasurementEventsHTTP

/// Exact bodies of the standard calls (``StandardCallSamples``), each field traced to the vendor's documentation.
final class GA4StandardCallTests: XCTestCase {
    private let encoder = GA4Encoder(measurementID: "G-TEST", apiSecret: "SECRET")

    func testScreenView() {
        // A web stream: GA4 documents no screen event for web streams (support.google.com/analytics/answer/9234069
        // lists screen_view among app streams' events): the custom event screen_viewed, with "screen_name" and
        // "screen_class" as firebase.google.com/docs/analytics/screenviews names them. The device block: the
        // Measurement Protocol reference's "device" (brand, category, language, model, operating_system,
        // operating_system_version).
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.screen),
            #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}},"device":{"brand":"Apple","category":"mobile","language":"en-US","model":"iPhone15,2","operating_system":"iOS","operating_system_version":"17.2.1"},"events":[{"name":"screen_viewed","params":{"engagement_time_msec":1,"event_type":"activity","screen_class":"FeedViewController","screen_name":"Feed","session_id":"1714566000000","tab":"home"},"timestamp_micros":1714566601000000}]}"#
        )
    }

    func testOrder() {
        // developers.google.com/analytics/devguides/collection/ga4/reference/events#purchase: "currency",
        // "transaction_id", "value" and "items" ("item_id", "item_name", "price", "quantity").
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.order),
            #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}},"device":{"brand":"Apple","category":"mobile","language":"en-US","model":"iPhone15,2","operating_system":"iOS","operating_system_version":"17.2.1"},"events":[{"name":"purchase","params":{"currency":"EUR","engagement_time_msec":1,"items":[{"item_id":"sku-1","item_name":"Sticker","price":0.1,"quantity":3},{"item_id":"sku-2","price":0.2,"quantity":1}],"session_id":"1714566000000","transaction_id":"T-1001","value":0.5},"timestamp_micros":1714566602000000}]}"#
        )
    }

    func testLargeOrder() {
        // Same reference; the large amount keeps every digit.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.largeOrder),
            #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}},"device":{"brand":"Apple","category":"mobile","language":"en-US","model":"iPhone15,2","operating_system":"iOS","operating_system_version":"17.2.1"},"events":[{"name":"purchase","params":{"currency":"JPY","engagement_time_msec":1,"items":[{"item_id":"yacht","price":12345678901234567.89,"quantity":1}],"session_id":"1714566000000","transaction_id":"T-1002","value":12345678901234567.89},"timestamp_micros":1714566603000000}]}"#
        )
    }

    func testRefund() {
        // developers.google.com/analytics/devguides/collection/ga4/reference/events#refund: "refund" with
        // "transaction_id" (required), "currency", "value" (the refunded amount) and "items" for a partial refund.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.refund),
            #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}},"device":{"brand":"Apple","category":"mobile","language":"en-US","model":"iPhone15,2","operating_system":"iOS","operating_system_version":"17.2.1"},"events":[{"name":"refund","params":{"currency":"EUR","engagement_time_msec":1,"items":[{"item_id":"sku-1","item_name":"Sticker","price":0.1,"quantity":3}],"session_id":"1714566000000","transaction_id":"T-1001","value":0.3},"timestamp_micros":1714566606000000}]}"#
        )
    }

    func testRefundFromTheGeneratedCatalog() {
        // The generated OrderCompleted carries no product lines: a refund of the whole transaction, without items.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.catalogRefund),
            #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}},"device":{"brand":"Apple","category":"mobile","language":"en-US","model":"iPhone15,2","operating_system":"iOS","operating_system_version":"17.2.1"},"events":[{"name":"refund","params":{"currency":"EUR","engagement_time_msec":1,"session_id":"1714566000000","transaction_id":"T-1001","value":0.5},"timestamp_micros":1714566609000000}]}"#
        )
    }
    func testAlias() {
        // No alias in the Measurement Protocol: a plain event (the name adapted to user_aliased).
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.alias),
            #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}},"device":{"brand":"Apple","category":"mobile","language":"en-US","model":"iPhone15,2","operating_system":"iOS","operating_system_version":"17.2.1"},"events":[{"name":"user_aliased","params":{"engagement_time_msec":1,"event_type":"activity","previous_id":"anon-1234","session_id":"1714566000000","user_id":"user-42"},"timestamp_micros":1714566604000000}]}"#
        )
    }

    func testCampaignContext() {
        // developers.google.com/analytics/devguides/collection/protocol/ga4/reference/events#campaign_details:
        // a campaign_details event (campaign, source, medium, term, content) before the events it applies to;
        // the utm_* args are taken off the event.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.campaignTrack),
            #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}},"device":{"brand":"Apple","category":"mobile","language":"en-US","model":"iPhone15,2","operating_system":"iOS","operating_system_version":"17.2.1"},"events":[{"name":"campaign_details","params":{"campaign":"spring","engagement_time_msec":1,"medium":"email","session_id":"1714566000000","source":"newsletter"},"timestamp_micros":1714566605000000},{"name":"feed_opened","params":{"engagement_time_msec":1,"event_type":"activity","session_id":"1714566000000","source":"deep_link"},"timestamp_micros":1714566605000000}]}"#
        )
    }

    func testError() {
        // developers.google.com/analytics/devguides/collection/protocol/ga4/reference: a plain event (GA4 reserves "error"); no vendor has an error call. The message is here because the sample opted in.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.error),
            #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}},"device":{"brand":"Apple","category":"mobile","language":"en-US","model":"iPhone15,2","operating_system":"iOS","operating_system_version":"17.2.1"},"events":[{"name":"error_occurred","params":{"context":"feed/refresh","engagement_time_msec":1,"error_code":-1001,"error_domain":"NSURLErrorDomain","error_type":"URLError","event_type":"activity","message":"The request timed out.","session_id":"1714566000000"},"timestamp_micros":1714566607000000}]}"#
        )
    }

    func testTimedEvent() {
        // developers.google.com/analytics/devguides/collection/protocol/ga4/reference: a plain event (GA4 reserves "error") with the "duration" property, in seconds.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.timed),
            #"{"client_id":"anon-1234","user_id":"user-42","user_properties":{"group_employees":{"value":120},"group_id":{"value":"acme"},"group_name":{"value":"Acme Inc"},"plan":{"value":"pro"},"seats":{"value":3}},"device":{"brand":"Apple","category":"mobile","language":"en-US","model":"iPhone15,2","operating_system":"iOS","operating_system_version":"17.2.1"},"events":[{"name":"checkout_completed","params":{"duration":42.5,"engagement_time_msec":1,"event_type":"activity","session_id":"1714566000000"},"timestamp_micros":1714566608000000}]}"#
        )
    }
}
