// Sessions tested without waiting: a ManualEventClock moves time instead of sleeping.
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting

let tracker = RecordingTracker()

// snippet.show
let clock = ManualEventClock()
var configuration = EventAggregator.Configuration.testing  // identity in memory: no file shared between runs
configuration.clock = clock
let aggregator = EventAggregator(
    filter: EventFilter(allow: ["*"]), trackers: [tracker], configuration: configuration)
aggregator.start()

MeasurementEvent.post("cart/opened")
clock.advance(by: 29 * 60)  // within the 30-minute timeout: the same session
MeasurementEvent.post("checkout/paid")
clock.advance(by: 31 * 60)  // past it: a new session
MeasurementEvent.post("feed/opened")
aggregator.waitUntilDelivered()

let session = try tracker.expectSameSession("cart/opened", "checkout/paid")
precondition(tracker.events.last?.sessionID != session)  // in a test: #expect(…)
// snippet.end
print(tracker.events.map { "\($0.name) \($0.sessionID ?? 0)" })
