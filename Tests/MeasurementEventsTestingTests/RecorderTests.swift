import Foundation
import MeasurementEventsTesting
import XCTest

final class RecorderTests: XCTestCase {
    func testRecordsEventsInPostingOrderAndMalformedOnesApart() {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        MeasurementEvent.post("a/one", to: center)
        center.post(name: .measurementEvent, object: nil, userInfo: ["name": "a/two", "args": [1]])
        MeasurementEvent.post("a/three", args: ["n": 3], to: center)
        XCTAssertEqual(recorder.events.map(\.name), ["a/one", "a/three"])
        XCTAssertEqual(recorder.malformed.count, 1)
    }

    func testWaitReturnsAnEventAlreadyPosted() throws {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        MeasurementEvent.post("a/one", args: ["n": 1], to: center)
        XCTAssertEqual(try recorder.waitForEvent("a/one", timeout: 0).args, ["n": 1])
    }

    func testWaitBlocksUntilAnotherThreadPosts() throws {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
            MeasurementEvent.post("a/late", args: ["n": 2], to: center)
        }
        XCTAssertEqual(try recorder.waitForEvent("a/late", args: ["n": 2], timeout: 5).name, "a/late")
    }

    func testArgsMatchAsASubset() throws {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        MeasurementEvent.post("a/one", args: ["n": 1, "m": 2], to: center)
        XCTAssertNoThrow(try recorder.waitForEvent("a/one", args: ["m": 2], timeout: 0))
        XCTAssertThrowsError(try recorder.waitForEvent("a/one", args: ["m": 3], timeout: 0))
    }

    func testStopEndsRecordingAndResetForgets() {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        MeasurementEvent.post("a/one", to: center)
        recorder.stop()
        MeasurementEvent.post("a/two", to: center)
        XCTAssertEqual(recorder.events.map(\.name), ["a/one"])
        recorder.reset()
        XCTAssertEqual(recorder.events, [])
    }

    func testExpectNoEventNamesTheUnwantedPost() {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        MeasurementEvent.post("a/one", args: ["n": 1], to: center)
        XCTAssertNoThrow(try recorder.expectNoEvent("a/two"))
        XCTAssertThrowsError(try recorder.expectNoEvent("a/one")) { error in
            XCTAssertEqual(
                "\(error)",
                """
                measurement event [ua] a/one n=1 was posted but should not have been; posted (1):
                  - [ua] a/one n=1
                """)
        }
    }

    func testRecordingTrackerKeepsWhatAnAggregatorForwards() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["a/*"]), trackers: [tracker], configuration: .testing)
        aggregator.start()
        MeasurementEvent.post("a/one", to: center)
        MeasurementEvent.post("b/one", to: center)
        aggregator.flush()
        XCTAssertEqual(tracker.names, ["a/one"])
        XCTAssertEqual(tracker.flushCount, 1)
    }
}
