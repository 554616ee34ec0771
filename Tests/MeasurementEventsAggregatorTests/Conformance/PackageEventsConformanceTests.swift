import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// The session events the aggregator sends conform to their catalog (`SessionRules.catalog`).
/// (Lifecycle and impression events: in their modules' tests.)
final class PackageEventsConformanceTests: XCTestCase {
    private final class Problems: @unchecked Sendable {
        // @unchecked: appended on the delivery queue, read after waitUntilDelivered().
        var violations: [PlanViolation] = []
    }

    func testSessionEventsConformToTheSessionCatalog() {
        let center = NotificationCenter()
        let clock = ManualEventClock()
        let recorder = RecordingTracker()
        let problems = Problems()
        var configuration = EventAggregator.Configuration.testing
        configuration.clock = clock
        configuration.sessions.emitsEvents = true
        let planned = EventCatalog(
            module: "Test", events: [EventSpec(name: "test/a", type: .userAction, args: [])])
        configuration.catalogs = [planned, configuration.sessions.catalog]
        configuration.problemHandler = { problem in
            if case .planViolation(let violation) = problem { problems.violations.append(violation) }
        }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [recorder], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("test/a", to: center)
        clock.advance(by: 31 * 60)
        MeasurementEvent.post("test/a", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(recorder.names, ["session/started", "test/a", "session/ended", "session/started", "test/a"])
        XCTAssertEqual(problems.violations, [])
    }
}
