import Foundation
import ImpressionTracking
import XCTest

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
}
