import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// Sessions as trackers see them, with an injected clock: no test sleeps.
final class SessionTests: XCTestCase {
    private let center = NotificationCenter()
    private let clock = ManualEventClock()
    private let tracker = RecordingTracker()

    // MARK: Inactivity

    func testEventsTwentyNineMinutesApartShareASession() {
        XCTAssertEqual(sessionsOfTwoEvents(minutesApart: 29), 1)
    }

    func testEventsThirtyOneMinutesApartStartANewSession() {
        XCTAssertEqual(sessionsOfTwoEvents(minutesApart: 31), 2)
    }

    func testInactivityCountsFromTheLatestEventNotFromTheStart() {
        let aggregator = makeAggregator()
        for _ in 0..<4 {
            post("a")
            clock.advance(by: 20 * 60)
        }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(Set(sessionIDs()).count, 1, "80 minutes of events 20 minutes apart are one session")
    }

    func testTimeoutIsConfigurable() {
        var configuration = EventAggregator.Configuration.testing
        configuration.sessions = SessionRules(timeout: 60)
        let aggregator = makeAggregator(configuration)
        post("a")
        clock.advance(by: 61)
        post("b")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(Set(sessionIDs()).count, 2)
    }

    // MARK: Background

    func testThirtyOneMinutesInTheBackgroundStartsANewSession() {
        XCTAssertEqual(sessionsOfTwoEvents(minutesApart: 41, minutesInBackground: 31), 2)
    }

    func testTwentyNineMinutesInTheBackgroundKeepsTheSession() {
        XCTAssertEqual(
            sessionsOfTwoEvents(minutesApart: 39, minutesInBackground: 29), 1,
            "39 minutes after the first event, but 29 of them in the background")
    }

    // MARK: Ids

    func testSessionIDIsTheStartTimeInMilliseconds() {
        let aggregator = makeAggregator()
        clock.set(Date(timeIntervalSince1970: 1_714_566_600.123))
        post("a")
        clock.advance(by: 60)
        post("b")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(sessionIDs(), [1_714_566_600_123, 1_714_566_600_123])
    }

    func testAnEventAtTheSameMillisecondAsTheLastSessionStartGetsAGreaterID() {
        var configuration = EventAggregator.Configuration.testing
        configuration.sessions = SessionRules(timeout: 0)
        let aggregator = makeAggregator(configuration)
        post("a")
        post("b")
        aggregator.waitUntilDelivered()
        let ids = sessionIDs()
        XCTAssertEqual(ids.count, 2)
        XCTAssertEqual(ids.last, ids.first.map { $0 + 1 })
    }

    // MARK: Session events

    func testSessionEventsComeBeforeTheEventThatStartsTheSession() {
        var configuration = EventAggregator.Configuration.testing
        configuration.sessions.emitsEvents = true
        let aggregator = makeAggregator(configuration)
        post("a")
        clock.advance(by: 31 * 60)
        post("b")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["session/started", "test/a", "session/ended", "session/started", "test/b"])
        let ids = sessionIDs()
        XCTAssertEqual(ids[0], ids[1])
        XCTAssertEqual(ids[2], ids[1], "session/ended carries the session it ends")
        XCTAssertEqual(ids[3], ids[4])
        XCTAssertNotEqual(ids[3], ids[2])
    }

    func testSessionEndedInTheBackgroundIsEmittedOnReturn() {
        var configuration = EventAggregator.Configuration.testing
        configuration.sessions.emitsEvents = true
        let aggregator = makeAggregator(configuration)
        post("a")
        aggregator.applicationDidEnterBackground()
        clock.advance(by: 31 * 60)
        aggregator.applicationWillEnterForeground()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["session/started", "test/a", "session/ended"])
        post("b")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names.suffix(2), ["session/started", "test/b"])
    }

    func testNoSessionEventsUnlessConfigured() {
        let aggregator = makeAggregator()
        post("a")
        clock.advance(by: 31 * 60)
        post("b")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["test/a", "test/b"])
    }

    // MARK: Relaunch

    func testSessionContinuesAcrossARelaunchWithinTheTimeout() {
        let second = relaunchAfterTheBackground(minutes: 10)
        XCTAssertEqual(sessionIDs().count, 2)
        XCTAssertEqual(Set(sessionIDs()).count, 1)
        XCTAssertEqual(second.diagnostics.sessionsStarted, 0)
    }

    func testSessionContinuesAcrossARelaunchAfterACrashWithinTheTimeoutOfTheLastEvent() {
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = InMemoryIdentityStore()
        let first = makeAggregator(configuration)
        for _ in 0..<3 {
            post("a")
            clock.advance(by: 20 * 60)
        }
        first.waitUntilDelivered()
        first.stop()  // killed: never went to the background

        clock.advance(by: -10 * 60)  // relaunched 10 minutes after the last event, 50 after the first
        let second = makeAggregator(configuration)
        post("b")
        second.waitUntilDelivered()
        XCTAssertEqual(Set(sessionIDs()).count, 1)
    }

    func testSessionRestoredAfterTheTimeoutIsReplaced() {
        relaunchAfterTheBackground(minutes: 31)
        XCTAssertEqual(Set(sessionIDs()).count, 2)
        XCTAssertGreaterThan(sessionIDs()[1], sessionIDs()[0])
    }

    // MARK: Helpers

    /// Posts "a", goes to the background and stops; `minutes` later a new aggregator on the
    /// same store posts "b". Returns the new aggregator, with "b" delivered.
    @discardableResult
    private func relaunchAfterTheBackground(minutes: Double) -> EventAggregator {
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = InMemoryIdentityStore()
        let first = makeAggregator(configuration)
        post("a")
        first.applicationDidEnterBackground()
        first.waitUntilDelivered()
        first.stop()

        clock.advance(by: minutes * 60)
        let second = makeAggregator(configuration)
        post("b")
        second.waitUntilDelivered()
        return second
    }

    /// How many sessions two events make when posted `minutesApart`, the last
    /// `minutesInBackground` of which the app spent in the background.
    private func sessionsOfTwoEvents(minutesApart: Double, minutesInBackground: Double = 0) -> Int {
        let aggregator = makeAggregator()
        post("a")
        clock.advance(by: (minutesApart - minutesInBackground) * 60)
        if minutesInBackground > 0 {
            aggregator.applicationDidEnterBackground()
            clock.advance(by: minutesInBackground * 60)
            aggregator.applicationWillEnterForeground()
        }
        post("b")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(sessionIDs().count, 2, "both events carry a session")
        return Set(sessionIDs()).count
    }

    private func makeAggregator(_ base: EventAggregator.Configuration = EventAggregator.Configuration.testing)
        -> EventAggregator
    {
        var configuration = base
        configuration.clock = clock
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["test/*"]), trackers: [tracker], configuration: configuration)
        aggregator.start()
        return aggregator
    }

    private func post(_ name: String) {
        MeasurementEvent.post(EventName(rawValue: "test/\(name)"), to: center)
    }

    // MARK: Off

    /// A server's configuration keeps no sessions: no session id on its events, no session event.
    func testTheServerConfigurationKeepsNoSessions() {
        var configuration = EventAggregator.Configuration.server
        configuration.clock = clock
        configuration.sessions.emitsEvents = true
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("checkout/started", to: center)
        clock.advance(by: 3_600)
        MeasurementEvent.post("checkout/completed", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map(\.name), ["checkout/started", "checkout/completed"])
        XCTAssertEqual(sessionIDs(), [])
        XCTAssertEqual(aggregator.diagnostics.sessionsStarted, 0)
        aggregator.stop()
    }

    private func sessionIDs() -> [Int64] {
        tracker.events.compactMap(\.sessionID)
    }
}
