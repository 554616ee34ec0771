import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import ImpressionTracking

final class ImpressionClockTests: XCTestCase {
    func testManualClockAddsStepsExactly() {
        let clock = ManualImpressionClock()
        for _ in 0..<5 { clock.advance(by: 0.2) }
        XCTAssertEqual(clock.now(), 1.0)
        for _ in 0..<10 { clock.advance(by: 0.1) }
        XCTAssertEqual(clock.now(), 2.0)
    }

    func testManualClockNeverGoesBackwards() {
        let clock = ManualImpressionClock(startingAt: 5)
        clock.advance(by: -1)
        clock.advance(by: .nan)
        clock.advance(to: 3)
        XCTAssertEqual(clock.now(), 5)
        clock.advance(to: 8.5)
        XCTAssertEqual(clock.now(), 8.5)
    }

    func testManualClockMapsInstantsToDatesFromItsEpoch() {
        let clock = ManualImpressionClock(epoch: Date(timeIntervalSince1970: 1_000))
        XCTAssertEqual(clock.date(at: 2.5), Date(timeIntervalSince1970: 1_002.5))
    }

    func testSystemClockIsMonotonicAndMapsNowToTheCurrentDate() {
        let clock = SystemImpressionClock()
        var previous = clock.now()
        for _ in 0..<1_000 {
            let now = clock.now()
            XCTAssertGreaterThanOrEqual(now, previous)
            previous = now
        }
        // Loose on purpose: it checks the mapping, not the speed of the machine.
        XCTAssertEqual(clock.date(at: clock.now()).timeIntervalSince1970, Date().timeIntervalSince1970, accuracy: 60)
    }

    func testSystemClockDatesStayOnTheWallClockAcrossASimulatedSleep() {
        // The source counts sleep, as mach_continuous_time and CLOCK_BOOTTIME do: an hour asleep
        // moves it by an hour, so dates after the sleep match the wall clock.
        let seconds = LockedValue<TimeInterval>(500)
        let clock = SystemImpressionClock(
            readSeconds: { seconds.withLock { $0 } }, wallClock: Date(timeIntervalSince1970: 1_000))
        let beforeSleep = clock.now()
        seconds.withLock { $0 += 2 }
        seconds.withLock { $0 += 3_600 }  // asleep
        seconds.withLock { $0 += 1 }
        let afterSleep = clock.now()
        XCTAssertEqual(clock.date(at: beforeSleep), Date(timeIntervalSince1970: 1_000))
        XCTAssertEqual(clock.date(at: afterSleep), Date(timeIntervalSince1970: 4_603))
        XCTAssertEqual(afterSleep - beforeSleep, 3_603)
    }

    #if os(Linux)
        func testSystemClockReadsTheClockThatCountsSuspendOnLinux() {
            // Dispatch's uptime is CLOCK_MONOTONIC, which stops while the machine is suspended.
            func boottime() -> TimeInterval {
                var time = timespec()
                clock_gettime(CLOCK_BOOTTIME, &time)
                return TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1_000_000_000
            }
            let before = boottime()
            let now = SystemImpressionClock().now()
            let after = boottime()
            XCTAssertGreaterThanOrEqual(now, before)
            XCTAssertLessThanOrEqual(now, after)
        }
    #endif
}
