// The README's "Adding it to an app", whole: a persisted identity (the default), the modules'
// catalogs registered, an HTTP tracker whose queue sits in Application Support, the lifecycle
// observer, and start(). It delivers to the server named by MEASUREMENT_EVENTS_SERVER (a base
// URL): `Scripts/check-readme-setup.py` (in `.ci/run`) launches it twice against a loopback
// collector and checks that both launches send the same anonymous id, and the same hash for the
// same email. Without the variable it queues its events and sends nothing (port 9 is never asked).
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsLifecycle

// What the generator writes for an app's module (`AccountEvents.catalog`): `email` is personal.
enum AccountEvents {
    static let catalog = EventCatalog(
        module: "Account",
        events: [
            EventSpec(
                name: "account/signed_in", type: .default,
                args: [ArgSpec(name: "email", type: .string, isRequired: true, isPersonalData: true)])
        ])
}

let server = ProcessInfo.processInfo.environment["MEASUREMENT_EVENTS_SERVER"]
let serverURL = URL(string: server ?? "http://127.0.0.1:9")!

// snippet.show
let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
var configuration = EventAggregator.Configuration()  // identity kept per install, by default
configuration.catalogs = [AccountEvents.catalog, MeasurementEventsLifecycleEvents.catalog]

let segment = try HTTPTracker(
    encoder: SegmentEncoder(writeKey: "YOUR_WRITE_KEY", baseURL: serverURL),
    directory: support.appendingPathComponent("analytics/segment"))  // durable, not a temporary directory
let aggregator = EventAggregator(
    filter: EventFilter(allow: ["account/*", "app/*"]), trackers: [segment], configuration: configuration)
aggregator.start()
// Flushes to the tracker when the app goes to the background; app/installed, app/opened.
let lifecycle = AppLifecycleObserver.start(aggregator: aggregator)

MeasurementEvent.post("account/signed_in", args: ["email": "jane@example.com"])
// snippet.end

aggregator.flush()
if server != nil {
    try segment.flush()
    precondition(segment.waitUntilDelivered(timeout: 30), "not delivered: \(segment.diagnostics)")
    print("delivered \(segment.diagnostics.delivered) events")
} else {
    print("queued \(segment.diagnostics.queued) events")
}
lifecycle.stop()
