import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// The filter skips slash positions where no wildcard prefix of that length exists; prefixes
/// of every length, including ones past 64 and 128 bytes, must still match.
final class EventFilterPrefixLengthTests: XCTestCase {
    func testWildcardsOfManyLengthsMatchOnlyBelowThemselves() {
        let prefixes = [1, 7, 63, 64, 65, 130, 200].map { String(repeating: "a", count: $0) }
        let filter = EventFilter(allow: prefixes.map { EventPattern(stringLiteral: $0 + "/*") })
        for prefix in prefixes {
            XCTAssertTrue(filter.allows(EventName(prefix + "/x")), "\(prefix.count)")
            XCTAssertTrue(filter.allows(EventName(prefix + "/x/y")), "\(prefix.count)")
            XCTAssertFalse(filter.allows(EventName(prefix + "b/x")), "\(prefix.count)")
        }
        XCTAssertFalse(filter.allows(EventName(String(repeating: "a", count: 2) + "/x")))
    }

    func testWildcardLengthsDoNotHideADeeperMatch() {
        let filter = EventFilter(allow: ["feed/cards/*"])
        XCTAssertTrue(filter.allows("feed/cards/opened"))
        XCTAssertFalse(filter.allows("feed/opened"))
        XCTAssertFalse(filter.allows("feedX/cards/opened"))
    }
}
