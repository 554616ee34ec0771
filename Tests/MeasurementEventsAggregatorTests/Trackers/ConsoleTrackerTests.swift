import Foundation
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

final class ConsoleTrackerTests: XCTestCase {
    func testClockTimeOfAPresentDateWorksWithA32BitInt() {
        // Milliseconds since 1970 (1.7e12) overflow a 32-bit Int: the old conversion trapped on a watch.
        let date = Date(timeIntervalSince1970: 1_763_900_000.25)
        XCTAssertEqual(ConsoleTracker.clockTime(date, limit: .int32), "12:13:20.250")
        XCTAssertEqual(ConsoleTracker.clockTime(date), "12:13:20.250")
    }

    func testClockTimeBefore1970CountsBackFromMidnight() {
        XCTAssertEqual(ConsoleTracker.clockTime(Date(timeIntervalSince1970: -0.5), limit: .int32), "23:59:59.500")
    }

    func testClockTimeOfADateNoClockCanShowIsAPlaceholder() {
        XCTAssertEqual(ConsoleTracker.clockTime(Date(timeIntervalSince1970: .infinity)), "--:--:--.---")
        XCTAssertEqual(ConsoleTracker.clockTime(Date(timeIntervalSince1970: .nan)), "--:--:--.---")
    }

    func testTrackingAnEventFromTheFarFutureDoesNotTrap() throws {
        let lines = LockedValue<[String]>([])
        let tracker = ConsoleTracker(prefix: ">") { line in lines.withLock { $0.append(line) } }
        try tracker.track(MeasurementEvent("feed/opened", timestamp: Date(timeIntervalSince1970: 1e300)))
        XCTAssertEqual(lines.withLock { $0.count }, 1)
    }
}
