import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// Bad identity input is rejected with a clear error and counted, never a crash, and nothing
/// already accepted is lost.
final class MalformedIdentityTests: XCTestCase {
    private func decode(_ info: [AnyHashable: Any]?) -> Result<IdentityChange, MalformedIdentityError> {
        Result { () throws(MalformedIdentityError) in
            try IdentityChange(notification: Notification(name: .measurementIdentity, object: nil, userInfo: info))
        }
    }

    private func rejection(_ info: [AnyHashable: Any]?) -> String? {
        if case .failure(let error) = decode(info) { return error.description }
        return nil
    }

    func testNonScalarTraitsAreRejected() {
        let message = rejection(["change": "identify", "user_id": "u1", "traits": ["tags": ["a", "b"]]])
        XCTAssertEqual(
            message,
            "malformed identity change notification (org.measurementevents.identity): trait \"tags\" is "
                + "\(EventValue.ValueRejection.notScalar(typeName: "Array<String>"))")
    }

    func testAnEmptyUserIDIsRejected() {
        XCTAssertEqual(
            rejection(["change": "identify", "user_id": ""]),
            "malformed identity change notification (org.measurementevents.identity): user_id is empty, "
                + "expected a non-empty String (leave it out for no change)")
    }

    func testATenKilobyteUserIDIsRejected() {
        XCTAssertEqual(
            rejection(["change": "identify", "user_id": String(repeating: "x", count: 10_240)]),
            "malformed identity change notification (org.measurementevents.identity): user_id has 10240 bytes, "
                + "expected at most 1024")
    }

    func testOtherMalformedChangesAreRejected() {
        let cases: [([AnyHashable: Any]?, String)] = [
            (nil, "it has no userInfo"),
            (["change": "forget"], "the change \"forget\" is not one of \"identify\", \"reset\", \"group\""),
            ([:], "the change (missing) is not one of \"identify\", \"reset\", \"group\""),
            (["change": "identify", "user_id": 42], "user_id is an Int, expected a String"),
            (
                ["change": "identify", "user_id": "a\nb"],
                "user_id contains a control character, expected printable text"
            ),
            (["change": "group"], "a group change has no group_id, expected a String"),
            (
                ["change": "group", "group_id": "g", "traits": "x"],
                "traits is a String, expected a [String: Any] dictionary"
            ),
            (["change": "identify", "traits": ["": 1]], "a trait key is empty, expected a non-empty String"),
            (
                ["change": "identify", "traits": ["x": Double.nan]],
                "trait \"x\" is \(EventValue.ValueRejection.nonFinite)"
            ),
        ]
        for (info, expected) in cases {
            XCTAssertEqual(
                rejection(info), "malformed identity change notification (org.measurementevents.identity): \(expected)")
        }
    }

    func testTheAggregatorCountsAndReportsMalformedChangesAndKeepsWhatItHad() {
        let center = NotificationCenter()
        let tracker = OrderedTracker()
        let problems = LockedValue<[String]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        MeasurementIdentity.identify(userID: "user-1", to: center)
        MeasurementIdentity.identify(userID: String(repeating: "x", count: 10_240), to: center)
        MeasurementIdentity.identify(userID: "", to: center)
        center.post(name: .measurementIdentity, object: nil, userInfo: ["change": "identify", "traits": ["list": [1]]])
        MeasurementEvent.post("app/after", to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(aggregator.diagnostics.malformedIdentityChanges, 3)
        XCTAssertEqual(aggregator.diagnostics.identityChanges, 1)
        XCTAssertEqual(problems.withLock { $0.count }, 3)
        XCTAssertEqual(tracker.events.first?.userID, "user-1", "the accepted identity is kept")
    }

    func testAChangeMadeInCodeIsValidatedByTheSameRules() {
        XCTAssertThrowsError(try IdentityChange.group(groupID: "", traits: [:]).validated())
        XCTAssertNoThrow(try IdentityChange.group(groupID: "acme", traits: ["seats": 4]).validated())
    }
}
