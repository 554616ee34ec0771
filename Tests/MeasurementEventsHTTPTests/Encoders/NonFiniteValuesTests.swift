import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsGA4
import MeasurementEventsOTLP
import XCTest

@testable import MeasurementEventsHTTP

/// NaN and ±infinity never make an encoder write what its wire format cannot carry.
final class NonFiniteValuesTests: XCTestCase {
    private let events: [QueuedEvent] = {
        var event = MeasurementEvent(
            "sensor/read", args: ["ratio": .double(.nan), "peak": .double(.infinity), "low": .double(-.infinity)])
        event.attribution = EventAttribution(identity: EventIdentity(userID: "user-42", anonymousID: "anon-1234"))
        return [QueuedEvent(event: event)]
    }()

    private func parsedBody(_ encoder: any BatchEncoder) throws -> (body: [String: Any], adaptations: [String]) {
        let encoded = encoder.encode(events, context: EncoderTestContext.value)
        let body = try XCTUnwrap(encoded.request?.body)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], "valid JSON")
        return (object, encoded.adaptations.map(\.description))
    }

    func testJSONVendorsGetNullAndAnAdaptation() throws {
        let encoders: [any BatchEncoder] = [
            SegmentEncoder(writeKey: "key"), AmplitudeEncoder(apiKey: "key"),
            GA4Encoder(measurementID: "G-1", apiSecret: "s"),
        ]
        for encoder in encoders {
            let (body, adaptations) = try parsedBody(encoder)
            XCTAssertFalse("\(body)".contains("nan"), "\(encoder)")
            XCTAssertTrue(
                adaptations.contains(#"sensor/read: non-finite number in "low", "peak", "ratio" sent as null"#),
                "\(adaptations)")
        }
        let (segment, _) = try parsedBody(SegmentEncoder(writeKey: "key"))
        let properties = try XCTUnwrap(((segment["batch"] as? [[String: Any]])?.first)?["properties"] as? [String: Any])
        XCTAssertTrue(properties["ratio"] is NSNull)
    }

    func testOTLPSendsTheSpellingAsAStringAttribute() throws {
        let encoded = OTLPLogsEncoder(baseURL: URL(string: "https://otel.example.com")!)
            .encode(events, context: EncoderTestContext.value)
        let text = String(decoding: try XCTUnwrap(encoded.request?.body), as: UTF8.self)
        XCTAssertTrue(text.contains(#"{"key":"ratio","value":{"stringValue":"NaN"}}"#), text)
        XCTAssertTrue(text.contains(#"{"key":"peak","value":{"stringValue":"Infinity"}}"#), text)
        XCTAssertTrue(text.contains(#"{"key":"low","value":{"stringValue":"-Infinity"}}"#), text)
        XCTAssertFalse(text.contains("doubleValue"), "no receiver sees a non-finite doubleValue")
        XCTAssertEqual(encoded.adaptations.count, 1)
    }

    func testFiniteValuesAreNoAdaptation() {
        var event = MeasurementEvent("sensor/read", args: ["ratio": .double(0.5)])
        event.attribution = EventAttribution(identity: EventIdentity(anonymousID: "anon-1234"))
        XCTAssertEqual(NonFiniteValues.adaptations(in: [QueuedEvent(event: event)], sentAs: "null"), [])
    }
}
