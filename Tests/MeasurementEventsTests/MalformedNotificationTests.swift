import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

final class MalformedNotificationTests: XCTestCase {
    /// Each malformed userInfo, and the exact reason it is rejected with.
    private let cases: [(label: String, userInfo: [AnyHashable: Any]?, reason: String)] = [
        ("nil userInfo", nil, "it has no userInfo"),
        ("no name", ["args": ["a": 1]], "userInfo has no event name"),
        ("numeric name", ["name": 42], "the event name is an Int, expected a String"),
        ("empty name", ["name": ""], #"the event name "" is invalid: the name is empty"#),
        (
            "very long name", ["name": String(repeating: "x", count: 300)],
            #"the event name "\#(String(repeating: "x", count: 80))…" is invalid: the name is 300 bytes long; at most 256 are allowed"#
        ),
        (
            "name with a space", ["name": "feed/item tapped"],
            #"the event name "feed/item tapped" is invalid: the name contains whitespace or a control character"#
        ),
        (
            "name with a newline", ["name": "feed/\nopened\u{0}"],
            #"the event name "feed/\nopened\u{0}" is invalid: the name contains whitespace or a control character"#
        ),
        (
            "array args", ["name": "feed/opened", "args": [1, 2]],
            "args is an Array<Int>, expected a [String: Any] dictionary"
        ),
        (
            "string args", ["name": "feed/opened", "args": "position=3"],
            "args is a String, expected a [String: Any] dictionary"
        ),
        (
            "nested dictionary value", ["name": "feed/opened", "args": ["user": ["id": 1]] as [String: Any]],
            #"arg "user" is a Dictionary<String, Int>, not a string, integer, double or bool"#
        ),
        (
            "NSNull value", ["name": "feed/opened", "args": ["item": NSNull()] as [String: Any]],
            #"arg "item" is an NSNull, not a string, integer, double or bool"#
        ),
        (
            "array value", ["name": "feed/opened", "args": ["ids": [1, 2]] as [String: Any]],
            #"arg "ids" is an Array<Int>, not a string, integer, double or bool"#
        ),
        (
            "NaN value", ["name": "feed/opened", "args": ["ratio": Double.nan] as [String: Any]],
            #"arg "ratio" is a non-finite number (NaN or infinity)"#
        ),
        (
            "integer key", ["name": "feed/opened", "args": [7: "x"] as [AnyHashable: Any]],
            "an arg key is an Int, expected a String"
        ),
        (
            "unknown type", ["name": "feed/opened", "type": "zz"],
            #"the event type "zz" is not one of ac, cl, im, rd, ua"#
        ),
        ("numeric category", ["name": "feed/opened", "category": 3], "the category is an Int, expected a String"),
        ("bad id", ["name": "feed/opened", "id": "not-a-uuid"], #"the id "not-a-uuid" is not a UUID"#),
        (
            "far-future timestamp", ["name": "feed/opened", "timestamp": 1e300],
            "the timestamp 1e+300 is not a number of seconds since 1970 between years 1 and 9999"
        ),
    ]

    func testDecodingRejectsEachMalformedNotificationWithItsReason() {
        for item in cases {
            let note = Notification(name: .measurementEvent, object: nil, userInfo: item.userInfo)
            XCTAssertThrowsError(try MeasurementEvent(notification: note), item.label) { error in
                XCTAssertEqual(
                    "\(error)",
                    "malformed measurement event notification (org.measurementevents.event): \(item.reason)",
                    item.label)
            }
        }
    }

    func testTheAggregatorCountsEachOneAndStillDeliversTheNextValidEvent() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let problems = LockedValue(0)
        var configuration = EventAggregator.Configuration.testing
        configuration.problemHandler = { _ in problems.withLock { $0 += 1 } }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        for (index, item) in cases.enumerated() {
            center.post(name: .measurementEvent, object: nil, userInfo: item.userInfo)
            MeasurementEvent.post("feed/valid", args: ["after": index], to: center)
        }
        aggregator.waitUntilDelivered()
        let diagnostics = aggregator.diagnostics
        XCTAssertEqual(diagnostics.malformed, cases.count)
        XCTAssertEqual(diagnostics.received, cases.count * 2)
        XCTAssertEqual(problems.withLock { $0 }, cases.count)
        XCTAssertEqual(tracker.events.map { $0.args["after"] }, (0..<cases.count).map { .int($0) })
        XCTAssertEqual(diagnostics.recentMalformed.count, cases.count)
    }

    /// Args in every shape a userInfo may carry them are read the same way: a Swift dictionary,
    /// an `NSDictionary` (what a bridge from Objective-C hands over), and an
    /// `[AnyHashable: Any]` whose keys are strings.
    func testArgsAreReadFromEveryDictionaryShape() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        let shapes: [Any] = [
            ["item": "42", "position": 3] as [String: Any],
            NSDictionary(dictionary: ["item": "42", "position": 3]),
            ["item": "42", "position": 3] as [AnyHashable: Any],
        ]
        for args in shapes {
            center.post(name: .measurementEvent, object: nil, userInfo: ["name": "feed/opened", "args": args])
        }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.diagnostics.malformed, 0)
        XCTAssertEqual(tracker.events.map(\.args), Array(repeating: ["item": "42", "position": 3], count: 3))
    }

    func testArgsOfFilteredOutEventsAreNotInspected() {
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["feed/*"]), configuration: .testing)
        aggregator.start()
        center.post(name: .measurementEvent, object: nil, userInfo: ["name": "settings/opened", "args": [1]])
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.diagnostics.filteredOut, 1)
        XCTAssertEqual(aggregator.diagnostics.malformed, 0)
    }

    func testTheRecorderListsMalformedNotificationsInItsFailureMessage() {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        center.post(name: .measurementEvent, object: nil, userInfo: ["name": 1])
        MeasurementEvent.post("feed/opened", to: center)
        XCTAssertThrowsError(try recorder.waitForEvent("feed/closed", timeout: 0)) { error in
            XCTAssertEqual(
                "\(error)",
                """
                no measurement event "feed/closed" was posted within 0.0 s; posted (1):
                  - [ua] feed/opened
                malformed notifications (1):
                  - malformed measurement event notification (org.measurementevents.event): the event name is an Int, expected a String
                """)
        }
    }
}
