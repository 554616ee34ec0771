import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsGA4
import MeasurementEventsStandard
import XCTest

@testable import MeasurementEventsHTTP

/// The uploader fills a request up to the vendor's own count of entries
/// (`BatchEncoder.requestEntryCount(of:)`), not the queue's count of events.
final class RequestEntryCountTests: LoopbackTestCase {
    /// An order of `products` products, one cent each.
    private func order(_ products: Int, index: Int) -> MeasurementEvent {
        let order = Order(
            currency: "EUR", orderID: "T-\(index)",
            products: (0..<products).map { .init(productID: "sku-\($0)", price: Decimal(1) / 100) })
        return MeasurementEvent(Order.eventName, type: .activity, args: order.args)
    }

    private func amplitudeEventCounts() -> [Int] {
        collector.requests.map { request in
            let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
            return (body?["events"] as? [Any])?.count ?? -1
        }
    }

    func testAmplitudeProductEventsCountWithinTheRequestLimit() throws {
        let tracker = try HTTPTracker(
            encoder: AmplitudeEncoder(
                apiKey: "key", baseURL: collector.baseURL,
                limits: BatchLimits(maximumEvents: 10, maximumBytes: 1_000_000)),
            directory: directory, configuration: testConfiguration(flushAt: 30))
        // 30 events: every tenth an order of 4 products (5 of Amplitude's events).
        for index in 0..<30 {
            try tracker.track(index % 10 == 3 ? order(4, index: index) : numbered(1, from: index)[0])
        }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let counts = amplitudeEventCounts()
        XCTAssertTrue(counts.allSatisfy { (1...10).contains($0) }, "\(counts)")
        XCTAssertEqual(counts.reduce(0, +), 30 + 3 * 4, "every event and product event sent once")
        XCTAssertEqual(tracker.diagnostics.delivered, 30)
    }

    func testAnOrderLargerThanTheLimitStillGoesAlone() throws {
        let tracker = try HTTPTracker(
            encoder: AmplitudeEncoder(
                apiKey: "key", baseURL: collector.baseURL,
                limits: BatchLimits(maximumEvents: 3, maximumBytes: 1_000_000)),
            directory: directory, configuration: testConfiguration(flushAt: 2))
        try tracker.track(numbered(1)[0])
        try tracker.track(order(4, index: 1))
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(amplitudeEventCounts(), [1, 5], "the order's five entries cannot be split: sent alone")
        XCTAssertEqual(tracker.diagnostics.delivered, 2)
    }

    func testEveryGA4RequestOfACampaignsEventsCarriesTheCampaignWithin25Events() throws {
        let tracker = try HTTPTracker(
            encoder: GA4Encoder(
                measurementID: "G-1", apiSecret: "s", baseURL: collector.baseURL, validation: .off),
            directory: directory, configuration: testConfiguration(flushAt: 60))
        for event in numbered(60) {
            var event = event
            event.args["utm_source"] = "newsletter"
            event.args["utm_campaign"] = "spring"
            try tracker.track(event)
        }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.delivered, 60)
        var sent = 0
        for request in collector.requests {
            let body = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            let names = try XCTUnwrap(body["events"] as? [[String: Any]]).map { $0["name"] as? String }
            XCTAssertLessThanOrEqual(names.count, 25)
            XCTAssertEqual(names.first, "campaign_details", "the campaign opens every request")
            sent += names.count - 1
        }
        XCTAssertEqual(sent, 60)
        // 24 events and the campaign a request, the rest of a queue file going with the next
        // file's events: ⌈60 / 24⌉ requests (the queue's files of 25 made 2 a file, 6, before).
        XCTAssertEqual(collector.requests.count, 3)
    }
}
