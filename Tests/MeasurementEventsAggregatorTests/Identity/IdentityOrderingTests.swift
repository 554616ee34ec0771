import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// Identity changes are applied in posting order with the events of the same thread: an event
/// posted before `reset` carries the old user id, the first one after it a new anonymous id.
final class IdentityOrderingTests: XCTestCase {
    private func makeAggregator(
        _ center: NotificationCenter, tracker: OrderedTracker, delivery: EventAggregator.Delivery = .asynchronous
    ) -> EventAggregator {
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = delivery
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["account/*", "app/*"]), trackers: [tracker],
            configuration: configuration)
        aggregator.start()
        return aggregator
    }

    func testSignOutEventCarriesTheUserIDAndTheNextEventAFreshAnonymousID() {
        for delivery in [EventAggregator.Delivery.asynchronous, .synchronous] {
            let center = NotificationCenter()
            let tracker = OrderedTracker()
            let aggregator = makeAggregator(center, tracker: tracker, delivery: delivery)
            let rounds = 1_000
            for round in 0..<rounds {
                MeasurementIdentity.identify(userID: "user-\(round)", to: center)
                MeasurementEvent.post("account/signed_out", args: ["round": round], to: center)
                MeasurementIdentity.reset(to: center)
                MeasurementEvent.post("app/after", args: ["round": round], to: center)
            }
            aggregator.waitUntilDelivered()
            checkSignOutRounds(tracker.events, rounds: rounds, thread: nil, delivery: "\(delivery)")
            XCTAssertEqual(aggregator.diagnostics.identityChanges, 2 * rounds)
        }
    }

    func testFourPostingThreadsEachKeepTheirOwnOrder() {
        let center = NotificationCenter()
        let tracker = OrderedTracker()
        let aggregator = makeAggregator(center, tracker: tracker)
        let rounds = 1_000
        // Each thread posts its own events; identity is global, so each thread's change and the
        // event right after it are made atomic with a lock, as an app's sign-out flow would be.
        let signOut = NSLock()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for round in 0..<rounds {
                signOut.lock()
                MeasurementIdentity.identify(userID: "user-\(thread)-\(round)", to: center)
                MeasurementEvent.post("account/signed_out", args: ["round": round, "thread": thread], to: center)
                MeasurementIdentity.reset(to: center)
                MeasurementEvent.post("app/after", args: ["round": round, "thread": thread], to: center)
                signOut.unlock()
            }
        }
        aggregator.waitUntilDelivered()
        for thread in 0..<4 {
            let mine = tracker.events.filter { $0.args["thread"]?.intValue == thread }
            checkSignOutRounds(mine, rounds: rounds, thread: thread, delivery: "asynchronous")
        }
    }

    /// Thread A resets, then signals; thread B waits, then posts: B's event comes after the
    /// reset (happens-before), so it carries the new anonymous id, although the two went
    /// through different posting buffers.
    func testAnEventPostedAfterAResetOnAnotherThreadCarriesTheNewAnonymousID() {
        let center = NotificationCenter()
        let tracker = OrderedTracker()
        let aggregator = makeAggregator(center, tracker: tracker)
        let rounds = 300
        let resetDone = DispatchSemaphore(value: 0)
        let beforePosted = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        finished.enter()
        Thread {
            for _ in 0..<rounds {
                beforePosted.wait()
                MeasurementIdentity.reset(to: center)
                resetDone.signal()
            }
            finished.leave()
        }.start()
        finished.enter()
        Thread {
            for round in 0..<rounds {
                MeasurementEvent.post("app/before", args: ["round": round], to: center)
                beforePosted.signal()
                resetDone.wait()
                MeasurementEvent.post("app/after", args: ["round": round], to: center)
            }
            finished.leave()
        }.start()
        finished.wait()
        aggregator.waitUntilDelivered()

        let events = tracker.events
        XCTAssertEqual(events.count, 2 * rounds)
        var fresh = 0
        var anonymousIDs: Set<String> = []
        for pair in stride(from: 0, to: events.count - 1, by: 2) {
            let (before, after) = (events[pair], events[pair + 1])
            if before.name == "app/before", after.name == "app/after", let anonymous = after.anonymousID,
                anonymous != before.anonymousID, anonymousIDs.insert(anonymous).inserted
            {
                fresh += 1
            }
        }
        XCTAssertEqual(fresh, rounds, "events posted after another thread's reset carry a fresh anonymous id")
    }

    private func checkSignOutRounds(_ events: [MeasurementEvent], rounds: Int, thread: Int?, delivery: String) {
        XCTAssertEqual(events.count, 2 * rounds, delivery)
        var carried = 0
        var freshAfter = 0
        var anonymousIDs: Set<String> = []
        for pair in stride(from: 0, to: events.count - 1, by: 2) {
            let (signedOut, after) = (events[pair], events[pair + 1])
            let round = signedOut.args["round"]?.intValue ?? -1
            let expectedUser = thread.map { "user-\($0)-\(round)" } ?? "user-\(round)"
            if signedOut.name == "account/signed_out", signedOut.userID == expectedUser { carried += 1 }
            if after.name == "app/after", after.userID == nil, let anonymous = after.anonymousID,
                anonymous != signedOut.anonymousID, anonymousIDs.insert(anonymous).inserted
            {
                freshAfter += 1
            }
        }
        XCTAssertEqual(carried, rounds, "\(delivery): sign-out events carrying their user id")
        XCTAssertEqual(freshAfter, rounds, "\(delivery): events after reset with a fresh anonymous id and no user id")
    }

    func testTrackersReceiveIdentityChangesBetweenTheEventsTheyWerePostedBetween() throws {
        let center = NotificationCenter()
        let tracker = OrderedTracker()
        let aggregator = makeAggregator(center, tracker: tracker)
        MeasurementEvent.post("app/one", to: center)
        MeasurementIdentity.identify(userID: "user-1", traits: ["plan": "pro"], to: center)
        MeasurementIdentity.group("acme", traits: ["seats": 40], to: center)
        MeasurementEvent.post("app/two", to: center)
        aggregator.waitUntilDelivered()

        let items = tracker.items
        XCTAssertEqual(items.count, 4)
        guard items.count == 4, case .event(let one) = items[0], case .identity(let identify) = items[1],
            case .identity(let group) = items[2], case .event(let two) = items[3]
        else { return XCTFail("unexpected order: \(items)") }
        XCTAssertNil(one.userID)
        XCTAssertEqual(identify.change, .identify(userID: "user-1", traits: ["plan": "pro"]))
        XCTAssertEqual(identify.attribution.identity.userID, "user-1")
        XCTAssertNil(identify.previousIdentity.userID)
        XCTAssertEqual(group.attribution.identity.groupID, "acme")
        XCTAssertEqual(two.identity?.traits, ["plan": "pro"])
        XCTAssertEqual(two.identity?.groupTraits, ["seats": 40])
        XCTAssertEqual(two.anonymousID, one.anonymousID, "identify keeps the anonymous id")
        XCTAssertNotEqual(identify.id, group.id)
    }

    func testIdentityChangesAreNotFilteredByTheAllowList() {
        let center = NotificationCenter()
        let tracker = OrderedTracker()
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: []), trackers: [tracker], configuration: .testing)
        aggregator.start()
        MeasurementIdentity.identify(userID: "user-1", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.identityEvents.count, 1)
        XCTAssertEqual(aggregator.diagnostics.identityChanges, 1)
        XCTAssertEqual(aggregator.diagnostics.received, 0, "an identity change is not an event")
        XCTAssertEqual(aggregator.currentAttribution.identity.userID, "user-1")
    }

    func testAnEventExpectationIsNotFulfilledByAnIdentityChange() {
        let center = NotificationCenter()
        let expectation = expectation(forNotification: .measurementEvent, object: nil, notificationCenter: center)
        expectation.isInverted = true
        MeasurementIdentity.identify(userID: "user-1", to: center)
        MeasurementIdentity.reset(to: center)
        wait(for: [expectation], timeout: 0.05)
    }

    func testIdentifyWithAnotherUserReplacesTraitsAndTheSameUserMergesThem() {
        let start = EventIdentity(anonymousID: "anon")
        let first = start.applying(.identify(userID: "a", traits: ["plan": "free", "age": 30]))
        let merged = first.applying(.identify(userID: nil, traits: ["plan": "pro"]))
        XCTAssertEqual(merged.traits, ["plan": "pro", "age": 30])
        let other = merged.applying(.identify(userID: "b", traits: ["plan": "team"]))
        XCTAssertEqual(other.traits, ["plan": "team"])
        XCTAssertEqual(other.anonymousID, "anon")
        let reset = other.applying(.reset, newAnonymousID: { "anon-2" })
        XCTAssertEqual(reset, EventIdentity(anonymousID: "anon-2"))
    }
}
