import Foundation
import ImpressionTracking
import MeasurementEvents
import XCTest

final class ImpressionCycleSchedulerTests: XCTestCase {
    func testDispatchSchedulerTicksUntilCancelled() {
        let ticks = LockedValue(0)
        let ticked = expectation(description: "three ticks")
        let cycle = DispatchCycleScheduler().scheduleRepeating(every: 0.01) {
            if ticks.withLock({ $0 += 1; return $0 }) == 3 { ticked.fulfill() }
        }
        wait(for: [ticked], timeout: 10)
        cycle.cancel()
        cycle.cancel()
    }

    func testManualSchedulerTicksOnlyWhenToldAndUntilCancelled() {
        let scheduler = ManualCycleScheduler()
        let ticks = LockedValue<[String]>([])
        let first = scheduler.scheduleRepeating(every: 2) { ticks.withLock { $0.append("first") } }
        _ = scheduler.scheduleRepeating(every: 7) { ticks.withLock { $0.append("second") } }
        XCTAssertEqual(ticks.withLock { $0 }, [])
        XCTAssertEqual(scheduler.scheduledIntervals, [2, 7])
        scheduler.tick()
        first.cancel()
        scheduler.tick()
        XCTAssertEqual(ticks.withLock { $0 }, ["first", "second", "second"])
        XCTAssertEqual(scheduler.scheduledIntervals, [7])
    }
}
