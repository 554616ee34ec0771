import DemoFeed
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import Testing
import XCTest

/// A feature module (here the demo's `DemoFeed` target, which depends only on
/// MeasurementEvents) is tested with nothing but a notification expectation.
final class ModulePostingXCTests: XCTestCase {
    func testAModulePostFulfilsAPlainNotificationExpectation() {
        let center = NotificationCenter()
        let tapped = expectation(
            forNotification: .measurementEvent, object: nil, notificationCenter: center,
            handler: MeasurementEvent.matcher("feed/item_tapped", args: ["item_id": "42", "position": 3]))
        FeedScreen(center: center).simulateVisit()
        wait(for: [tapped], timeout: 1)
    }

    func testTheMeasurementEventExpectationShorthand() {
        let center = NotificationCenter()
        let shared = expectation(forMeasurementEvent: "feed/item_shared", args: ["channel": "messages"], center: center)
        FeedScreen(center: center).simulateVisit()
        wait(for: [shared], timeout: 1)
    }

    func testAMatcherRejectsOtherNamesArgsAndTypes() {
        let note = Notification(
            name: .measurementEvent, object: nil,
            userInfo: MeasurementEvent.userInfo(name: "feed/item_tapped", type: .click, args: ["position": 3]))
        XCTAssertTrue(MeasurementEvent.matcher("feed/item_tapped")(note))
        XCTAssertTrue(MeasurementEvent.matcher("feed/item_tapped", args: ["position": 3], type: .click)(note))
        XCTAssertFalse(MeasurementEvent.matcher("feed/item_tapped", args: ["position": 4])(note))
        XCTAssertFalse(MeasurementEvent.matcher("feed/item_tapped", type: .impression)(note))
        XCTAssertFalse(MeasurementEvent.matcher("feed/opened")(note))
        XCTAssertFalse(MeasurementEvent.matcher("feed/item_tapped")(Notification(name: .measurementEvent)))
    }

    func testTheRecorderAssertsFromXCTest() {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        FeedScreen(center: center).simulateVisit()
        let tapped = recorder.assertPosted("feed/item_tapped", args: ["position": 3], type: .click)
        XCTAssertEqual(tapped?.args["item_id"], "42")
        recorder.assertNotPosted("feed/item_tapped", args: ["position": 4])
    }
}

/// The same with Swift Testing.
@Suite struct ModulePostingSwiftTests {
    @Test func aModulePostIsSeenByANotificationObserver() async throws {
        let center = NotificationCenter()
        await confirmation("feed/item_tapped posted") { confirmed in
            let observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { note in
                if MeasurementEvent.matcher("feed/item_tapped", args: ["position": 3])(note) { confirmed() }
            }
            defer { center.removeObserver(observer) }
            FeedScreen(center: center).simulateVisit()
        }
    }

    @Test func theRecorderWaitsAsynchronouslyForAPostFromAnotherThread() async throws {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { FeedScreen(center: center).simulateVisit() }
        let event = try await recorder.waitForEvent("feed/item_shared", args: ["item_id": "42"], timeout: 5)
        #expect(event.args["channel"] == "messages")
        #expect(recorder.events(named: "feed/opened").count == 1)
    }

    @Test func aTimeoutListsWhatWasPosted() async throws {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        MeasurementEvent.post("feed/opened", args: ["source": "push"], to: center)
        // Not the result of #expect(throws:): it needs Swift 6.1, and the package admits 6.0.
        do {
            _ = try await recorder.waitForEvent("feed/closed", timeout: 0.01)
            Issue.record("expected EventRecorderTimeout, the wait returned an event")
        } catch let error as EventRecorderTimeout {
            #expect(
                error.description == """
                    no measurement event "feed/closed" was posted within 0.01 s; posted (1):
                      - [ua] feed/opened source=push
                    """)
        }
    }
}
