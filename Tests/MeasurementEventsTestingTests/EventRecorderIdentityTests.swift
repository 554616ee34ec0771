import Foundation
import MeasurementEventsTesting
import XCTest

/// The recorder keeps identity changes apart from events.
final class EventRecorderIdentityTests: XCTestCase {
    func testRecordsIdentityChangesInOrderApartFromEvents() {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        MeasurementIdentity.identify(userID: "u1", traits: ["plan": "pro"], to: center)
        MeasurementEvent.post("a/one", to: center)
        MeasurementIdentity.group("team-9", to: center)
        MeasurementIdentity.reset(to: center)
        XCTAssertEqual(
            recorder.identityChanges,
            [.identify(userID: "u1", traits: ["plan": "pro"]), .group(groupID: "team-9", traits: [:]), .reset])
        XCTAssertEqual(recorder.events.map(\.name), ["a/one"])
    }

    func testMalformedIdentityChangeIsRecordedApart() {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        center.post(name: .measurementIdentity, object: nil, userInfo: ["change": "identify", "user_id": 42])
        XCTAssertEqual(recorder.identityChanges, [])
        XCTAssertEqual(recorder.malformedIdentityChanges.count, 1)
        XCTAssertEqual(recorder.malformed.count, 0, "not a malformed event")
    }

    func testIdentityChangesAreNeitherEventsNorMalformedEvents() throws {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        MeasurementIdentity.reset(to: center)
        MeasurementIdentity.identify(userID: "u1", to: center)
        XCTAssertEqual(recorder.events.count, 0)
        XCTAssertEqual(recorder.malformed.count, 0)
        MeasurementEvent.post("a/one", to: center)
        XCTAssertEqual(try recorder.waitForEvent("a/one", timeout: 0).name, "a/one")
        XCTAssertEqual(recorder.events.count, 1)
    }

    func testResetForgetsIdentityChanges() {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        MeasurementIdentity.reset(to: center)
        center.post(name: .measurementIdentity, object: nil, userInfo: ["change": "rename"])
        recorder.reset()
        XCTAssertEqual(recorder.identityChanges, [])
        XCTAssertEqual(recorder.malformedIdentityChanges.count, 0)
    }

    func testStoppedRecorderIgnoresIdentityChanges() {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        recorder.stop()
        MeasurementIdentity.reset(to: center)
        XCTAssertEqual(recorder.identityChanges, [])
    }
}
