import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsStandard

/// `swift run measurement-demo standard`: each standard call posted on the bus, and the call
/// Segment's batch API (a collector on loopback) receives for it: a screen call, a timed
/// event, Order Completed, an alias, a deep link whose campaign becomes the session's
/// context, a rate-limited error; and the bad input the processor reports instead of sending.
func runStandardCallsDemo() throws {
    print("== standard calls: what Segment receives for each ==")
    let collector = LoopbackCollector()
    try collector.start()
    defer { collector.stop() }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("measurement-demo-standard")
    try? FileManager.default.removeItem(at: directory)
    defer { try? FileManager.default.removeItem(at: directory) }
    let tracker = try HTTPTracker(
        encoder: SegmentEncoder(writeKey: "DEMO_WRITE_KEY", baseURL: collector.baseURL), directory: directory)

    let standard = StandardEventsProcessor(maximumErrorsPerType: 1, problemHandler: { print("  problem: \($0)") })
    let center = NotificationCenter()
    let aggregator = EventAggregator(
        center: center,
        filter: EventFilter(allow: ["checkout/*"] + MeasurementEventsStandardEvents.allNames.map(EventPattern.init)),
        trackers: [tracker], processors: [standard], configuration: .demo)
    aggregator.start()

    DeepLink(URL(string: "https://shop.example.com/sale?utm_source=newsletter&utm_medium=email&utm_campaign=spring")!)
        .post(to: center)
    ScreenView("Feed", screenClass: "FeedViewController", properties: ["tab": "home"]).post(to: center)
    Timers.start("checkout/completed", to: center)
    MeasurementEvent.post("checkout/completed", to: center)
    Order(
        currency: "EUR", orderID: "T-1001",
        products: [
            .init(productID: "sku-1", name: "Sticker", price: Decimal(string: "0.1")!, quantity: 3),
            .init(productID: "sku-2", price: Decimal(string: "0.2")!),
        ]
    ).post(to: center)
    Alias.post(previousID: "anon-1234", userID: "user-42", to: center)
    for _ in 0..<3 { ErrorEvent(CocoaError(.fileNoSuchFile), context: "feed/cache").post(to: center) }
    // Bad input: reported, counted, not sent.
    Order(currency: "EUX", products: [.init(productID: "a", price: 1)]).post(to: center)
    ScreenView("").post(to: center)

    aggregator.waitUntilDelivered()
    let delivered = tracker.waitUntilDelivered(timeout: 10)
    for var call in segmentCalls(receivedBy: collector) {
        // The parts that make each call what it is; context keeps only the campaign.
        let campaign = (call["context"] as? [String: Any])?["campaign"]
        for key in ["anonymousId", "context", "messageId", "timestamp"] { call[key] = nil }
        if let campaign { call["context.campaign"] = campaign }
        print(compactJSON(call))
    }
    print("counts: \(standard.counts)")
    if !delivered { print("not everything was delivered") }
}
