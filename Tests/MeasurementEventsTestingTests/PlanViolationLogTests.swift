import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import Testing
import XCTest

private let catalog = EventCatalog(
    module: "Feed",
    events: [
        EventSpec(
            name: "feed/item_tapped", type: .click,
            args: [ArgSpec(name: "position", type: .int, isRequired: true, isPersonalData: false, minimum: 0)])
    ])

/// Posts `args` to an aggregator with the catalog whose problem handler is `log`'s.
private func deliver(_ args: [String: any EventValueConvertible], to log: PlanViolationLog) {
    let center = NotificationCenter()
    var configuration = EventAggregator.Configuration.testing
    configuration.catalogs = [catalog]
    configuration.problemHandler = log.problemHandler()
    let aggregator = EventAggregator(center: center, filter: .allowAll, configuration: configuration)
    aggregator.start()
    MeasurementEvent.post("feed/item_tapped", args: args, to: center)
    aggregator.waitUntilDelivered()
}

/// The test kit fails a test on any tracking-plan violation.
final class PlanViolationLogTests: XCTestCase {
    func testExpectNoViolationsPassesWhenEveryEventConforms() throws {
        let log = PlanViolationLog()
        deliver(["position": 3], to: log)
        try log.expectNoViolations()
        log.assertNoViolations()
    }

    func testExpectNoViolationsThrowsAListWithFileAndLine() {
        let log = PlanViolationLog()
        deliver(["position": -1], to: log)
        XCTAssertThrowsError(try log.expectNoViolations()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("1 tracking-plan violation:\n"), text)
            XCTAssertTrue(text.contains("feed/item_tapped: arg \"position\" is int -1, the plan's minimum is 0"), text)
            XCTAssertTrue(text.contains("PlanViolationLogTests.swift:"), "names the posting line: \(text)")
        }
    }

    func testTheHandlerForwardsEveryProblem() {
        let forwarded = LockedValue(0)
        let log = PlanViolationLog()
        let handler = log.problemHandler { _ in forwarded.withLock { $0 += 1 } }
        handler(.heldEventDropped("feed/x"))
        XCTAssertEqual(forwarded.withLock { $0 }, 1)
        XCTAssertEqual(log.violations, [])
    }
}

/// The same in Swift Testing: a thrown error fails the test.
@Suite struct PlanViolationLogSwiftTestingTests {
    @Test func expectNoViolationsThrowsOnAViolation() {
        let log = PlanViolationLog()
        deliver(["position": "3"], to: log)
        #expect(throws: PlanViolationsError.self) { try log.expectNoViolations() }
        #expect(log.violations.map(\.kind) == [.wrongType])
    }
}
