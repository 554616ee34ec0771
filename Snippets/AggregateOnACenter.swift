// An aggregator on a notification center of its own: `center:` is the first argument of every
// initialiser that takes one, and the last (`to:`) of every post.
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting

// snippet.show
let center = NotificationCenter()  // a test's, or a sandboxed feature's; `.default` otherwise
let aggregator = EventAggregator(
    center: center,  // first
    filter: EventFilter(allow: ["feed/*"]),
    trackers: [ConsoleTracker()],
    processors: [],
    configuration: .testing)  // the test kit's: identity in memory
let recorder = EventRecorder(center: center)  // the test kit's recorder: `center:` first too
aggregator.start()

MeasurementEvent.post("feed/opened", args: ["source": "tab"], to: center)  // posting: `to:` last
aggregator.waitUntilDelivered()
// snippet.end

precondition(aggregator.diagnostics.forwarded == 1 && recorder.events.count == 1)
