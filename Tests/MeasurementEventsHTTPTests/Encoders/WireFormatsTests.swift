import Foundation
import XCTest

@testable import MeasurementEventsHTTP

final class WireFormatsTests: XCTestCase {
    private func iso(_ seconds: TimeInterval) -> String { WireFormats.iso8601(Date(timeIntervalSince1970: seconds)) }

    func testISO8601FormatsUTCWithMilliseconds() {
        XCTAssertEqual(iso(0), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(iso(1_763_900_000.25), "2025-11-23T12:13:20.250Z")
        XCTAssertEqual(iso(951_782_400), "2000-02-29T00:00:00.000Z")
        XCTAssertEqual(iso(-0.5), "1969-12-31T23:59:59.500Z")
        XCTAssertEqual(iso(-3_155_760_000), "1869-12-31T00:00:00.000Z")
    }

    func testISO8601OfDatesAfter2038DoesNotNeedA64BitTimeT() {
        // time_t is 32 bits on Apple Watch: gmtime_r could not take these.
        XCTAssertEqual(iso(2_147_483_648), "2038-01-19T03:14:08.000Z")
        XCTAssertEqual(iso(253_402_300_799), "9999-12-31T23:59:59.000Z")
    }

    func testDatesBeyondYear9999OrBeforeYear1AreClampedNotTrapped() {
        XCTAssertEqual(iso(1e300), "9999-12-31T23:59:59.999Z")
        XCTAssertEqual(iso(.infinity), "9999-12-31T23:59:59.999Z")
        XCTAssertEqual(iso(-1e300), "0001-01-01T00:00:00.000Z")
        XCTAssertEqual(WireFormats.milliseconds(Date(timeIntervalSince1970: 1e300)), 253_402_300_799_999)
        XCTAssertEqual(WireFormats.microseconds(Date(timeIntervalSince1970: -1e300)), -62_135_596_800_000_000)
        XCTAssertEqual(WireFormats.microseconds(Date(timeIntervalSince1970: .nan)), 0)
    }
}
