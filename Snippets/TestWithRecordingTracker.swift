// Testing what an aggregator forwards, with the identity each event carried.
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting

// snippet.show
let tracker = RecordingTracker()
let aggregator = EventAggregator(
    filter: EventFilter(allow: ["account/*"]), trackers: [tracker], configuration: .testing)  // identity in memory
aggregator.start()

MeasurementIdentity.identify(userID: "u1")
MeasurementEvent.post("account/signed_out")
MeasurementIdentity.reset()
MeasurementEvent.post("account/opened")
aggregator.waitUntilDelivered()

try tracker.expectEvent("account/signed_out", userID: "u1")  // in a test: throws, listing what was tracked
try tracker.expectEvent("account/opened", userID: .signedOut)
// snippet.end
print(tracker.names)
