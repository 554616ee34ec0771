import DemoFeed
import DemoSettings
import EventTriggers
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsPlan

/// The app's aggregator: a subclass started once at launch, built from the tracking plan the
/// app ships (`tracking-plan.json`, a resource of this target). The plan, not code, says what
/// is kept, with which label, and to which destination.
final class DemoAppAggregator: EventAggregator, @unchecked Sendable {
    // @unchecked: adds no stored state to EventAggregator.

    /// Every event name the app can post: the modules' generated lists, and the trigger
    /// recipe's time-on-screen event.
    static let declaredEvents = TrackingPlan.Catalog(
        names: DemoFeedEvents.allNames + DemoSettingsEvents.allNames + [TriggeredEvent.timeOnScreenEventName])

    /// The plan bundled with the app, validated as a whole before any event flows; strict:
    /// a name no module declares rejects it.
    static func bundledPlan() throws -> TrackingPlan {
        guard let url = Bundle.module.url(forResource: "tracking-plan", withExtension: "json") else {
            throw TrackingPlanError(problems: [
                TrackingPlanProblem(
                    file: "tracking-plan.json", path: "$", line: nil, column: nil,
                    message: "found no such resource, expected it in the MeasurementDemo bundle")
            ])
        }
        return try TrackingPlan(contentsOf: url, catalog: declaredEvents, strictness: .strict)
    }
}

func runBusDemo() throws {
    print("== Bus: feature modules post, the app's plan-built aggregator keeps, labels and routes ==")
    let logURL = FileManager.default.temporaryDirectory
        .appendingPathComponent("measurement-demo-\(ProcessInfo.processInfo.processIdentifier).jsonl")
    try? FileManager.default.removeItem(at: logURL)
    let center = NotificationCenter()
    let plan = try DemoAppAggregator.bundledPlan()
    print("plan: \(plan.screens.count) screens, \(plan.events.count) events, destinations \(plan.destinations)")
    let aggregator = try DemoAppAggregator(
        plan: plan,
        destinations: ["console": ConsoleTracker(), "jsonl": try JSONLinesFileTracker(url: logURL)],
        center: center, configuration: .demo)
    aggregator.start()

    FeedScreen(center: center).simulateVisit()
    SettingsScreen(center: center).simulateVisit()
    runScreenTrackingDemo(plan: plan, center: center)
    aggregator.flush()

    let counters = aggregator.diagnostics
    print(
        """
        received \(counters.received), forwarded \(counters.forwarded), filtered out \(counters.filteredOut), \
        malformed \(counters.malformed), dropped \(counters.dropped)
        filtered out by name: \(counters.filteredOutNames.map { "\($0.key) ×\($0.value)" }.sorted().joined(separator: ", "))
        JSON Lines file (destination "jsonl"): \(logURL.path)
        """)
    let lines = (try? String(contentsOf: logURL, encoding: .utf8))?.split(separator: "\n") ?? []
    print("time on screen, routed to \"jsonl\" only:")
    for line in lines where line.contains("screen/time_on_screen") { print("  \(line)") }
    showRejectedPlan()
}

/// A plan with mistakes is rejected as a whole, every problem listed.
private func showRejectedPlan() {
    let broken = #"{"version": 1, "screens": {"Feed": ""}, "events": {"feed/*": {"lable": "Feed"}}}"#
    do {
        _ = try TrackingPlan(data: Data(broken.utf8), file: "broken-plan.json")
    } catch {
        print(error)
    }
}
