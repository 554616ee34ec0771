// An aggregator subclass, the shape of the Objective-C AQSEvent pattern: an allow-list and a
// receive hook, one shared instance started at launch.
import MeasurementEvents
import MeasurementEventsAggregator

// snippet.show
// `@unchecked Sendable` is restated because Swift 6 does not let a subclass inherit an unchecked
// conformance silently: the subclass promises that what it adds is thread-safe too (here it adds
// no stored state).
final class AppAggregator: EventAggregator, @unchecked Sendable {
    static let shared = AppAggregator(trackers: [ConsoleTracker()])

    override var allowList: [EventPattern] { ["feed/*", "app/permission/*", "settings/opened"] }
    override var denyList: [EventPattern] { ["feed/debug/*"] }

    override func didReceive(_ event: MeasurementEvent) {
        // Call a vendor SDK here, or leave it to trackers.
    }
}

// In application(_:didFinishLaunchingWithOptions:) or your @main:
AppAggregator.shared.start()
// snippet.end

MeasurementEvent.post("feed/opened")
MeasurementEvent.post("feed/debug/layout")
AppAggregator.shared.waitUntilDelivered()
precondition(AppAggregator.shared.diagnostics.forwarded == 1)
