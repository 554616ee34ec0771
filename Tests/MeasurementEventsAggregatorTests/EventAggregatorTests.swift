import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// The seed pattern: a subclass with a whitelist and a didReceive hook, no trackers.
private final class WhitelistAggregator: EventAggregator, @unchecked Sendable {
    // @unchecked: `received` is a LockedValue.
    let received = LockedValue<[EventName]>([])
    override var allowList: [EventPattern] { ["feed/item_tapped", "app/permission/*"] }
    override var denyList: [EventPattern] { ["app/permission/debug/*"] }
    override func didReceive(_ event: MeasurementEvent) {
        received.withLock { $0.append(event.name) }
    }
}

/// The sample posts: which of them each configuration should keep.
private func postSample(on center: NotificationCenter) {
    MeasurementEvent.post("feed/opened", to: center)
    MeasurementEvent.post("feed/item_tapped", args: ["item_id": "1"], to: center)
    MeasurementEvent.post("app/permission/photo_library/granted", to: center)
    MeasurementEvent.post("app/permission/debug/reset", to: center)
    MeasurementEvent.post("settings/opened", to: center)
}

private let expectedKept: [EventName] = ["feed/item_tapped", "app/permission/photo_library/granted"]

final class EventAggregatorTests: XCTestCase {
    func testSubclassForwardsExactlyItsWhitelistToDidReceive() {
        let center = NotificationCenter()
        let aggregator = WhitelistAggregator(center: center, configuration: .testing)
        aggregator.start()
        postSample(on: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.received.withLock { $0 }, expectedKept)
        XCTAssertEqual(aggregator.diagnostics.forwarded, 2)
        XCTAssertEqual(aggregator.diagnostics.filteredOut, 3)
    }

    func testCompositionForwardsExactlyTheFilteredEventsToTrackers() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center,
            filter: EventFilter(allow: ["feed/item_tapped", "app/permission/*"], deny: ["app/permission/debug/*"]),
            trackers: [tracker], configuration: .testing)
        aggregator.start()
        postSample(on: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, expectedKept)
    }

    func testSubclassWithTrackersFeedsBothHookAndTrackers() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = WhitelistAggregator(center: center, trackers: [tracker], configuration: .testing)
        aggregator.start()
        postSample(on: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.received.withLock { $0 }, expectedKept)
        XCTAssertEqual(tracker.names, expectedKept)
    }

    func testAnExplicitFilterOverridesTheSubclassLists() {
        let center = NotificationCenter()
        let aggregator = WhitelistAggregator(
            center: center, filter: EventFilter(allow: ["settings/*"]), configuration: .testing)
        aggregator.start()
        postSample(on: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.received.withLock { $0 }, ["settings/opened"])
    }

    func testTrackersReceiveTheDecodedEvent() throws {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        let before = Date()
        MeasurementEvent.post("feed/item_tapped", type: .click, category: "feed", args: ["position": 3], to: center)
        aggregator.waitUntilDelivered()
        let event = try XCTUnwrap(tracker.events.first)
        XCTAssertEqual(event.type, .click)
        XCTAssertEqual(event.category, "feed")
        XCTAssertEqual(event.args, ["position": 3])
        XCTAssertGreaterThanOrEqual(event.timestamp, before)
        XCTAssertNotEqual(event.id.uuidString, "00000000-0000-0000-0000-000000000000")
        XCTAssertEqual(event.id.uuidString.dropFirst(14).first, "4", "a version-4 UUID")
    }

    func testEveryEventGetsItsOwnID() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        for _ in 0..<1_000 { MeasurementEvent.post("feed/opened", to: center) }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(Set(tracker.events.map(\.id)).count, 1_000)
    }

    func testARepostedCompleteEventKeepsItsIDAndTimestamp() throws {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        let original = MeasurementEvent("feed/opened", timestamp: Date(timeIntervalSince1970: 1_700_000_000.25))
        original.post(to: center)
        aggregator.waitUntilDelivered()
        let received = try XCTUnwrap(tracker.events.first)
        XCTAssertEqual(received.id, original.id)
        XCTAssertEqual(received.timestamp, original.timestamp)
    }

    func testStartAndStopAreIdempotentAndAStoppedAggregatorReceivesNothing() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        MeasurementEvent.post("feed/before_start", to: center)
        aggregator.start()
        aggregator.start()
        MeasurementEvent.post("feed/while_started", to: center)
        aggregator.stop()
        aggregator.stop()
        XCTAssertFalse(aggregator.isStarted)
        MeasurementEvent.post("feed/after_stop", to: center)
        aggregator.start()
        MeasurementEvent.post("feed/restarted", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["feed/while_started", "feed/restarted"], "started twice would deliver twice")
    }

    func testSynchronousDeliveryHappensBeforePostReturns() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = .synchronous
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("feed/opened", to: center)
        XCTAssertEqual(tracker.names, ["feed/opened"])
    }

    func testAsynchronousDeliveryRunsOffThePostingThread() {
        let center = NotificationCenter()
        let threads = LockedValue<[Bool]>([])
        let tracker = ClosureTracker { _ in threads.withLock { $0.append(Thread.isMainThread) } }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        XCTAssertTrue(Thread.isMainThread)
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(threads.withLock { $0 }, [false])
    }

    func testAThrowingTrackerDoesNotStopTheOthers() {
        struct Failure: Error {}
        let center = NotificationCenter()
        let before = RecordingTracker()
        let after = RecordingTracker()
        let problems = LockedValue<[String]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll,
            trackers: [before, ClosureTracker { _ in throw Failure() }, after],
            configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("feed/opened", to: center)
        MeasurementEvent.post("feed/closed", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(before.names, ["feed/opened", "feed/closed"])
        XCTAssertEqual(after.names, ["feed/opened", "feed/closed"])
        XCTAssertEqual(aggregator.diagnostics.trackerFailures, 2)
        XCTAssertEqual(problems.withLock { $0 }.first, "tracker ClosureTracker failed on feed/opened: Failure()")
    }

    func testFilteredOutNamesAreRecordedWithTheirCounts() {
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration.testing
        configuration.recordsFilteredOutNames = true
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["feed/*"]), configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("settings/opened", to: center)
        MeasurementEvent.post("settings/opened", to: center)
        MeasurementEvent.post("profile/opened", to: center)
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.diagnostics.filteredOutNames, ["settings/opened": 2, "profile/opened": 1])
        XCTAssertEqual(aggregator.diagnostics.received, 4)
    }

    func testSetFilterTakesEffectForTheNextPost() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["feed/*"]), trackers: [tracker], configuration: .testing)
        aggregator.start()
        MeasurementEvent.post("settings/opened", to: center)
        aggregator.setFilter(EventFilter(allow: ["settings/*"]))
        MeasurementEvent.post("settings/opened", to: center)
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["settings/opened"])
    }

    func testProcessorsRunInOrderAndMayDiscard() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker],
            processors: [
                ClosureProcessor { event in event.name == "feed/secret" ? nil : event },
                ClosureProcessor { event in
                    var event = event
                    event.args["app_version", default: "1.0"] = event.args["app_version"] ?? "1.0"
                    return event
                },
            ], configuration: .testing)
        aggregator.start()
        MeasurementEvent.post("feed/secret", to: center)
        MeasurementEvent.post("feed/opened", args: ["app_version": "0.9"], to: center)
        MeasurementEvent.post("feed/closed", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["feed/opened", "feed/closed"])
        XCTAssertEqual(tracker.events.map { $0.args["app_version"] }, ["0.9", "1.0"])
        XCTAssertEqual(aggregator.diagnostics.discarded, 1)
    }

    func testFlushWaitsForDeliveryThenFlushesTrackers() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.flush()
        XCTAssertEqual(tracker.names, ["feed/opened"])
        XCTAssertEqual(tracker.flushCount, 1)
    }

    /// A tracker that flushes the aggregator mid-batch must not get newer events delivered
    /// before the rest of the batch.
    func testFlushingFromATrackerKeepsPostingOrder() {
        let center = NotificationCenter()
        let names = LockedValue<[EventName]>([])
        let box = LockedValue<EventAggregator?>(nil)
        let tracker = ClosureTracker { event in
            names.withLock { $0.append(event.name) }
            if event.name == "x/a" {
                MeasurementEvent.post("x/c", to: center)  // queued behind x/b
                box.withLock { $0 }?.flush()
            }
        }
        var configuration = EventAggregator.Configuration.testing
        configuration.deliveryCoalescing = 0.2  // x/a and x/b land in one batch
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        box.withLock { $0 = aggregator }
        aggregator.start()
        MeasurementEvent.post("x/a", to: center)
        MeasurementEvent.post("x/b", to: center)
        aggregator.waitUntilDelivered()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(names.withLock { $0 }, ["x/a", "x/b", "x/c"])
        box.withLock { $0 = nil }
    }

    func testAReleasedAggregatorStopsObserving() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        var aggregator: EventAggregator? = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator?.start()
        aggregator?.waitUntilDelivered()
        weak var released: EventAggregator?
        released = aggregator
        aggregator = nil
        XCTAssertNil(released)
        MeasurementEvent.post("feed/opened", to: center)
        XCTAssertEqual(tracker.names, [])
    }
}
