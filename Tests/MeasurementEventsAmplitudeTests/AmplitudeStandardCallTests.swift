import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsAmplitude
@testable import MeasurementEventsHTTP

/// Exact bodies of the standard calls (``StandardCallSamples``), each field traced to the vendor's documentation.
final class AmplitudeStandardCallTests: XCTestCase {
    private let encoder = AmplitudeEncoder(apiKey: "API_KEY")

    func testScreenView() {
        // amplitude.com/docs/sdks/analytics/ios/ios-swift-sdk, "Autocapture", screen views: event type
        // "[Amplitude] Screen Viewed" with the "[Amplitude] Screen Name" event property.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.screen),
            #"{"api_key":"API_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"[Amplitude] Screen Name":"Feed","screen_class":"FeedViewController","tab":"home"},"event_type":"[Amplitude] Screen Viewed","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000011","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566601000,"user_id":"user-42"}]}"#
        )
    }

    func testOrder() {
        // amplitude.com/docs/apis/analytics/http-v2, "Keys for the event argument": "price", "quantity",
        // "productId", "revenueType", "currency"; amplitude.com/docs/data/sources/instrument-track-revenue,
        // "Revenue properties": they describe one product. Two products: one "Product Purchased" revenue event
        // per product (Segment's Amplitude destination, "Track Revenue Per Product"), insert_id "<id>-<index>",
        // with "revenue" = price × quantity ("required if you wish the revenue event to appear in a Revenue LTV chart");
        // the order keeps the total (0.5 exactly) and currency as event properties, not as the revenue key.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.order),
            #"{"api_key":"API_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"currency":"EUR","event_type":"activity","order_id":"T-1001","product_count":2,"revenue":0.5},"event_type":"order/completed","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000012","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566602000,"user_id":"user-42"},{"app_version":"2.4.1","currency":"EUR","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"name":"Sticker","order_id":"T-1001"},"event_type":"Product Purchased","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000012-0","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","price":0.1,"productId":"sku-1","quantity":3,"revenue":0.3,"revenueType":"purchase","session_id":1714566000000,"time":1714566602000,"user_id":"user-42"},{"app_version":"2.4.1","currency":"EUR","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"order_id":"T-1001"},"event_type":"Product Purchased","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000012-1","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","price":0.2,"productId":"sku-2","quantity":1,"revenue":0.2,"revenueType":"purchase","session_id":1714566000000,"time":1714566602000,"user_id":"user-42"}]}"#
        )
    }

    func testRefund() {
        // amplitude.com/docs/data/sources/instrument-track-revenue, "Revenue properties": "$price" and "$revenue"
        // "can be negative", "$revenueType" e.g. "refund"; the quantity stays a positive count.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.refund),
            #"{"api_key":"API_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"event_type":"activity","order_id":"T-1001","product_count":1},"event_type":"order/completed","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000016","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566606000,"user_id":"user-42","currency":"EUR","price":-0.1,"productId":"sku-1","quantity":3,"revenue":-0.3,"revenueType":"refund"}]}"#
        )
    }

    func testRefundFromTheGeneratedCatalog() {
        // The generated OrderCompleted carries no product lines: the negative revenue alone, with revenueType refund.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.catalogRefund),
            #"{"api_key":"API_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"event_type":"activity","order_id":"T-1001","product_count":0},"event_type":"order/completed","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000019","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566609000,"user_id":"user-42","currency":"EUR","revenue":-0.5,"revenueType":"refund"}]}"#
        )
    }
    func testARefusedProductEventNamesItsOrder() {
        // Amplitude's 400 names events by their index in the request: the product events come after the batch.
        let events = [StandardCallSamples.order, StandardCallSamples.alias]
        let response = HTTPResponse(
            status: 400, headers: [:],
            body: Array(
                #"{"code":400,"events_with_invalid_fields":{"price":[3]},"events_with_missing_fields":{"x":[9]}}"#.utf8)
        )
        // 9 is no index of the request's four events: returned as it is, the uploader reports it
        // and drops nothing for it.
        XCTAssertEqual(encoder.refusedEvents(in: response, of: events), [0, 9])
    }

    func testLargeOrder() {
        // Same keys for one product: "price", "productId", "quantity", "revenue" (= price × quantity).
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.largeOrder),
            #"{"api_key":"API_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"event_type":"activity","order_id":"T-1002","product_count":1},"event_type":"order/completed","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000013","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566603000,"user_id":"user-42","currency":"JPY","price":12345678901234567.89,"productId":"yacht","quantity":1,"revenue":12345678901234567.89}]}"#
        )
    }

    func testAlias() {
        // No alias in the HTTP V2 API (merging is the User Mapping API, amplitude.com/docs/apis/analytics/user-mapping):
        // a plain event with previous_id and user_id.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.alias),
            #"{"api_key":"API_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"event_type":"activity","previous_id":"anon-1234","user_id":"user-42"},"event_type":"user/aliased","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000014","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566604000,"user_id":"user-42"}]}"#
        )
    }

    func testCampaignContext() {
        // The campaign as user properties ("user_properties": {"$set": …}, http-v2 and the Identify API) named
        // as Amplitude's attribution tracking names them (ios-swift-sdk, "Track marketing attribution").
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.campaignTrack),
            #"{"api_key":"API_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"event_type":"activity","source":"deep_link","utm_campaign":"spring","utm_medium":"email","utm_source":"newsletter"},"event_type":"feed/opened","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000015","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566605000,"user_id":"user-42","user_properties":{"$set":{"utm_campaign":"spring","utm_medium":"email","utm_source":"newsletter"}}}]}"#
        )
    }

    func testError() {
        // amplitude.com/docs/apis/analytics/http-v2: a plain event ("event_type", "event_properties"); no vendor has an error call. The message is here because the sample opted in.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.error),
            #"{"api_key":"API_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"context":"feed/refresh","error_code":-1001,"error_domain":"NSURLErrorDomain","error_type":"URLError","event_type":"activity","message":"The request timed out."},"event_type":"error/occurred","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000017","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566607000,"user_id":"user-42"}]}"#
        )
    }

    func testTimedEvent() {
        // amplitude.com/docs/apis/analytics/http-v2: a plain event ("event_type", "event_properties") with the "duration" property, in seconds.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.timed),
            #"{"api_key":"API_KEY","events":[{"app_version":"2.4.1","device_id":"anon-1234","device_manufacturer":"Apple","device_model":"iPhone15,2","event_properties":{"duration":42.5,"event_type":"activity"},"event_type":"checkout/completed","groups":{"group":"acme"},"insert_id":"00000000-0000-4000-8000-000000000018","language":"en-US","os_name":"iOS","os_version":"17.2.1","platform":"iOS","session_id":1714566000000,"time":1714566608000,"user_id":"user-42"}]}"#
        )
    }
}
