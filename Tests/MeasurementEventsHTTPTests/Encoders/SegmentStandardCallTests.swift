import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// Exact bodies of the standard calls (``StandardCallSamples``), each field traced to the vendor's documentation.
final class SegmentStandardCallTests: XCTestCase {
    private let encoder = SegmentEncoder(writeKey: "WRITE_KEY")

    func testScreenView() {
        // twilio.com/docs/segment/connections/spec/screen: "type": "screen", "name" (the screen's name), "properties"
        // (free-form; screen_class and the screen's properties). Common fields as in SegmentEncoderTests.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.screen),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"messageId":"00000000-0000-4000-8000-000000000011","name":"Feed","properties":{"screen_class":"FeedViewController","tab":"home"},"timestamp":"2024-05-01T12:30:01.000Z","type":"screen","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }

    func testOrder() {
        // twilio.com/docs/segment/connections/spec/ecommerce/v2, "Order Completed": a track call named
        // "Order Completed" with "order_id", "currency", "revenue" and "products" ("product_id", "name",
        // "price", "quantity"). 0.1 × 3 + 0.2 is written 0.5: decimal text, no binary float on the way.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.order),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"event":"Order Completed","messageId":"00000000-0000-4000-8000-000000000012","properties":{"currency":"EUR","order_id":"T-1001","products":[{"name":"Sticker","price":0.1,"product_id":"sku-1","quantity":3},{"price":0.2,"product_id":"sku-2","quantity":1}],"revenue":0.5},"timestamp":"2024-05-01T12:30:02.000Z","type":"track","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }

    func testLargeOrder() {
        // Same spec; a 19-digit amount keeps every digit (a Double would send 12345678901234568).
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.largeOrder),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"event":"Order Completed","messageId":"00000000-0000-4000-8000-000000000013","properties":{"currency":"JPY","order_id":"T-1002","products":[{"price":12345678901234567.89,"product_id":"yacht","quantity":1}],"revenue":12345678901234567.89},"timestamp":"2024-05-01T12:30:03.000Z","type":"track","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }

    func testRefund() {
        // twilio.com/docs/segment/connections/spec/ecommerce/v2, "Order Refunded": a track call named "Order Refunded"
        // with "order_id", "currency", "total" (the refunded amount, positive) and, for a partial refund, "products".
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.refund),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"event":"Order Refunded","messageId":"00000000-0000-4000-8000-000000000016","properties":{"currency":"EUR","order_id":"T-1001","products":[{"name":"Sticker","price":0.1,"product_id":"sku-1","quantity":3}],"total":0.3},"timestamp":"2024-05-01T12:30:06.000Z","type":"track","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }

    func testRefundFromTheGeneratedCatalog() {
        // MeasurementEventsStandardEvents.OrderCompleted with revenue_type refund and no product lines: the same call
        // with the total alone (a refund of the whole order).
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.catalogRefund),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"event":"Order Refunded","messageId":"00000000-0000-4000-8000-000000000019","properties":{"currency":"EUR","order_id":"T-1001","total":0.5},"timestamp":"2024-05-01T12:30:09.000Z","type":"track","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }
    func testAlias() {
        // twilio.com/docs/segment/connections/spec/alias: "type": "alias", "previousId", "userId".
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.alias),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"messageId":"00000000-0000-4000-8000-000000000014","previousId":"anon-1234","timestamp":"2024-05-01T12:30:04.000Z","type":"alias","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }

    func testCampaignContext() {
        // twilio.com/docs/segment/connections/spec/common, "Context fields": "campaign" with "name", "source",
        // "medium" (and "term", "content" when set), from the session's utm_* args, which leave the properties.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.campaignTrack),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"campaign":{"medium":"email","name":"spring","source":"newsletter"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"event":"feed/opened","messageId":"00000000-0000-4000-8000-000000000015","properties":{"event_type":"activity","source":"deep_link"},"timestamp":"2024-05-01T12:30:05.000Z","type":"track","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }

    func testError() {
        // twilio.com/docs/segment/connections/spec/track: a plain track call ("event", "properties"); no vendor has an error call. The message is here because the sample opted in.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.error),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"event":"error/occurred","messageId":"00000000-0000-4000-8000-000000000017","properties":{"context":"feed/refresh","error_code":-1001,"error_domain":"NSURLErrorDomain","error_type":"URLError","event_type":"activity","message":"The request timed out."},"timestamp":"2024-05-01T12:30:07.000Z","type":"track","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }

    func testTimedEvent() {
        // twilio.com/docs/segment/connections/spec/track: a plain track call ("event", "properties") with the "duration" property, in seconds.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.timed),
            #"{"batch":[{"anonymousId":"anon-1234","context":{"app":{"name":"Shop","version":"2.4.1","build":"812","namespace":"com.example.shop"},"device":{"model":"iPhone15,2","manufacturer":"Apple"},"library":{"name":"MeasurementEvents","version":"1.1.0"},"locale":"en-US","os":{"name":"iOS","version":"17.2.1"},"timezone":"Europe/Berlin"},"event":"checkout/completed","messageId":"00000000-0000-4000-8000-000000000018","properties":{"duration":42.5,"event_type":"activity"},"timestamp":"2024-05-01T12:30:08.000Z","type":"track","userId":"user-42"}],"sentAt":"2024-05-01T12:30:10.000Z"}"#
        )
    }
}
