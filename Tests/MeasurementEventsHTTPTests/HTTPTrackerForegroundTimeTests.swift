import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsGA4
import XCTest

@testable import MeasurementEventsHTTP

/// Each event's foreground time since the previous event the tracker got, decided when it is
/// tracked (in posting order, from the aggregator's lifecycle moves) and kept in the queue: GA4
/// receives it as `engagement_time_msec`, however late the event is sent.
final class HTTPTrackerForegroundTimeTests: LoopbackTestCase {
    private func ga4Tracker(clock: TestClock, directory: URL) throws -> HTTPTracker {
        try HTTPTracker(
            encoder: GA4Encoder(measurementID: "G-TEST", apiSecret: "s", baseURL: collector.baseURL, validation: .off),
            directory: directory, configuration: testConfiguration(clock: clock, flushAt: 100))
    }

    func testGA4GetsTheForegroundTimeSinceThePreviousEventWithoutTheBackground() throws {
        let clock = TestClock(runsImmediately: false)
        let server = GA4Server()
        collector.playGA4(server)
        let tracker = try ga4Tracker(clock: clock, directory: directory)
        var configuration = EventAggregator.Configuration.testing
        configuration.clock = clock
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()

        clock.advance(by: 10)
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.applicationDidEnterBackground()
        clock.advance(by: 3_600)
        aggregator.applicationWillEnterForeground()
        clock.advance(by: 5)
        MeasurementEvent.post("feed/item_tapped", to: center)
        aggregator.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))

        XCTAssertEqual(server.seen.events, ["feed_opened": 1, "feed_item_tapped": 1])
        XCTAssertEqual(server.seen.engagementTimes, [10_000, 5_000])
    }

    func testABacklogSentADayLaterKeepsTheTimesMeasuredWhenItWasTracked() throws {
        let clock = TestClock(runsImmediately: false)
        let server = GA4Server()
        collector.playGA4(server)
        // As the aggregator stamps them: foreground 10 s, event, an hour in the background,
        // foreground 5 s, event.
        var foreground = ForegroundClock(startingAt: clock.now())
        func event(_ name: EventName, after seconds: TimeInterval) -> MeasurementEvent {
            clock.advance(by: seconds)
            var event = MeasurementEvent(name, timestamp: clock.now())
            event.attributionStorage = AttributionStorage(
                EventAttribution(identity: EventIdentity(anonymousID: "device-1")), foreground: foreground)
            return event
        }
        let offline = try ga4Tracker(clock: clock, directory: directory)
        offline.networkDidChange(isOnline: false)
        try offline.track(event("feed/opened", after: 10))
        foreground.enterBackground(at: clock.now())
        clock.advance(by: 3_600)
        foreground.enterForeground(at: clock.now())
        try offline.track(event("feed/item_tapped", after: 5))
        try offline.flush()  // to storage; nothing leaves offline
        XCTAssertEqual(offline.diagnostics.queued, 2)

        // The next launch, a day later: the queue on disk is all there is (a copy of it, as this
        // process still holds the first tracker's directory).
        let nextLaunch = directory.appendingPathComponent("next-launch")
        try FileManager.default.createDirectory(at: nextLaunch, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: directory.appendingPathComponent("queue"), to: nextLaunch.appendingPathComponent("queue"))
        clock.advance(by: 86_400)
        let tracker = try ga4Tracker(clock: clock, directory: nextLaunch)
        try tracker.consentDidChange(to: .granted)
        try tracker.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(server.seen.engagementTimes, [10_000, 5_000])
    }

    func testEachTrackerMeasuresFromThePreviousEventItGot() throws {
        var foreground = ForegroundClock(startingAt: Date(timeIntervalSince1970: 1_714_566_600))
        var events: [MeasurementEvent] = []
        for second in [3.0, 7, 12] {
            var event = MeasurementEvent("feed/shown", timestamp: Date(timeIntervalSince1970: 1_714_566_600 + second))
            event.attributionStorage = AttributionStorage(
                EventAttribution(identity: EventIdentity(anonymousID: "device-1")), foreground: foreground)
            events.append(event)
        }
        foreground.restart(at: Date(timeIntervalSince1970: 1_714_566_620))
        var afterRestart = MeasurementEvent("feed/shown", timestamp: Date(timeIntervalSince1970: 1_714_566_622))
        afterRestart.attributionStorage = AttributionStorage(
            EventAttribution(identity: EventIdentity(anonymousID: "device-2")), foreground: foreground)
        let server = GA4Server()
        collector.playGA4(server)
        let tracker = try ga4Tracker(clock: TestClock(runsImmediately: false), directory: directory)
        // The second event went to another destination: its time is not lost to this tracker.
        for event in [events[0], events[2], afterRestart] { try tracker.track(event) }
        var unstamped = MeasurementEvent("feed/shown")
        unstamped.attribution = EventAttribution(identity: EventIdentity(anonymousID: "device-2"))
        try tracker.track(unstamped)
        try tracker.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))

        XCTAssertEqual(
            server.seen.engagementTimes, [3_000, 9_000, 2_000, 1],
            "from the start, from the event before, from the restart; 1 where nothing was measured")
    }
}
