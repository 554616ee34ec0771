import DemoFeed
import DemoSettings
import Foundation
import MeasurementEvents

/// The app's aggregator, configured the way the original pattern does it: a subclass with
/// an allow-list, started once at launch.
final class DemoAppAggregator: EventAggregator, @unchecked Sendable {
    // @unchecked: adds no stored state to EventAggregator.
    override var allowList: [EventPattern] { ["feed/*", "app/permission/*", "settings/opened"] }
    override var denyList: [EventPattern] { ["feed/debug/*"] }
}

func runBusDemo() throws {
    print("== Bus: two feature modules post, the app's aggregator keeps what it allows ==")
    let logURL = FileManager.default.temporaryDirectory
        .appendingPathComponent("measurement-demo-\(ProcessInfo.processInfo.processIdentifier).jsonl")
    try? FileManager.default.removeItem(at: logURL)
    let center = NotificationCenter()
    let aggregator = DemoAppAggregator(
        center: center,
        trackers: [ConsoleTracker().combined(with: try JSONLinesFileTracker(url: logURL))])
    aggregator.start()

    FeedScreen(center: center).simulateVisit()
    SettingsScreen(center: center).simulateVisit()
    aggregator.flush()

    let counters = aggregator.diagnostics
    print("""
        received \(counters.received), forwarded \(counters.forwarded), filtered out \(counters.filteredOut), \
        malformed \(counters.malformed), dropped \(counters.dropped)
        filtered out by name: \(counters.filteredOutNames.map { "\($0.key) ×\($0.value)" }.sorted().joined(separator: ", "))
        JSON Lines file: \(logURL.path)
        """)
}
