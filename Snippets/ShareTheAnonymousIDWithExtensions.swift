// An app shares its anonymous id with its app extensions: its aggregator keeps the identity in
// the app's own container (the default store), and a tracker writes the anonymous id, each time
// it changes, into the UserDefaults suite of an App Group, where an extension reads it
// (UseTheSharedAnonymousIDInAnExtension.swift). The run checks that the suite holds the id the
// app's events carry, and the new one after a reset.
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting

// On a device, the App Group that the app and its extensions list in their entitlements; here a
// suite of this run only, removed at the end.
let appGroup = "group.com.example.shop.snippet-\(ProcessInfo.processInfo.processIdentifier)"
let sent = RecordingTracker()

// snippet.show
/// Writes the anonymous id where the app's extensions read it, whenever it changes.
struct SharedAnonymousID: EventTracker {
    static let key = "MeasurementEvents.anonymousID"
    let suiteName: String  // the App Group: "group.com.example.shop"

    func track(_ event: MeasurementEvent) throws {
        if let anonymousID = event.anonymousID { write(anonymousID) }
    }

    func identify(_ event: IdentityEvent) throws {
        write(event.attribution.identity.anonymousID)  // after a reset, the new one
    }

    private func write(_ anonymousID: String) {
        guard let shared = UserDefaults(suiteName: suiteName), shared.string(forKey: Self.key) != anonymousID
        else { return }
        shared.set(anonymousID, forKey: Self.key)
    }
}

// The app's aggregator: the identity stays in the app's own container (the default store).
let aggregator = EventAggregator(
    filter: EventFilter(allow: ["app/*"]), trackers: [SharedAnonymousID(suiteName: appGroup), sent])
aggregator.start()
// snippet.end

func shared() -> String? { UserDefaults(suiteName: appGroup)?.string(forKey: SharedAnonymousID.key) }
MeasurementEvent.post("app/opened")
aggregator.waitUntilDelivered()
let first = sent.events.last?.anonymousID
precondition(
    first != nil && shared() == first, "the suite holds \(shared() ?? "nothing"), the events carry \(first ?? "none")")
MeasurementIdentity.reset()
MeasurementEvent.post("app/opened")
aggregator.waitUntilDelivered()
let second = sent.events.last?.anonymousID
precondition(second != first && shared() == second, "after a reset the suite holds \(shared() ?? "nothing")")
print("shared anonymous id: \(shared() ?? "none")")
aggregator.stop()
UserDefaults.standard.removePersistentDomain(forName: appGroup)
