import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

/// `swift run measurement-demo delivery`: events leave the process for real. A collector on
/// loopback stands in for Segment; the aggregator hashes the email and adds app context; the
/// HTTP tracker queues on disk and uploads; the collector prints what arrived.
func runDeliveryDemo() throws {
    print("== delivery: aggregator → HTTP tracker → local collector ==")
    let collector = LoopbackCollector()
    collector.script([.status(503)])  // the first upload fails, to show the retry
    try collector.start()
    defer { collector.stop() }
    print("collector listening on \(collector.baseURL.absoluteString)")

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("measurement-demo-delivery")
    try? FileManager.default.removeItem(at: directory)
    var configuration = HTTPTracker.Configuration()
    configuration.retryPolicy = RetryPolicy(initialDelay: 0.2)
    configuration.logHandler = { print("  tracker: \($0)") }
    let tracker = try HTTPTracker(
        encoder: SegmentEncoder(writeKey: "DEMO_WRITE_KEY", baseURL: collector.baseURL),
        directory: directory, configuration: configuration)

    let center = NotificationCenter()
    let aggregator = EventAggregator(
        center: center, filter: EventFilter(allow: ["feed/*", "account/*"]), trackers: [tracker],
        processors: [
            PersonalDataProcessor(personalArgs: ["email"], treatment: .hash(salt: "demo-salt")),
            GlobalContextProcessor(["app_version": "2026.11"]),
        ], configuration: .demo)
    aggregator.start()

    MeasurementEvent.post("account/signed_up", args: ["email": "jane@example.com", "plan": "pro"], to: center)
    MeasurementEvent.post("feed/item_tapped", type: .click, args: ["item_id": "42", "position": 3], to: center)
    MeasurementEvent.post("feed/item_shown", type: .impression, args: ["item_id": "43", "ratio": 0.75], to: center)
    aggregator.flush()
    let delivered = tracker.waitUntilDelivered(timeout: 10)

    for (index, request) in collector.requests.enumerated() {
        print(
            "request \(index + 1): \(request.method) \(request.target) auth=\(request.headers["authorization"] ?? "-")")
        print("  \(request.bodyText)")
    }
    let diagnostics = tracker.diagnostics
    print(
        "delivered \(diagnostics.delivered) events in \(diagnostics.requests) requests "
            + "(\(diagnostics.retries) retried)\(delivered ? "" : " — not everything was delivered")")
    try? FileManager.default.removeItem(at: directory)
}
