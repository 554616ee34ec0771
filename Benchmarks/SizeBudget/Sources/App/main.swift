// The size budget's app: one event posted through an aggregator to an HTTPTracker with the
// Segment encoder, and, when the target links them, the tracking plan, the standard calls and
// the lifecycle observer, as the target's defines say. It is built as one executable per
// capability (each target's folder links this file), so that `size` shows what each costs.
//
// Usage: <app> <queue directory> [events to queue]   — exits once the events are on disk.
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

#if USES_PLAN
    import MeasurementEventsPlan
#endif
#if USES_STANDARD_CALLS
    import MeasurementEventsStandard
#endif
#if USES_LIFECYCLE
    import MeasurementEventsLifecycle
#endif

let arguments = CommandLine.arguments
let directory = URL(
    fileURLWithPath: arguments.count > 1 ? arguments[1] : NSTemporaryDirectory() + "size-budget-queue")
let count = arguments.count > 2 ? Int(arguments[2]) ?? 1 : 1

var trackerConfiguration = HTTPTracker.Configuration()
trackerConfiguration.flushAt = 1_000_000  // measure start-up and acceptance, not uploads
trackerConfiguration.flushInterval = nil
let segment = try HTTPTracker(
    encoder: SegmentEncoder(writeKey: "size-budget", baseURL: URL(string: "http://127.0.0.1:9")!),
    directory: directory, configuration: trackerConfiguration)

var configuration = EventAggregator.Configuration()
configuration.problemHandler = nil
#if USES_STANDARD_CALLS
    configuration.catalogs = [MeasurementEventsStandardEvents.catalog]
#endif

#if USES_PLAN
    let plan = try TrackingPlan(
        data: Data(#"{"version": 1, "destinations": ["segment"], "events": {"app/*": {"label": "App"}}}"#.utf8))
    let aggregator = try EventAggregator(
        plan: plan, destinations: ["segment": segment], configuration: configuration)
#else
    let aggregator = EventAggregator(
        filter: EventFilter(allow: ["app/*", "screen/*", "order/*"]), trackers: [segment],
        configuration: configuration)
#endif
aggregator.start()

#if USES_LIFECYCLE
    let lifecycle = AppLifecycleObserver.start(aggregator: aggregator, bundleInfo: [:])
#endif

for index in 0..<count {
    MeasurementEvent.post("app/started", args: ["index": index])
}
#if USES_STANDARD_CALLS
    ScreenView("Home").post()
#endif
aggregator.waitUntilDelivered()
#if USES_LIFECYCLE
    lifecycle.stop()
#endif
print(segment.diagnostics.accepted)
