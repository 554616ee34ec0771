import Foundation
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

/// The pure session state machine, driven by the dates it is given.
final class SessionTimelineTests: XCTestCase {
    private let start = Date(timeIntervalSince1970: 1_714_566_600)
    private let minute: TimeInterval = 60

    func testFirstEventStartsASessionAndEndsNone() {
        var timeline = SessionTimeline(rules: SessionRules())
        let transition = timeline.event(at: start)
        XCTAssertNil(transition.ended)
        XCTAssertEqual(transition.started, Session(id: 1_714_566_600_000, startedAt: start, lastActivityAt: start))
    }

    func testEventWithinTheTimeoutExtendsTheLastActivity() {
        var timeline = SessionTimeline(rules: SessionRules())
        _ = timeline.event(at: start)
        XCTAssertTrue(timeline.event(at: start + 29 * minute).isEmpty)
        XCTAssertEqual(timeline.current?.lastActivityAt, start + 29 * minute)
    }

    func testEventAtExactlyTheTimeoutEndsTheSession() {
        var timeline = SessionTimeline(rules: SessionRules())
        let first = timeline.event(at: start).started
        let transition = timeline.event(at: start + 30 * minute)
        XCTAssertEqual(transition.ended, first)
        XCTAssertEqual(transition.started?.startedAt, start + 30 * minute)
    }

    func testEventEarlierThanTheLastActivityKeepsTheSessionAndItsLastActivity() {
        var timeline = SessionTimeline(rules: SessionRules())
        _ = timeline.event(at: start)
        XCTAssertTrue(timeline.event(at: start - 60 * minute).isEmpty)
        XCTAssertEqual(timeline.current?.lastActivityAt, start)
    }

    func testIDsOnlyGrowEvenWhenTheClockGoesBack() {
        let later = Session(id: 2_000_000_000_000, startedAt: start, lastActivityAt: start - 120 * minute)
        var timeline = SessionTimeline(rules: SessionRules(), restored: later)
        let transition = timeline.event(at: start)
        XCTAssertEqual(transition.ended, later)
        XCTAssertEqual(transition.started?.id, 2_000_000_000_001)
    }

    func testBackgroundShorterThanTheTimeoutKeepsTheSession() {
        var timeline = SessionTimeline(rules: SessionRules())
        _ = timeline.event(at: start)
        timeline.enterBackground(at: start + 20 * minute)
        XCTAssertTrue(timeline.isInBackground)
        XCTAssertTrue(timeline.enterForeground(at: start + 49 * minute).isEmpty)
        XCTAssertFalse(timeline.isInBackground)
        XCTAssertTrue(timeline.event(at: start + 50 * minute).isEmpty)
    }

    func testBackgroundOfTheTimeoutEndsTheSessionOnReturn() {
        var timeline = SessionTimeline(rules: SessionRules())
        let first = timeline.event(at: start).started
        timeline.enterBackground(at: start)
        let transition = timeline.enterForeground(at: start + 30 * minute)
        XCTAssertEqual(transition.ended?.id, first?.id)
        XCTAssertNil(transition.started, "the next event starts the next session")
        XCTAssertNil(timeline.current)
    }

    func testForegroundWithoutASessionDoesNothing() {
        var timeline = SessionTimeline(rules: SessionRules())
        XCTAssertTrue(timeline.enterForeground(at: start).isEmpty)
    }

    func testMillisecondsOfADateFromOutsideNeverTrap() {
        XCTAssertEqual(SessionTimeline.milliseconds(Date(timeIntervalSince1970: 1.5)), 1_500)
        XCTAssertEqual(SessionTimeline.milliseconds(Date(timeIntervalSince1970: -0.5)), -500)
        XCTAssertGreaterThan(SessionTimeline.milliseconds(Date(timeIntervalSince1970: 1e300)), 0)
        XCTAssertLessThan(SessionTimeline.milliseconds(Date(timeIntervalSince1970: -1e300)), 0)
        XCTAssertEqual(SessionTimeline.milliseconds(Date(timeIntervalSince1970: .nan)), 0)
    }
}
