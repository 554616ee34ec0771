import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsGA4
import XCTest

@testable import MeasurementEventsHTTP

/// An order whose args do not check out (no StandardEventsProcessor installed) goes as a plain
/// event: the encoders never write an amount they could not verify as a number.
final class StandardCallFallbackTests: XCTestCase {
    private let badOrder = StandardCallSamples.queued(
        "order/completed",
        args: [
            "revenue": "NaN", "currency": "EUR", "product_count": 1, "products.0.product_id": "a",
            "products.0.price": "NaN", "products.0.quantity": 1,
        ], id: 6, at: 6)

    func testSegmentSendsAnUnverifiedOrderAsAPlainTrackWithTextAmounts() {
        let body = EncoderSamples.body(SegmentEncoder(writeKey: "k"), badOrder)
        XCTAssertTrue(body.contains(#""event":"order/completed""#), body)
        XCTAssertTrue(body.contains(#""revenue":"NaN""#), body)
        XCTAssertFalse(body.contains("Order Completed"), body)
    }

    func testGA4SendsAnUnverifiedOrderAsAPlainEventNotPurchase() {
        let body = EncoderSamples.body(GA4Encoder(measurementID: "G-TEST", apiSecret: "s"), badOrder)
        XCTAssertTrue(body.contains(#""name":"order_completed""#), body)
        XCTAssertFalse(body.contains("purchase"), body)
        XCTAssertTrue(body.contains(#""revenue":"NaN""#), body)
    }

    func testAmplitudeSendsNoRevenueFieldsForAnUnverifiedOrder() {
        let body = EncoderSamples.body(AmplitudeEncoder(apiKey: "k"), badOrder)
        XCTAssertTrue(body.contains(#""revenue":"NaN""#), "as text, among the event properties: \(body)")
        XCTAssertTrue(body.hasSuffix(#""user_id":"user-42"}]}"#), "no revenue fields after the event's own: \(body)")
    }
}
