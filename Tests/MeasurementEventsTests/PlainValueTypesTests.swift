import XCTest

@testable import MeasurementEvents

final class PlainValueTypesTests: XCTestCase {
    private struct Custom: EventValueConvertible {
        var eventValue: EventValue { .string("custom") }
    }

    /// A class conformer: its static type in the args differs from its dynamic one.
    private class Base: EventValueConvertible, @unchecked Sendable {
        var eventValue: EventValue { .string("base") }
    }
    private final class Derived: Base, @unchecked Sendable {
        override var eventValue: EventValue { .string("derived") }
    }

    func testOnlyTheFourFoundationScalarsArePlain() {
        XCTAssertTrue(PlainValueTypes.contains(String.self))
        XCTAssertTrue(PlainValueTypes.contains(Int.self))
        XCTAssertTrue(PlainValueTypes.contains(Double.self))
        XCTAssertTrue(PlainValueTypes.contains(Bool.self))
        XCTAssertFalse(PlainValueTypes.contains(EventValue.self))
        XCTAssertFalse(PlainValueTypes.contains(Int64.self))
        XCTAssertFalse(PlainValueTypes.contains(Custom.self))
    }

    /// What an outside observer reads from a post: plain values only, whatever was passed.
    func testAnObserverReadsPlainValuesFromAPostWithMixedArgs() {
        let center = NotificationCenter()
        let seen = LockedValue<[String: Any]?>(nil)
        let observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { notification in
            seen.withLock { $0 = notification.userInfo?[MeasurementEvent.UserInfoKey.args] as? [String: Any] }
        }
        defer { center.removeObserver(observer) }
        MeasurementEvent.post(
            "a/b",
            args: ["plain": 1, "event_value": EventValue.int(2), "custom": Custom(), "object": Derived() as Base],
            to: center)
        let args = seen.withLock { $0 }
        XCTAssertEqual(args?["plain"] as? Int, 1)
        XCTAssertEqual(args?["event_value"] as? Int, 2)
        XCTAssertEqual(args?["custom"] as? String, "custom")
        XCTAssertEqual(args?["object"] as? String, "derived")
        MeasurementEvent.post("a/b", args: ["object": Derived()], to: center)
        XCTAssertEqual(seen.withLock { $0 }?["object"] as? String, "derived")
        MeasurementEvent.post("a/b", args: ["s": "x", "i": 1, "d": 1.5, "b": true], to: center)
        let plain = seen.withLock { $0 }
        XCTAssertEqual(plain?["s"] as? String, "x")
        XCTAssertEqual(plain?["b"] as? Bool, true)
    }
}
