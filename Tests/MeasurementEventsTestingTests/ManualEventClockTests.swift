import Dispatch
import Foundation
import MeasurementEventsTesting
import XCTest

final class ManualEventClockTests: XCTestCase {
    func testStartsAtAFixedDateAndMovesOnlyWhenAdvanced() {
        let clock = ManualEventClock()
        XCTAssertEqual(clock.now(), Date(timeIntervalSince1970: 1_714_566_600))
        clock.advance(by: 90)
        XCTAssertEqual(clock.now(), Date(timeIntervalSince1970: 1_714_566_690))
        clock.advance(by: -30)
        XCTAssertEqual(clock.now(), Date(timeIntervalSince1970: 1_714_566_660))
    }

    func testSetReplacesTheDate() {
        let clock = ManualEventClock(now: Date(timeIntervalSince1970: 0))
        clock.set(Date(timeIntervalSince1970: 42))
        XCTAssertEqual(clock.now(), Date(timeIntervalSince1970: 42))
    }

    func testConcurrentAdvancesAreNeverLost() {
        let clock = ManualEventClock(now: Date(timeIntervalSince1970: 0))
        DispatchQueue.concurrentPerform(iterations: 1_000) { _ in
            clock.advance(by: 1)
            _ = clock.now()
        }
        XCTAssertEqual(clock.now(), Date(timeIntervalSince1970: 1_000))
    }
}
