import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// A name the filter drops is reported once, the first time it is posted; an empty allow-list is
/// reported when the aggregator starts.
final class FilteredOutReportTests: XCTestCase {
    private func aggregator(
        filter: EventFilter?, problems: LockedValue<[String]>
    ) -> (EventAggregator, NotificationCenter) {
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration.testing
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        let aggregator = EventAggregator(center: center, filter: filter, configuration: configuration)
        aggregator.start()
        return (aggregator, center)
    }

    func testAFilteredOutNameIsReportedOnceWhateverTheThread() {
        let problems = LockedValue<[String]>([])
        let (aggregator, center) = aggregator(filter: EventFilter(allow: ["feed/*"]), problems: problems)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<50 {
                MeasurementEvent.post("profile/opened", to: center)
                MeasurementEvent.post("feed/item_tapped", to: center)
            }
        }
        MeasurementEvent.post("settings/opened", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(
            problems.withLock { $0 },
            [
                "`profile/opened` is not on the allow-list; it will be counted in diagnostics.filteredOut",
                "`settings/opened` is not on the allow-list; it will be counted in diagnostics.filteredOut",
            ])
        XCTAssertEqual(aggregator.diagnostics.filteredOut, 201)
    }

    func testAnEmptyAllowListIsReportedAtStart() {
        let problems = LockedValue<[String]>([])
        _ = aggregator(filter: nil, problems: problems)
        XCTAssertEqual(problems.withLock { $0 }.count, 1)
        XCTAssertTrue(problems.withLock { $0 }.first?.hasPrefix("the allow-list is empty") == true)
    }

    func testANonEmptyAllowListIsNotReportedAtStart() {
        let problems = LockedValue<[String]>([])
        _ = aggregator(filter: EventFilter(allow: ["feed/*"]), problems: problems)
        XCTAssertEqual(problems.withLock { $0 }, [])
    }
}
