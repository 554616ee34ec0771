import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// The attribution step stamps each event with the app's foreground clock as the lifecycle
/// moves posted before it left it (what GA4's `engagement_time_msec` is made of), in posting
/// order, whatever the delivery queue was doing meanwhile.
final class AttributionForegroundTimeTests: XCTestCase {
    private let center = NotificationCenter()
    private let clock = ManualEventClock()
    private let tracker = RecordingTracker()

    private func makeAggregator() -> EventAggregator {
        var configuration = EventAggregator.Configuration.testing
        configuration.clock = clock
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["test/*"]), trackers: [tracker], configuration: configuration)
        aggregator.start()
        return aggregator
    }

    private func post(_ name: String) {
        MeasurementEvent.post(EventName(rawValue: "test/\(name)"), to: center)
    }

    /// Milliseconds of foreground time between consecutive recorded events (the first from the start).
    private func foregroundMilliseconds() -> [Int64] {
        var previous: ForegroundClock.Reading?
        return tracker.events.map { event in
            guard let reading = event.foregroundReading else { return -1 }
            defer { previous = reading }
            return reading.milliseconds(since: previous)
        }
    }

    func testForegroundTimeBetweenEventsLeavesTheBackgroundOut() {
        let aggregator = makeAggregator()
        clock.advance(by: 10)
        post("a")
        aggregator.applicationDidEnterBackground()
        clock.advance(by: 3_600)
        aggregator.applicationWillEnterForeground()
        clock.advance(by: 5)
        post("b")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["test/a", "test/b"])
        XCTAssertEqual(foregroundMilliseconds(), [10_000, 5_000])
        XCTAssertNotEqual(tracker.events[0].sessionID, tracker.events[1].sessionID, "an hour away ends the session")
    }

    func testLifecycleMovesApplyInPostingOrderNotAtDelivery() {
        // The delivery queue is held inside the first event's tracking while the rest is posted,
        // then runs a day later: the times are those of posting.
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let blocking = ClosureTracker { event in
            guard event.name == "test/block" else { return }
            entered.signal()
            release.wait()
        }
        var configuration = EventAggregator.Configuration.testing
        configuration.clock = clock
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["test/*"]), trackers: [blocking, tracker],
            configuration: configuration)
        aggregator.start()
        post("block")
        entered.wait()
        clock.advance(by: 2)
        post("a")
        aggregator.applicationDidEnterBackground()
        clock.advance(by: 60)
        post("in_background")
        aggregator.applicationWillEnterForeground()
        clock.advance(by: 3)
        post("b")
        clock.advance(by: 86_400)
        release.signal()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["test/block", "test/a", "test/in_background", "test/b"])
        XCTAssertEqual(foregroundMilliseconds(), [0, 2_000, 0, 3_000])
    }

    func testForgettingTheUserStartsItsForegroundTimeAgain() {
        let aggregator = makeAggregator()
        clock.advance(by: 20)
        post("a")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(foregroundMilliseconds(), [20_000])
        clock.advance(by: 30)
        aggregator.forgetUser()  // the recorder's events are discarded with the user's
        clock.advance(by: 4)
        post("b")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(foregroundMilliseconds(), [4_000], "the new user's clock starts at forgetUser(), not at 0 s")
    }

    func testAResetStartsTheNewAnonymousUsersTimeButAnIdentifyKeepsIt() {
        let aggregator = makeAggregator()
        clock.advance(by: 20)
        post("a")
        clock.advance(by: 6)
        MeasurementIdentity.identify(userID: "user-1", to: center)
        clock.advance(by: 1)
        post("b")
        clock.advance(by: 30)
        MeasurementIdentity.reset(to: center)
        clock.advance(by: 4)
        post("c")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(foregroundMilliseconds(), [20_000, 7_000, 4_000])
        XCTAssertNotEqual(tracker.events[2].foregroundReading?.epoch, tracker.events[1].foregroundReading?.epoch)
    }

    func testAnEventWithAnAttributionSetByHandHasNoReading() {
        var event = MeasurementEvent("test/a")
        event.attribution = EventAttribution(identity: EventIdentity(anonymousID: "a"))
        XCTAssertNil(event.foregroundReading)
    }
}
