import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsStandard
import XCTest

@testable import MeasurementEventsHTTP

/// The standard calls end to end: posted on the bus, checked and stamped by the processor,
/// queued, and received by a real HTTP server on loopback as Segment's own calls.
final class StandardCallsThroughAggregatorTests: LoopbackTestCase {
    func testSegmentReceivesScreenOrderAliasAndTheCampaignAsContext() throws {
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(flushAt: 100))
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center,
            filter: EventFilter(allow: ["feed/*"] + MeasurementEventsStandardEvents.allNames.map(EventPattern.init)),
            trackers: [tracker], processors: [StandardEventsProcessor()], configuration: .testing)
        aggregator.start()

        DeepLink(URL(string: "myapp://feed?utm_source=newsletter&utm_campaign=spring")!).post(to: center)
        ScreenView("Feed").post(to: center)
        Order(currency: "EUR", products: [.init(productID: "a", price: Decimal(string: "0.1")!, quantity: 3)])
            .post(to: center)
        Order(currency: "EUX", products: [.init(productID: "b", price: 1)]).post(to: center)  // dropped
        Alias.post(previousID: "anon-1", userID: "user-42", to: center)
        aggregator.waitUntilDelivered()
        aggregator.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 10))

        let calls = try collector.requests.flatMap { request -> [[String: Any]] in
            let body = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            return try XCTUnwrap(body["batch"] as? [[String: Any]])
        }
        XCTAssertEqual(calls.map { $0["type"] as? String }, ["track", "screen", "track", "alias"])
        XCTAssertEqual(
            calls.map { $0["event"] as? String ?? $0["name"] as? String },
            [
                "app/deep_link_opened", "Feed", "Order Completed", nil,
            ])
        for call in calls {
            let campaign = (call["context"] as? [String: Any])?["campaign"] as? [String: String]
            XCTAssertEqual(campaign, ["source": "newsletter", "name": "spring"])
        }
        XCTAssertTrue(
            collector.requests.contains { $0.bodyText.contains(#""revenue":0.3"#) }, "0.1 × 3 sent as 0.3")
    }
}
