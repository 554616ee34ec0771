import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

/// `swift run measurement-demo identity`: sign-in → events → sign-out → events, and what a
/// vendor (Segment's batch API, played by a collector on loopback) receives for each: the
/// identify call with traits, events with the user id, and after the reset events with a new
/// anonymous id and no user id. Identity travels on the bus; the HTTP tracker owns none.
func runIdentityDemo() throws {
    print("== identity: sign-in → events → sign-out → events ==")
    let collector = LoopbackCollector()
    try collector.start()
    defer { collector.stop() }

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("measurement-demo-identity")
    try? FileManager.default.removeItem(at: directory)
    defer { try? FileManager.default.removeItem(at: directory) }
    var trackerConfiguration = HTTPTracker.Configuration()
    trackerConfiguration.logHandler = { print("  tracker: \($0)") }
    let tracker = try HTTPTracker(
        encoder: SegmentEncoder(writeKey: "DEMO_WRITE_KEY", baseURL: collector.baseURL),
        directory: directory.appendingPathComponent("segment"), configuration: trackerConfiguration)

    var configuration = EventAggregator.Configuration()
    // Remembered across launches: anonymous id, user, traits, group, consent, session.
    configuration.identityStore = FileIdentityStore(directory: directory.appendingPathComponent("identity"))
    let center = NotificationCenter()
    let aggregator = EventAggregator(
        center: center, filter: EventFilter(allow: ["account/*", "feed/*"]), trackers: [tracker],
        configuration: configuration)
    aggregator.start()

    // What feature modules do: they only import MeasurementEvents.
    MeasurementIdentity.identify(userID: "user-42", traits: ["plan": "pro", "name": "Jane"], to: center)
    MeasurementIdentity.group("acme", traits: ["seats": 40], to: center)
    MeasurementEvent.post("feed/item_tapped", type: .click, args: ["item_id": "42"], to: center)
    MeasurementEvent.post("account/signed_out", to: center)
    MeasurementIdentity.reset(to: center)
    MeasurementEvent.post("feed/item_shown", type: .impression, args: ["item_id": "43"], to: center)

    aggregator.waitUntilDelivered()
    let delivered = tracker.waitUntilDelivered(timeout: 10)
    for call in segmentCalls(receivedBy: collector) {
        let what = call["event"] as? String ?? call["groupId"] as? String ?? ""
        print("\(call["type"] as? String ?? "?") \(what)")
        print("  userId=\(call["userId"] as? String ?? "-") anonymousId=\(call["anonymousId"] as? String ?? "-")")
        if let traits = call["traits"] { print("  traits=\(compactJSON(traits))") }
        if let context = call["context"] { print("  context=\(compactJSON(context))") }
    }
    print("first request body: \(collector.requests.first?.bodyText.prefix(400) ?? "none")…")
    if !delivered { print("not everything was delivered") }
}
