import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
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

    /// Posts with the default type and no category fill a copy of one template userInfo by
    /// index: each post's userInfo is its own, holds only its own keys, and keeps its values
    /// after the next post.
    func testEachPostsUserInfoIsItsOwn() {
        let center = NotificationCenter()
        let seen = LockedValue<[[AnyHashable: Any]]>([])
        let observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { note in
            seen.withLock { $0.append(note.userInfo ?? [:]) }
        }
        defer { center.removeObserver(observer) }
        MeasurementEvent.post("a/first", args: ["id": "1"], to: center)
        MeasurementEvent.post("a/second", args: ["id": "2", "n": 2], to: center)
        MeasurementEvent.post("a/third", type: .click, category: "c", to: center)
        MeasurementEvent.post("a/fourth", to: center)
        let infos = seen.withLock { $0 }
        XCTAssertEqual(infos.map { $0["name"] as? String }, ["a/first", "a/second", "a/third", "a/fourth"])
        XCTAssertEqual(
            infos.map { Set($0.keys.compactMap { $0.base as? String }) },
            [["name", "args"], ["name", "args"], ["name", "args", "type", "category"], ["name", "args"]])
        XCTAssertEqual((infos[0]["args"] as? [String: Any])?["id"] as? String, "1")
        XCTAssertEqual((infos[0]["args"] as? [String: Any])?.count, 1)
        XCTAssertEqual((infos[1]["args"] as? [String: Any])?["n"] as? Int, 2)
        XCTAssertEqual(infos[2]["category"] as? String, "c")
        XCTAssertEqual((infos[3]["args"] as? [String: Any])?.count, 0)
    }

    func testDecodingRecoversTheEvent() throws {
        let note = Notification(
            name: .measurementEvent, object: nil,
            userInfo: MeasurementEvent.userInfo(
                name: "feed/item_tapped", type: .click, category: "feed", args: ["ratio": 0.5, "ok": true]))
        let event = try MeasurementEvent(notification: note)
        XCTAssertEqual(event.name, "feed/item_tapped")
        XCTAssertEqual(event.type, .click)
        XCTAssertEqual(event.category, "feed")
        XCTAssertEqual(event.args, ["ratio": 0.5, "ok": true])
    }
}

final class PostedArgsTests: XCTestCase {
    private struct Plan: EventValueConvertible {
        var eventValue: EventValue { "pro" }
    }

    /// Plain observers read `args` as `[String: Any]` with plain values, whatever the poster
    /// passed: literals, variables, `EventValue`s or a custom conformer.
    func testEveryArgReachesPlainObserversAsAPlainValue() throws {
        let center = NotificationCenter()
        let seen = LockedValue<[String: Any]>([:])
        let observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { note in
            let args = note.userInfo?["args"] as? [String: Any] ?? [:]
            seen.withLock { $0 = args }
        }
        defer { center.removeObserver(observer) }
        let position = 3
        MeasurementEvent.post("a/b", args: ["id": "42", "position": position, "ratio": 0.5, "ok": true], to: center)
        XCTAssertEqual(seen.withLock { $0["position"] } as? Int, 3)
        XCTAssertEqual(seen.withLock { $0["id"] } as? String, "42")
        MeasurementEvent.post("a/b", args: ["count": EventValue.int(7), "plan": Plan()], to: center)
        XCTAssertEqual(seen.withLock { $0["count"] } as? Int, 7)
        XCTAssertEqual(seen.withLock { $0["plan"] } as? String, "pro")
    }

    /// A custom conformer is asked for its value once, at post time, and every receiver sees
    /// that value.
    func testACustomValueIsEvaluatedOnceForEveryReceiver() {
        final class Counting: EventValueConvertible, @unchecked Sendable {
            // @unchecked: `calls` is a LockedValue.
            let calls = LockedValue(0)
            var eventValue: EventValue {
                .int(
                    calls.withLock {
                        $0 += 1; return $0
                    })
            }
        }
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        let value = Counting()
        MeasurementEvent.post("a/counted", args: ["n": value], to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(value.calls.withLock { $0 }, 1)
        XCTAssertEqual(recorder.events.first?.args["n"], 1)
        XCTAssertEqual(tracker.events.first?.args["n"], 1)
    }

    func testAnAggregatorRejectsANonFiniteArgFromAFastPathPost() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        MeasurementEvent.post("a/bad", args: ["ratio": Double.nan], to: center)
        MeasurementEvent.post("a/good", args: ["ratio": 0.5], to: center)
        MeasurementEvent.post("", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["a/good"])
        XCTAssertEqual(aggregator.diagnostics.malformed, 2)
        XCTAssertEqual(aggregator.diagnostics.received, 3)
        XCTAssertEqual(
            aggregator.diagnostics.recentMalformed.map(\.description),
            [
                #"malformed measurement event notification (org.measurementevents.event): the event name "" is invalid: the name is empty"#,
                #"malformed measurement event notification (org.measurementevents.event): arg "ratio" is a non-finite number (NaN or infinity)"#,
            ])
    }

    func testANestedRawPostIsNotMistakenForTheOuterPost() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = .synchronous
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        // Registered before the aggregator, so it runs inside the outer post, before or after it.
        let observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { note in
            guard note.userInfo?["name"] as? String == "outer/post" else { return }
            center.post(name: .measurementEvent, object: nil, userInfo: ["name": "inner/raw", "args": ["n": 1]])
        }
        defer { center.removeObserver(observer) }
        aggregator.start()
        MeasurementEvent.post("outer/post", args: ["n": 0], to: center)
        XCTAssertEqual(
            Set(tracker.events.map { "\($0.name) n=\($0.args["n"]!)" }), ["outer/post n=0", "inner/raw n=1"])
    }
}
