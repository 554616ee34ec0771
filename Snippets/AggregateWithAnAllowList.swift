// Aggregating at app launch: an allow-list decides which events reach the trackers.
import MeasurementEvents
import MeasurementEventsAggregator

// snippet.show
let aggregator = EventAggregator(
    filter: EventFilter(allow: ["feed/*", "app/launched"], deny: ["feed/debug/*"]),
    trackers: [ConsoleTracker()])
aggregator.start()

// Forwarded to the console; the other two are counted in diagnostics.filteredOut.
MeasurementEvent.post("feed/item_tapped", type: .click, args: ["position": 3])
MeasurementEvent.post("feed/debug/layout")  // denied
MeasurementEvent.post("settings/opened")  // not on the allow-list
// snippet.end

aggregator.waitUntilDelivered()
print(aggregator.diagnostics)
