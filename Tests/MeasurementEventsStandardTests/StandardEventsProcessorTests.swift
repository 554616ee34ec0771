import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsPlan
import MeasurementEventsStandard
import XCTest

final class StandardEventsProcessorTests: XCTestCase {
    // MARK: Bad input: reported, counted, nothing else dropped

    func testInvalidOrderIsReportedCountedAndDroppedAlone() {
        let setup = StandardSetup()
        Order(currency: "EUR", products: [.init(productID: "a", price: decimal("1"), quantity: -1)])
            .post(to: setup.center)
        setup.post("test/after")
        XCTAssertEqual(setup.delivered.map(\.name), ["test/after"])
        XCTAssertEqual(setup.processor.counts.invalid, 1)
        XCTAssertEqual(setup.aggregator.diagnostics.discarded, 1)
        XCTAssertEqual(
            setup.problems.map(\.description),
            ["order/completed: products.0.quantity: found -1, expected an integer of at least 1; the order was dropped"]
        )
    }

    func testValidOrderPassesUnchanged() {
        let setup = StandardSetup()
        let order = Order(currency: "EUR", products: [.init(productID: "a", price: decimal("0.1"), quantity: 3)])
        order.post(to: setup.center)
        XCTAssertEqual(setup.delivered.first?.args, order.args)
        XCTAssertEqual(setup.problems, [])
    }

    func testEmptyScreenNameIsReported() {
        let setup = StandardSetup()
        ScreenView("").post(to: setup.center)
        ScreenView("Feed").post(to: setup.center)
        XCTAssertEqual(setup.delivered.compactMap { ScreenView($0)?.name }, ["Feed"])
        XCTAssertEqual(
            setup.problems.map(\.description),
            [#"screen/viewed: screen: found "", expected a non-empty screen name; the screen view was dropped"#])
    }

    func testURLOver8KBIsReportedAndNotStored() {
        let setup = StandardSetup()
        let url = "myapp://feed?utm_source=" + String(repeating: "a", count: 100_000)
        DeepLink(text: url).post(to: setup.center)
        setup.post("test/after")
        XCTAssertEqual(setup.delivered.map(\.name), ["test/after"])
        XCTAssertEqual(setup.delivered.first?.args["utm_source"], nil, "no campaign was stored")
        XCTAssertEqual(
            setup.problems.map(\.description),
            [
                "app/deep_link_opened: url: found 100024 bytes, expected a URL of at most 8192 bytes; the link was not stored"
            ])
    }

    func testControlCharactersInALinkAreReported() {
        let setup = StandardSetup()
        DeepLink(text: "myapp://feed?utm_source=a\u{7}b").post(to: setup.center)
        XCTAssertEqual(setup.delivered, [])
        XCTAssertEqual(setup.problems.first?.found, "the control character U+7")
    }

    func testLinkWithoutSchemeIsReported() {
        let setup = StandardSetup()
        DeepLink(text: "not a url").post(to: setup.center)
        XCTAssertEqual(setup.delivered, [])
        XCTAssertEqual(setup.problems.first?.arg, "url")
    }

    // MARK: Campaigns

    func testCampaignOfADeepLinkIsContextForTheRestOfTheSession() {
        let setup = StandardSetup()
        DeepLink(URL(string: "https://example.com/feed?utm_source=newsletter&utm_medium=email&utm_campaign=spring")!)
            .post(to: setup.center)
        setup.post("test/tapped", args: ["item_id": "42"])
        setup.clock.advance(by: 31 * 60)
        setup.post("test/next_session")
        let events = setup.delivered
        XCTAssertEqual(
            events.first?.args,
            [
                "url": "https://example.com/feed?utm_source=newsletter&utm_medium=email&utm_campaign=spring",
                "utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "spring",
            ])
        XCTAssertEqual(
            events[1].args,
            ["item_id": "42", "utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "spring"])
        XCTAssertEqual(events[2].args, [:], "a new session has no campaign")
    }

    // MARK: Timing

    func testTimedEventCarriesDurationFromTheAggregatorsClock() {
        let setup = StandardSetup()
        Timers.start("test/checkout", to: setup.center)
        setup.aggregator.waitUntilDelivered()
        setup.clock.advance(by: 42.5)
        setup.post("test/checkout")
        setup.post("test/checkout")
        let events = setup.delivered
        XCTAssertEqual(events.map(\.name), ["test/checkout", "test/checkout"], "timer/started is consumed")
        XCTAssertEqual(events[0].args["duration"], .double(42.5))
        XCTAssertEqual(events[1].args["duration"], nil, "a timer times one post")
        XCTAssertEqual(setup.processor.counts.timedEvents, 1)
    }

    func testTimingStartedOnOneThreadEndsOnAnotherInPostingOrder() {
        let setup = StandardSetup()
        let started = DispatchSemaphore(value: 0)
        Thread {
            Timers.start("test/upload", to: setup.center)
            started.signal()
        }.start()
        started.wait()
        setup.clock.advance(by: 3)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            setup.post("test/upload")
            finished.signal()
        }.start()
        finished.wait()
        XCTAssertEqual(setup.delivered.first?.args["duration"], .double(3))
    }

    func testTimerNeverFinishedIsDroppedAtSessionEndAndCounted() {
        let setup = StandardSetup()
        Timers.start("test/abandoned", to: setup.center)
        setup.post("test/other")
        setup.aggregator.waitUntilDelivered()
        setup.clock.advance(by: 31 * 60)
        setup.post("test/abandoned")
        XCTAssertEqual(setup.delivered.last?.args["duration"], nil)
        XCTAssertEqual(setup.processor.counts.droppedTimers, 1)
        XCTAssertEqual(setup.problems.map(\.arg), ["timer"])
    }

    // MARK: Errors

    func testErrorsAreRateLimitedPerTypeAndCounted() {
        let setup = StandardSetup(maximumErrorsPerType: 2)
        for _ in 0..<5 { ErrorEvent(CocoaError(.fileNoSuchFile)).post(to: setup.center) }
        ErrorEvent(URLError(.timedOut)).post(to: setup.center)
        let types = setup.delivered.compactMap { $0.args["error_type"]?.stringValue }
        XCTAssertEqual(types, ["CocoaError", "CocoaError", "URLError"])
        XCTAssertEqual(setup.processor.counts.rateLimitedErrors, 3)
        XCTAssertEqual(setup.problems.count, 1, "the first drop of a type is reported, not each")
    }

    func testErrorMessageIsSentOnlyWhenTheAppOptsIn() {
        let quiet = StandardSetup()
        ErrorEvent(URLError(.timedOut), context: "feed/refresh").post(to: quiet.center)
        let event = quiet.delivered.first
        XCTAssertEqual(event?.args["message"], nil)
        XCTAssertEqual(event?.args["error_domain"], .string(NSURLErrorDomain))
        XCTAssertEqual(event?.args["error_code"], .int(URLError.timedOut.rawValue))
        XCTAssertEqual(event?.args["context"], "feed/refresh")

        let opted = StandardSetup(sendsErrorMessages: true)
        ErrorEvent(URLError(.timedOut)).post(to: opted.center)
        XCTAssertNotNil(opted.delivered.first?.args["message"])
    }

    // MARK: Screens and aliases

    func testTrackingPlanScreenPostIsTheTypedScreenEvent() throws {
        let plan = try TrackingPlan(data: Data(#"{"version": 1, "screens": {"FeedViewController": "Feed"}}"#.utf8))
        let setup = StandardSetup()
        XCTAssertTrue(plan.reportScreenAppeared("FeedViewController", to: setup.center))
        XCTAssertEqual(setup.delivered.compactMap(ScreenView.init), [ScreenView("Feed")])
    }

    func testAliasIsPostedWithBothIDs() {
        let setup = StandardSetup()
        Alias.post(previousID: "anon-1234", userID: "user-42", to: setup.center)
        XCTAssertEqual(setup.delivered.first?.args, ["previous_id": "anon-1234", "user_id": "user-42"])
    }
}
