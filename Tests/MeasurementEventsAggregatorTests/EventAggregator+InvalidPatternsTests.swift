import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

final class EventAggregatorInvalidPatternsTests: XCTestCase {
    func testInvalidPatternsAreReportedOnceWhenTheAggregatorStarts() {
        let reports = LockedValue<[String]>([])
        let aggregatorBox = LockedValue<EventAggregator?>(nil)
        var configuration = EventAggregator.Configuration.testing
        configuration.problemHandler = { problem in
            // Reads the aggregator's state: this would deadlock or abort if called under its lock.
            let filterIsSet = aggregatorBox.withLock { $0 }?.filter != nil
            reports.withLock { $0.append("\(problem) (filter set: \(filterIsSet))") }
        }
        let aggregator = EventAggregator(
            center: NotificationCenter(), filter: EventFilter(allow: ["feed/*", "cart*"], deny: ["feed/debug item"]),
            configuration: configuration)
        aggregatorBox.withLock { $0 = aggregator }
        XCTAssertEqual(reports.withLock { $0 }, [], "nothing is reported before start")

        aggregator.start()
        aggregator.start()

        XCTAssertEqual(
            reports.withLock { $0 },
            [
                #"invalid event pattern "cart*": a wildcard must be "*" alone or a final "/*", as in "feed/*" (filter set: true)"#,
                #"invalid event pattern "feed/debug item": the name contains whitespace or a control character (filter set: true)"#,
            ])
    }

    func testPatternsFromASubclassAllowListAreReportedToo() {
        final class CartAggregator: EventAggregator, @unchecked Sendable {
            override var allowList: [EventPattern] { ["cart*"] }
        }
        let reports = LockedValue<[String]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.problemHandler = { problem in reports.withLock { $0.append(problem.description) } }
        let aggregator = CartAggregator(center: NotificationCenter(), configuration: configuration)
        aggregator.start()
        XCTAssertEqual(
            reports.withLock { $0 },
            [#"invalid event pattern "cart*": a wildcard must be "*" alone or a final "/*", as in "feed/*""#])
    }
}
