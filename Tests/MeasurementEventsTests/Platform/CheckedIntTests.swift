import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// `Int` is 32 bits on Apple Watch: these run the conversions with that range on this machine.
final class CheckedIntTests: XCTestCase {
    func testIntegersConvertOnlyWithinA32BitRange() {
        XCTAssertEqual(checkedInt(Int64(Int32.max), limit: .int32), Int(Int32.max))
        XCTAssertEqual(checkedInt(Int64(Int32.min), limit: .int32), Int(Int32.min))
        XCTAssertNil(checkedInt(Int64(Int32.max) + 1, limit: .int32))
        XCTAssertNil(checkedInt(Int64(Int32.min) - 1, limit: .int32))
        XCTAssertNil(checkedInt(UInt32.max, limit: .int32))
        XCTAssertNil(checkedInt(UInt64.max, limit: .int32))
    }

    func testIntegersConvertOnlyWithinTheNativeRange() {
        XCTAssertEqual(checkedInt(Int64.max), Int(exactly: Int64.max))
        XCTAssertEqual(checkedInt(UInt32.max), Int(exactly: UInt32.max))
        XCTAssertNil(checkedInt(UInt64.max))
        XCTAssertNil(checkedInt(UInt(Int.max) + 1))
    }

    func testDoublesConvertOnlyWhenWholeAndWithinA32BitRange() {
        XCTAssertEqual(checkedInt(2_147_483_647.0, limit: .int32), 2_147_483_647)
        XCTAssertEqual(checkedInt(-2_147_483_648.0, limit: .int32), -2_147_483_648)
        XCTAssertNil(checkedInt(2_147_483_648.0, limit: .int32))
        XCTAssertNil(checkedInt(-2_147_483_649.0, limit: .int32))
        XCTAssertNil(checkedInt(5e9, limit: .int32))
        XCTAssertNil(checkedInt(0.5, limit: .int32))
    }

    func testDoublesThatAreNotFiniteOrBeyondTheNativeRangeGiveNil() {
        XCTAssertNil(checkedInt(Double.nan))
        XCTAssertNil(checkedInt(Double.infinity))
        XCTAssertNil(checkedInt(-Double.infinity))
        XCTAssertNil(checkedInt(9_223_372_036_854_775_808.0))  // 2^63
        XCTAssertEqual(checkedInt(-9_223_372_036_854_775_808.0), Int(exactly: -9_223_372_036_854_775_808.0))
    }
}
