import DemoFeed
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// The tracking plan enforced at post time: an aggregator given the demo's catalogs reports
/// a post that breaks them, naming the file and line that posted it.
func runPlanConformanceDemo() throws {
    print("== Tracking plan: the catalogs enforced at post time ==")
    let center = NotificationCenter()
    var configuration = EventAggregator.Configuration.demo
    configuration.delivery = .synchronous
    configuration.catalogs = [DemoFeedEvents.catalog]
    // The demo runs as a release build too: carry the posting file and line either way.
    configuration.planConformance.recordsPostSites = true
    configuration.problemHandler = { problem in print("  problem handler: \(problem)") }
    let aggregator = EventAggregator(center: center, filter: .allowAll, configuration: configuration)
    aggregator.start()
    // `position` is an int in Events/DemoFeed.json: a string breaks the plan.
    MeasurementEvent.post("feed/item_tapped", args: ["item_id": "42", "position": "3"], to: center)
    aggregator.waitUntilDelivered()
    let counts = aggregator.diagnostics.planViolations.map { "\($0.key.rawValue): \($0.value)" }
    print("  diagnostics.planViolations: \(counts.sorted().joined(separator: ", "))")
}
