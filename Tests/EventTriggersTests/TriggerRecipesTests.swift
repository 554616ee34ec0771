import EventTriggers
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsPlan
import XCTest

final class TriggerRecipesTests: XCTestCase {
    func testFireOnceRunsOnceThenDetaches() {
        let detector = TriggerDetector()
        let object = ScreenObject()
        let fired = Collected<String>()
        detector.attachOnce(.didAppear, to: object) { _ in fired.append("once") }
        detector.attach(TriggeredEvent(.didAppear) { _ in fired.append("always") }, to: object)

        XCTAssertTrue(detector.reportDidAppear(object))
        XCTAssertTrue(detector.reportDidAppear(object))
        detector.flush()
        XCTAssertEqual(fired.all, ["once", "always", "always"])
        XCTAssertEqual(detector.events(attachedTo: object).map(\.firesOnce), [false])
    }

    func testFireOnceFiresOnceEvenWhenReportedFromManyThreads() {
        let detector = TriggerDetector()
        let object = ScreenObject()
        let fired = Collected<Int>()
        detector.attachOnce(.didEndTouch, to: object) { _ in fired.append(1) }
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            detector.reportDidEndTouch(object)
        }
        detector.flush()
        XCTAssertEqual(fired.all, [1])
    }

    func testTimeOnScreenReportsTheDurationBetweenAppearAndDisappear() {
        let clock = ManualClock()
        let detector = TriggerDetector(now: { clock.now })
        let object = ScreenObject()
        let durations = Collected<TimeInterval>()
        detector.attach(TriggeredEvent.timeOnScreen { seconds, _ in durations.append(seconds) }, to: object)

        detector.reportDidDisappear(object)  // no appearance yet: nothing
        detector.reportDidAppear(object)
        clock.advance(by: 12.5)
        detector.reportDidDisappear(object)
        detector.reportDidDisappear(object)  // no new appearance: nothing
        detector.reportDidAppear(object)
        clock.advance(by: 3)
        detector.reportDidAppear(object)  // a second appearance restarts
        clock.advance(by: 4)
        detector.reportDidDisappear(object)
        detector.flush()
        XCTAssertEqual(durations.all, [12.5, 4])
    }

    func testTimeOnScreenPostsTheDurationAsAMeasurementEvent() {
        let clock = ManualClock()
        let posted = PostedEvents()
        let detector = TriggerDetector(now: { clock.now })
        let object = ScreenObject()
        detector.attachTimeOnScreen(to: object, args: ["screen": "article"], center: posted.center)

        detector.reportDidAppear(object)
        clock.advance(by: 42)
        detector.reportDidDisappear(object)
        detector.flush()

        XCTAssertEqual(posted.all.map(\.name), ["screen/time_on_screen"])
        XCTAssertEqual(posted.all.first?.args, ["screen": "article", "duration": 42.0])
        XCTAssertEqual(posted.all.first?.type, .activity)
    }

    func testPostingRecipePostsTheMeasurementEventWhenTriggered() {
        let posted = PostedEvents()
        let detector = TriggerDetector()
        let button = ScreenObject("buy")
        detector.attachPosting(
            "shop/buy_tapped", type: .click, category: "shop", args: ["sku": "A1"],
            on: .targetAction, to: button, center: posted.center)

        XCTAssertFalse(detector.reportDidEndTouch(button))
        XCTAssertTrue(detector.reportTargetAction(button, synchronously: true))

        XCTAssertEqual(posted.all.count, 1)
        XCTAssertEqual(posted.all.first?.name, "shop/buy_tapped")
        XCTAssertEqual(posted.all.first?.type, .click)
        XCTAssertEqual(posted.all.first?.category, "shop")
        XCTAssertEqual(posted.all.first?.args, ["sku": "A1"])
    }

    func testPostingOnceRecipePostsOnlyTheFirstTime() {
        let posted = PostedEvents()
        let detector = TriggerDetector()
        let screen = ScreenObject()
        detector.attachPosting("onboarding/seen", on: .didAppear, to: screen, firesOnce: true, center: posted.center)
        detector.reportDidAppear(screen)
        detector.reportDidAppear(screen)
        detector.flush()
        XCTAssertEqual(posted.all.map(\.name), ["onboarding/seen"])
    }
}

final class ScreenViewRecipeTests: XCTestCase {
    func testScreenViewRecipePostsOnlyForPlannedScreens() throws {
        let plan = try TrackingPlan(data: Data(#"{"version": 1, "screens": {"FeedViewController": "Feed"}}"#.utf8))
        let posted = PostedEvents()
        let detector = TriggerDetector()
        let feed = ScreenObject("feed")
        let debug = ScreenObject("debug")
        detector.attachScreenView("FeedViewController", to: feed, plan: plan, center: posted.center)
        detector.attachScreenView("DebugMenuViewController", to: debug, plan: plan, center: posted.center)

        XCTAssertTrue(detector.reportDidAppear(feed, debug, synchronously: true))

        XCTAssertEqual(posted.all.map(\.name), [TrackingPlan.screenViewEvent])
        XCTAssertEqual(posted.all.first?.args, ["screen": "FeedViewController", "label": "Feed"])
    }
}
