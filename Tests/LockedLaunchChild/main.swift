// The child process of `LockedLaunchTests`: an app launched in the background before the
// device's first unlock, played on Linux by a user that may not open the stores' files yet.
// It makes an aggregator on a `FileIdentityStore` and an `HTTPTracker`, starts the lifecycle
// observer, posts five events and reports (`locked {json}`); on the line `unlocked` on its
// standard input it hears UIKit's protected-data notification, posts five more, flushes, waits
// for the collector and reports again (`done {json}`).
//
// Usage: locked-launch-child <store directory> <tracker directory> <collector base URL>
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsLifecycle

let arguments = CommandLine.arguments
guard arguments.count == 4, let base = URL(string: arguments[3]) else {
    FileHandle.standardError.write(Data("usage: locked-launch-child <store> <tracker> <base URL>\n".utf8))
    exit(64)
}

func report(_ label: String, _ values: [String: Any]) {
    let json = try! JSONSerialization.data(withJSONObject: values, options: [.sortedKeys])
    // One write to the pipe, unbuffered: the parent reads it while the child waits.
    FileHandle.standardOutput.write(Data("\(label) \(String(decoding: json, as: UTF8.self))\n".utf8))
}

let problems = LockedValue<[String]>([])
var trackerConfiguration = HTTPTracker.Configuration()
trackerConfiguration.flushPolicies = [ManualFlushPolicy()]
trackerConfiguration.logHandler = { line in problems.withLock { $0.append("tracker: \(line)") } }
let tracker = try HTTPTracker(
    encoder: SegmentEncoder(writeKey: "locked-launch", baseURL: base),
    directory: URL(fileURLWithPath: arguments[2]), configuration: trackerConfiguration)

// Persistence is what is under test: the default configuration, with the store named.
var configuration = EventAggregator.Configuration()
configuration.identityStore = FileIdentityStore(directory: URL(fileURLWithPath: arguments[1]))
configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
let center = NotificationCenter()
let aggregator = EventAggregator(center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
aggregator.start()
let lifecycle = AppLifecycleObserver.start(
    aggregator: aggregator, center: center, bundleInfo: ["CFBundleShortVersionString": "1.0", "CFBundleVersion": "1"])

for index in 0..<5 { MeasurementEvent.post("locked/event", args: ["index": index], to: center) }
aggregator.waitUntilDelivered()
report(
    "locked",
    [
        "heldUntilStoreReadable": aggregator.diagnostics.heldUntilStoreReadable,
        "forwarded": aggregator.diagnostics.forwarded, "consent": aggregator.consent.rawValue,
        "trackerQueued": tracker.diagnostics.queued, "problems": problems.withLock { $0 },
    ])

guard readLine() == "unlocked" else { exit(65) }
center.post(name: Notification.Name("UIApplicationProtectedDataDidBecomeAvailable"), object: nil)
for index in 5..<10 { MeasurementEvent.post("locked/event", args: ["index": index], to: center) }
aggregator.flush()
let delivered = tracker.waitUntilDelivered(timeout: 30)
let attribution = aggregator.currentAttribution
report(
    "done",
    [
        "delivered": delivered, "forwarded": aggregator.diagnostics.forwarded,
        "heldUntilStoreReadable": aggregator.diagnostics.heldUntilStoreReadable,
        "dropped": aggregator.diagnostics.dropped, "trackerAccepted": tracker.diagnostics.accepted,
        "trackerDelivered": tracker.diagnostics.delivered, "trackerQueued": tracker.diagnostics.queued,
        "anonymousID": attribution.identity.anonymousID, "sessionID": attribution.sessionID.map { "\($0)" } ?? "",
        "release": "\(lifecycle.release)", "consent": aggregator.consent.rawValue, "problems": problems.withLock { $0 },
    ])
lifecycle.stop()
