import Foundation
import MeasurementEvents
import XCTest

/// The foreground clock: pure, driven by the times it is given.
final class ForegroundClockTests: XCTestCase {
    private let start = Date(timeIntervalSince1970: 1_714_566_600)

    private func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    func testBackgroundTimeNeverCounts() {
        var clock = ForegroundClock(startingAt: start)
        let first = clock.reading(at: at(10))
        clock.enterBackground(at: at(10))
        XCTAssertEqual(clock.reading(at: at(1_800)).foregroundTime, 10, "frozen in the background")
        clock.enterForeground(at: at(3_610))
        let second = clock.reading(at: at(3_615))
        XCTAssertEqual(first.milliseconds(since: nil), 10_000)
        XCTAssertEqual(second.milliseconds(since: first), 5_000)
    }

    func testAnEventPostedInTheBackgroundTakesTheForegroundTimeBeforeIt() {
        var clock = ForegroundClock(startingAt: start)
        let first = clock.reading(at: at(1))
        clock.enterBackground(at: at(4))
        let pushed = clock.reading(at: at(600))
        clock.enterForeground(at: at(700))
        let next = clock.reading(at: at(702))
        XCTAssertEqual(pushed.milliseconds(since: first), 3_000)
        XCTAssertEqual(next.milliseconds(since: pushed), 2_000)
    }

    func testRepeatedMovesChangeNothing() {
        var clock = ForegroundClock(startingAt: start)
        clock.enterForeground(at: at(5))  // already in the foreground: still counts from the start
        clock.enterBackground(at: at(10))
        clock.enterBackground(at: at(20))
        XCTAssertEqual(clock.reading(at: at(30)).foregroundTime, 10)
    }

    func testARestartIsANewRunFromZero() {
        var clock = ForegroundClock(startingAt: start)
        let before = clock.reading(at: at(100))
        clock.restart(at: at(100))
        let after = clock.reading(at: at(103))
        XCTAssertNotEqual(after.epoch, before.epoch)
        XCTAssertEqual(after.milliseconds(since: before), 3_000, "measured from the restart, not compared")
    }

    func testARestartInTheBackgroundStaysInTheBackground() {
        var clock = ForegroundClock(startingAt: start)
        clock.enterBackground(at: at(10))
        clock.restart(at: at(20))
        XCTAssertEqual(clock.reading(at: at(60)).foregroundTime, 0)
        clock.enterForeground(at: at(60))
        XCTAssertEqual(clock.reading(at: at(62)).foregroundTime, 2)
    }

    func testTimeGoingBackwardsNeverGivesANegativeTime() {
        var clock = ForegroundClock(startingAt: start)
        let later = clock.reading(at: at(50))
        XCTAssertEqual(clock.reading(at: at(-50)).foregroundTime, 0)
        XCTAssertEqual(clock.reading(at: at(20)).milliseconds(since: later), 0)
        clock.enterBackground(at: at(-5))
        XCTAssertEqual(clock.reading(at: at(10)).foregroundTime, 0)
    }

    func testMillisecondsAreRoundedAndBounded() {
        let reading = ForegroundClock.Reading(epoch: 1, foregroundTime: 1.2346)
        XCTAssertEqual(reading.milliseconds(since: nil), 1_235)
        let huge = ForegroundClock.Reading(epoch: 1, foregroundTime: 1e12)
        XCTAssertEqual(huge.milliseconds(since: nil), Int64(UInt32.max))
        let notANumber = ForegroundClock.Reading(epoch: 1, foregroundTime: .nan)
        XCTAssertEqual(notANumber.milliseconds(since: nil), 0)
    }
}
