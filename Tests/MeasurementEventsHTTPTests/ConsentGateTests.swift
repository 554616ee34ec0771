import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// Issue 15, "Relaunch": a new aggregator and tracker on the directories of a previous run
/// restore who the user was and the consent they gave, and a tracker never uploads what the
/// previous run queued before the consent in force is known.
final class ConsentGateTests: LoopbackTestCase {
    private var identityDirectory: URL { directory.appendingPathComponent("identity") }
    private var queueDirectory: URL { directory.appendingPathComponent("segment") }

    private func makeTracker(clock: TestClock = TestClock(runsImmediately: true)) throws -> HTTPTracker {
        var configuration = testConfiguration(clock: clock, flushAt: 1_000)
        configuration.flushInterval = 30
        return try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), directory: queueDirectory,
            configuration: configuration)
    }

    /// An aggregator on the identity directory: through `store` when the test holds one.
    private func makeAggregator(
        _ tracker: HTTPTracker, center: NotificationCenter, store: FileIdentityStore? = nil
    ) -> EventAggregator {
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = store ?? FileIdentityStore(directory: identityDirectory)
        return EventAggregator(
            center: center, filter: EventFilter(allow: ["app/*"]), trackers: [tracker], configuration: configuration)
    }

    /// The previous run: a signed-in user in a group, 5 events queued and not yet uploaded.
    private func previousRun() throws -> EventIdentity {
        weak var released: HTTPTracker?
        let identity = try { () throws -> EventIdentity in
            let center = NotificationCenter()
            let tracker = try makeTracker(clock: TestClock(runsImmediately: false))
            released = tracker
            let aggregator = makeAggregator(tracker, center: center)
            aggregator.start()
            MeasurementIdentity.identify(userID: "user-1", traits: ["plan": "pro"], to: center)
            MeasurementIdentity.group("acme", traits: ["seats": 40], to: center)
            for index in 0..<5 { MeasurementEvent.post("app/used", args: ["index": index], to: center) }
            aggregator.waitUntilDelivered()
            aggregator.stop()
            XCTAssertEqual(tracker.diagnostics.queued, 7, "5 events, an identify and a group call")
            return aggregator.currentAttribution.identity
        }()
        // The run ends when its tracker is gone (work already queued may hold it a moment).
        for _ in 0..<5_000 where released != nil { usleep(1_000) }
        XCTAssertNil(released, "the previous run's tracker still holds its directory")
        return identity
    }

    func testConsentRestoredAsDeniedSendsNothingAndDeletesThePreviousRunsQueue() throws {
        let identity = try previousRun()
        // The denial was saved, and the process died before its discard reached the queue.
        let store = FileIdentityStore(directory: identityDirectory)
        var contents = try XCTUnwrap(try store.load())
        contents.consent = .denied
        try store.save(contents)

        let clock = TestClock(runsImmediately: false)
        let tracker = try makeTracker(clock: clock)
        try tracker.flush()
        clock.advance(by: 60)  // the flush timer fires, twice
        let aggregator = makeAggregator(tracker, center: NotificationCenter(), store: store)
        aggregator.start()
        aggregator.waitUntilDelivered()
        try tracker.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 10), "a deleted queue counts as delivered")

        XCTAssertEqual(aggregator.consent, .denied)
        XCTAssertEqual(aggregator.currentAttribution.identity, identity)
        XCTAssertEqual(identity.userID, "user-1")
        XCTAssertEqual(identity.traits, ["plan": "pro"])
        XCTAssertEqual(identity.groupID, "acme")
        XCTAssertEqual(identity.groupTraits, ["seats": 40])
        XCTAssertEqual(collector.requests.count, 0)
        XCTAssertEqual(collector.requests.reduce(0) { $0 + $1.body.count }, 0)
        XCTAssertEqual(queueFiles(queueDirectory), [])
        XCTAssertEqual(tracker.diagnostics.discarded, 7)
    }

    func testConsentRestoredAsGrantedDeliversThePreviousRunsQueueOnlyOnceAnnounced() throws {
        let identity = try previousRun()
        let tracker = try makeTracker()
        try tracker.flush()
        XCTAssertFalse(collector.waitForRequests(1, timeout: 0.3), "nothing leaves before consent is known")
        let aggregator = makeAggregator(tracker, center: NotificationCenter())
        aggregator.start()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(aggregator.currentAttribution.identity, identity)
        let calls = segmentCalls(collector.requests)
        XCTAssertEqual(
            calls.map { $0["type"] as? String }, ["identify", "group"] + Array(repeating: "track", count: 5))
        XCTAssertEqual(Set(calls.compactMap { $0["userId"] as? String }), ["user-1"])
        XCTAssertEqual(Set(calls.compactMap { $0["anonymousId"] as? String }), [identity.anonymousID])
    }
}
