import Foundation
import XCTest

@testable import MeasurementEvents

final class EventValueTests: XCTestCase {
    private func convert(_ value: Any) -> Result<EventValue, EventValue.ValueRejection> {
        EventValue.converting(value)
    }

    func testSwiftScalarsConvertToTheirCase() {
        XCTAssertEqual(try convert("42").get(), .string("42"))
        XCTAssertEqual(try convert(42).get(), .int(42))
        XCTAssertEqual(try convert(0.5).get(), .double(0.5))
        XCTAssertEqual(try convert(true).get(), .bool(true))
        XCTAssertEqual(try convert(Int32(7)).get(), .int(7))
        XCTAssertEqual(try convert(UInt8(7)).get(), .int(7))
        XCTAssertEqual(try convert(Float(1.5)).get(), .double(1.5))
        XCTAssertEqual(try convert("abc".dropFirst()).get(), .string("bc"))
    }

    func testNSNumbersKeepIntegersApartFromBooleans() {
        XCTAssertEqual(try convert(NSNumber(value: 1)).get(), .int(1))
        XCTAssertEqual(try convert(NSNumber(value: true)).get(), .bool(true))
        XCTAssertEqual(try convert(NSNumber(value: 2.5)).get(), .double(2.5))
        XCTAssertEqual(try convert(NSString(string: "x")).get(), .string("x"))
    }

    func testNonScalarsAreRejectedWithTheirType() {
        XCTAssertEqual(convert([1, 2]), .failure(.notScalar(typeName: "Array<Int>")))
        XCTAssertEqual(convert(["a": 1]), .failure(.notScalar(typeName: "Dictionary<String, Int>")))
        XCTAssertEqual(convert(NSNull()), .failure(.notScalar(typeName: "NSNull")))
        XCTAssertEqual(convert(Date(timeIntervalSince1970: 0)), .failure(.notScalar(typeName: "Date")))
    }

    func testNonFiniteAndOutOfRangeNumbersAreRejected() {
        XCTAssertEqual(convert(Double.nan), .failure(.nonFinite))
        XCTAssertEqual(convert(-Double.infinity), .failure(.nonFinite))
        XCTAssertEqual(convert(UInt64.max), .failure(.outOfRange))
        XCTAssertEqual(convert(NSNumber(value: UInt64.max)), .failure(.outOfRange))
    }

    func testIntegersBeyondA32BitIntAreRejectedAsOutOfRange() {
        // What an Apple Watch (32-bit Int) does; these trapped there before.
        XCTAssertEqual(EventValue.converting(Int64(3_000_000_000), limit: .int32), .failure(.outOfRange))
        XCTAssertEqual(EventValue.converting(UInt32.max, limit: .int32), .failure(.outOfRange))
        XCTAssertEqual(EventValue.converting(Int64(Int32.min), limit: .int32), .success(.int(Int(Int32.min))))
        XCTAssertEqual(EventValue.converting(UInt32(7), limit: .int32), .success(.int(7)))
    }

    func testNSNumbersBeyondA32BitIntAreRejectedNotTruncated() {
        // `intValue` kept the low 32 bits on a watch: 3_000_000_000 became -1_294_967_296.
        XCTAssertEqual(
            EventValue.converting(NSNumber(value: Int64(3_000_000_000)), limit: .int32), .failure(.outOfRange))
        XCTAssertEqual(EventValue.converting(NSNumber(value: UInt32.max), limit: .int32), .failure(.outOfRange))
        XCTAssertEqual(EventValue.converting(NSNumber(value: Int64(-5)), limit: .int32), .success(.int(-5)))
    }

    func testCodableKeepsEachCase() throws {
        let args: EventArgs = ["s": "x", "i": 3, "d": 0.25, "b": false]
        let data = try JSONEncoder().encode(args)
        XCTAssertEqual(try JSONDecoder().decode(EventArgs.self, from: data), args)
    }

    func testAccessorsReadTheirCase() {
        XCTAssertEqual(EventValue.int(3).doubleValue, 3)
        XCTAssertNil(EventValue.string("3").intValue)
        XCTAssertEqual(EventValue.bool(true).description, "true")
    }
}

final class MeasurementEventDescriptionTests: XCTestCase {
    func testALabelWithControlCharactersIsEscapedOnOneLine() {
        let event = MeasurementEvent("feed/opened", label: "Feed\nopened \"now\"")
        XCTAssertEqual(event.description, #"[ua] feed/opened "Feed\nopened \"now\"""#)
    }
}
