import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsGA4
import MeasurementEventsHTTP
import MeasurementEventsInspector

/// `swift run measurement-demo inspect`: sends the demo's events to a running
/// `measurement-events inspect` (at `MEASUREMENT_INSPECTOR_URL`, default
/// `http://127.0.0.1:9400`): the aggregator's trail through an ``InspectorConnection``, and
/// what Segment and GA4 would receive through HTTP trackers whose base URL is the inspector.
/// Some events carry markup (`<script>`, an `onerror` image, a `javascript:` URL), which the
/// page must show as text.
func runInspectorDemo() throws {
    print("== inspect: aggregator → inspector (trail, and Segment and GA4 bodies) ==")
    let base = ProcessInfo.processInfo.environment["MEASUREMENT_INSPECTOR_URL"] ?? "http://127.0.0.1:9400"
    guard let inspector = URL(string: base) else { throw DemoInspectorError(message: "not a URL: \(base)") }
    print("inspector at \(inspector.absoluteString) (start it with `swift run measurement-events inspect`)")
    let connection = InspectorConnection(configuration: InspectorConnection.Configuration(baseURL: inspector))

    let root = FileManager.default.temporaryDirectory.appendingPathComponent("measurement-demo-inspect-\(UUID())")
    defer { try? FileManager.default.removeItem(at: root) }
    var trackerConfiguration = HTTPTracker.Configuration()
    trackerConfiguration.compressesBodies = true
    trackerConfiguration.logHandler = { _ in }
    let segment = try HTTPTracker(
        encoder: SegmentEncoder(writeKey: "DEMO_WRITE_KEY", baseURL: inspector),
        directory: root.appendingPathComponent("segment"), configuration: trackerConfiguration)
    let ga4 = try HTTPTracker(
        encoder: GA4Encoder(measurementID: "G-DEMO", apiSecret: "DEMO", baseURL: inspector),
        directory: root.appendingPathComponent("ga4"), configuration: trackerConfiguration)

    var configuration = EventAggregator.Configuration.demo
    configuration.trail = connection
    let center = NotificationCenter()
    let aggregator = EventAggregator(
        center: center, filter: EventFilter(allow: ["feed/*", "account/*", "search/*"]), trackers: [segment, ga4],
        processors: [PersonalDataProcessor(personalArgs: ["email"], treatment: .hash(salt: "demo-salt"))],
        configuration: configuration)
    aggregator.start()

    MeasurementEvent.post("account/signed_up", args: ["email": "jane@example.com", "plan": "pro"], to: center)
    for index in 0..<20 {
        MeasurementEvent.post(
            "feed/item_tapped", type: .click, args: ["item_id": "\(index)", "position": index], to: center)
    }
    MeasurementEvent.post("feed/item_shown", type: .impression, args: ["item_id": "43", "ratio": 0.75], to: center)
    MeasurementEvent.post("search/query_entered", args: ["query": "<script>window.__xss=1</script>"], to: center)
    MeasurementEvent.post(
        "feed/<img src=x onerror=window.__xss=2>", type: .click,
        args: ["title": "\"><img src=x onerror=window.__xss=3>"],
        to: center)
    MeasurementEvent.post("feed/link_opened", args: ["url": "javascript:window.__xss=4"], to: center)
    MeasurementEvent.post("debug/cache_cleared", args: ["bytes": 1_024], to: center)  // not allowed: filtered out
    aggregator.flush()
    let delivered = segment.waitUntilDelivered(timeout: 10) && ga4.waitUntilDelivered(timeout: 10)
    let sent = connection.flush(timeout: 10)
    let diagnostics = connection.diagnostics
    print(
        "vendor requests \(delivered ? "delivered" : "NOT all delivered") to the inspector; trail: \(diagnostics.sent) entries sent"
            + (sent ? "" : " (some not yet)") + ", \(diagnostics.failedRequests) failed requests")
}

struct DemoInspectorError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
