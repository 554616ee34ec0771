// An app extension sends the app's anonymous id: it reads the id the app wrote into the App
// Group's UserDefaults suite (ShareTheAnonymousIDWithExtensions.swift) and seeds an identity
// store of its own, in memory, with it; its aggregator never opens a store in the shared
// container. The run writes an id as the app would, then checks that the extension's events
// carry it.
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting

// On a device, the App Group that the app and its extensions list in their entitlements; here a
// suite of this run only, holding what the app wrote, removed at the end.
let appGroup = "group.com.example.shop.snippet-\(ProcessInfo.processInfo.processIdentifier)"
let appsAnonymousID = UUID().uuidString.lowercased()
UserDefaults(suiteName: appGroup)!.set(appsAnonymousID, forKey: "MeasurementEvents.anonymousID")
let sent = RecordingTracker()

// snippet.show
// The app's anonymous id, or none before the app first wrote it (then the extension makes one).
let shared = UserDefaults(suiteName: appGroup)?.string(forKey: "MeasurementEvents.anonymousID")
var configuration = EventAggregator.Configuration()
configuration.identityStore = InMemoryIdentityStore(
    shared.map { IdentityStoreContents(identity: EventIdentity(anonymousID: $0)) })
let aggregator = EventAggregator(
    filter: EventFilter(allow: ["share/*"]), trackers: [sent], configuration: configuration)
aggregator.start()
MeasurementEvent.post("share/completed")
// snippet.end

aggregator.waitUntilDelivered()
let carried = sent.events.first?.anonymousID
precondition(carried == appsAnonymousID, "the extension sent \(carried ?? "no anonymous id"), not the app's")
print("the extension sent the app's anonymous id: \(carried!)")
aggregator.stop()
UserDefaults.standard.removePersistentDomain(forName: appGroup)
