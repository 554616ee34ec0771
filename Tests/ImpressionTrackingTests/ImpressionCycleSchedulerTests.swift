import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import ImpressionTracking

final class ImpressionCycleSchedulerTests: XCTestCase {
    func testDispatchSchedulerTicksUntilCancelled() {
        let ticks = LockedValue(0)
        let ticked = expectation(description: "three ticks")
        let cycle = DispatchCycleScheduler().scheduleRepeating(every: 0.01) {
            if ticks.withLock({
                $0 += 1; return $0
            }) == 3 {
                ticked.fulfill()
            }
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

final class DispatchCycleSchedulerPeriodTests: XCTestCase {
    func testFiveSecondsFitA32BitIntInMicroseconds() {
        // 5 s in nanoseconds overflows a 32-bit Int: starting the cycle trapped on Apple Watch.
        let (period, leeway) = DispatchCycleScheduler.period(of: 5, limit: .int32)
        XCTAssertEqual(period, .microseconds(5_000_000))
        XCTAssertEqual(leeway, .microseconds(500_000))
    }

    #if arch(x86_64) || arch(arm64)
        func testFiveSecondsAreNanosecondsWhereIntHas64Bits() {
            let (period, leeway) = DispatchCycleScheduler.period(of: 5)
            XCTAssertEqual(period, .nanoseconds(5_000_000_000))
            XCTAssertEqual(leeway, .nanoseconds(500_000_000))
        }
    #endif

    func testADayFitsA32BitIntInMilliseconds() {
        XCTAssertEqual(DispatchCycleScheduler.period(of: 86_400, limit: .int32).period, .milliseconds(86_400_000))
        XCTAssertEqual(DispatchCycleScheduler.period(of: 1e12, limit: .int32).period, .milliseconds(86_400_000))
    }

    func testIntervalsThatAreNotPositiveOrNotANumberAreClamped() {
        XCTAssertEqual(DispatchCycleScheduler.period(of: -3, limit: .int32).period, .nanoseconds(1_000_000))
        XCTAssertEqual(DispatchCycleScheduler.period(of: .nan, limit: .int32).period, .milliseconds(86_400_000))
    }
}
