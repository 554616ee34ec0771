import Foundation
import MeasurementEvents
import XCTest

final class PostingTests: XCTestCase {
    func testPostCarriesNameAndPlainArgsOnTheUniformName() {
        let center = NotificationCenter()
        let posted = expectation(forNotification: .measurementEvent, object: nil, notificationCenter: center) { note in
            note.object == nil
                && note.userInfo?["name"] as? String == "feed/item_tapped"
                && (note.userInfo?["args"] as? [String: Any])?["item_id"] as? String == "42"
                && (note.userInfo?["args"] as? [String: Any])?["position"] as? Int == 3
        }
        MeasurementEvent.post("feed/item_tapped", args: ["item_id": "42", "position": 3], to: center)
        wait(for: [posted], timeout: 1)
    }

    func testDecodingRecoversTheEvent() throws {
        let note = Notification(
            name: .measurementEvent, object: nil,
            userInfo: MeasurementEvent.userInfo(name: "feed/item_tapped", type: .click, category: "feed", args: ["ratio": 0.5, "ok": true]))
        let event = try MeasurementEvent(notification: note)
        XCTAssertEqual(event.name, "feed/item_tapped")
        XCTAssertEqual(event.type, .click)
        XCTAssertEqual(event.category, "feed")
        XCTAssertEqual(event.args, ["ratio": 0.5, "ok": true])
    }
}
