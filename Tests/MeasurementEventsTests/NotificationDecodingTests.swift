import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// Decoding reads small userInfo dictionaries in one pass and falls back to key lookups for
/// large ones or ones with non-String keys; both paths must read the same event.
final class NotificationDecodingTests: XCTestCase {
    private let id = UUID(uuidString: "6F9619FF-8B86-4011-B42D-00C04FC964FF")!

    private func fullUserInfo() -> [AnyHashable: Any] {
        [
            "name": "feed/item_tapped", "args": ["item_id": "42", "position": 3, "ratio": 0.5, "promoted": true],
            "type": "cl", "category": "feed", "id": id.uuidString, "timestamp": 1_700_000_000.0,
        ]
    }

    private func assertDecodesFullEvent(
        _ userInfo: [AnyHashable: Any], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let event = try MeasurementEvent(
            notification: Notification(name: .measurementEvent, object: nil, userInfo: userInfo))
        XCTAssertEqual(event.name, "feed/item_tapped", file: file, line: line)
        XCTAssertEqual(
            event.args, ["item_id": "42", "position": 3, "ratio": 0.5, "promoted": true], file: file, line: line)
        XCTAssertEqual(event.type, .click, file: file, line: line)
        XCTAssertEqual(event.category, "feed", file: file, line: line)
        XCTAssertEqual(event.id, id, file: file, line: line)
        XCTAssertEqual(event.timestamp, Date(timeIntervalSince1970: 1_700_000_000), file: file, line: line)
    }

    func testSmallUserInfoDecodesEveryField() throws {
        try assertDecodesFullEvent(fullUserInfo())
    }

    func testUserInfoWithManyUnrelatedKeysDecodesEveryField() throws {
        var userInfo = fullUserInfo()
        for index in 0..<20 { userInfo["extra\(index)"] = index }
        try assertDecodesFullEvent(userInfo)
    }

    func testUserInfoWithANonStringKeyDecodesEveryField() throws {
        var userInfo = fullUserInfo()
        userInfo[7] = "seven"
        try assertDecodesFullEvent(userInfo)
    }

    func testArgsTypedWithAnyHashableKeysDecode() throws {
        let args: [AnyHashable: Any] = ["item_id": "42", "position": 3]
        let event = try MeasurementEvent(
            notification: Notification(
                name: .measurementEvent, object: nil, userInfo: ["name": "feed/item_tapped", "args": args]))
        XCTAssertEqual(event.args, ["item_id": "42", "position": 3])
    }
}
