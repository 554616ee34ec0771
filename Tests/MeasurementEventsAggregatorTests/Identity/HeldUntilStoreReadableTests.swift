import Foundation
import MeasurementEvents
import XCTest

@testable import MeasurementEventsAggregator

/// A store that cannot be read *yet* (a launch before the device's first unlock) is not damage:
/// the stored identity is kept untouched, events wait in memory (bounded, counted), and once the
/// store can be read they are delivered in order, stamped with the stored identity.
final class HeldUntilStoreReadableTests: XCTestCase {
    /// A store whose reads fail as a locked device's do until it is unlocked.
    private final class LockedStore: IdentityStore, @unchecked Sendable {
        // @unchecked: all state is behind its lock.
        private struct State {
            var locked = true
            var contents: IdentityStoreContents?
            var loads = 0
            var saves: [IdentityStoreContents] = []
        }

        private let state: LockedValue<State>

        init(_ contents: IdentityStoreContents?) { state = LockedValue(State(contents: contents)) }

        func unlock() { state.withLock { $0.locked = false } }
        var loads: Int { state.withLock { $0.loads } }
        var saves: [IdentityStoreContents] { state.withLock { $0.saves } }

        func load() throws -> IdentityStoreContents? {
            try state.withLock { state in
                state.loads += 1
                guard !state.locked else {
                    throw IdentityStoreError(
                        path: "/locked/identity.json", problem: "cannot be read yet: operation not permitted",
                        isNotReadableYet: true)
                }
                return state.contents
            }
        }

        func save(_ contents: IdentityStoreContents) throws {
            try state.withLock { state in
                // A save before the store was read would overwrite the install's identity.
                guard !state.locked else { throw IdentityStoreError(path: "/locked", problem: "saved while locked") }
                state.saves.append(contents)
                state.contents = contents
            }
        }
    }

    private let stored = IdentityStoreContents(
        identity: EventIdentity(userID: "user-1", anonymousID: "anon-stored"), consent: .granted,
        appVersion: "1.0", appBuild: "1", personalDataSalt: String(repeating: "ab", count: 32))

    private func makeAggregator(
        _ store: LockedStore, consent: Consent = .granted, heldEventLimit: Int = 1_000,
        problems: LockedValue<[String]>? = nil
    ) -> (EventAggregator, OrderedTracker, NotificationCenter) {
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = store
        configuration.consent = consent
        configuration.heldEventLimit = heldEventLimit
        configuration.problemHandler = { problem in problems?.withLock { $0.append(problem.description) } }
        let tracker = OrderedTracker()
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        return (aggregator, tracker, center)
    }

    func testEventsWaitAndThenCarryTheStoredIdentityAndNothingIsWrittenBefore() {
        let store = LockedStore(stored)
        let problems = LockedValue<[String]>([])
        let (aggregator, tracker, center) = makeAggregator(store, problems: problems)
        for index in 0..<5 { MeasurementEvent.post("feed/item_tapped", args: ["position": index], to: center) }
        aggregator.waitUntilDelivered()

        XCTAssertEqual(tracker.events.count, 0, "nothing is stamped with an identity not read yet")
        XCTAssertEqual(aggregator.diagnostics.heldUntilStoreReadable, 5)
        XCTAssertEqual(store.saves, [], "nothing is written over the store")
        XCTAssertEqual(aggregator.consent, .pendingHolding, "its consent is not known yet")
        XCTAssertEqual(tracker.announcedConsents, [.pendingHolding], "so trackers send nothing yet")
        XCTAssertEqual(problems.withLock { $0 }.count, 1, "said once: \(problems.withLock { $0 })")
        XCTAssertTrue(problems.withLock { $0 }.first?.contains("cannot be read yet") == true)

        store.unlock()
        aggregator.protectedDataDidBecomeAvailable()
        MeasurementEvent.post("feed/item_tapped", args: ["position": 5], to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(tracker.events.map { $0.args["position"] }, (0..<6).map { .int($0) }, "all, in order")
        XCTAssertEqual(Set(tracker.events.map { $0.attribution?.identity.anonymousID }), ["anon-stored"])
        XCTAssertEqual(Set(tracker.events.map { $0.attribution?.identity.userID }), ["user-1"])
        XCTAssertEqual(aggregator.diagnostics.heldUntilStoreReadable, 0)
        XCTAssertEqual(aggregator.diagnostics.forwarded, 6)
        XCTAssertEqual(aggregator.consent, .granted, "the stored consent, once read")
        XCTAssertEqual(tracker.announcedConsents, [.pendingHolding, .granted])
        XCTAssertEqual(store.saves.last?.identity.anonymousID, "anon-stored")
        XCTAssertEqual(store.saves.last?.personalDataSalt, stored.personalDataSalt, "the salt is kept")
        XCTAssertEqual(problems.withLock { $0 }.count, 1, "nothing more to say")
    }

    func testIdentityChangesWaitInOrderWithTheEvents() {
        let store = LockedStore(stored)
        let (aggregator, tracker, center) = makeAggregator(store)
        MeasurementEvent.post("a/first", to: center)
        MeasurementIdentity.identify(userID: "user-2", to: center)
        MeasurementEvent.post("a/second", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.items.count, 0)

        store.unlock()
        MeasurementEvent.post("a/third", to: center)  // the next delivery reads the store again
        aggregator.waitUntilDelivered()

        XCTAssertEqual(tracker.events.map(\.name), ["a/first", "a/second", "a/third"])
        XCTAssertEqual(tracker.events.map { $0.attribution?.identity.userID }, ["user-1", "user-2", "user-2"])
        XCTAssertEqual(tracker.identityEvents.map(\.previousIdentity.anonymousID), ["anon-stored"])
        XCTAssertEqual(store.saves.last?.identity.userID, "user-2")
        XCTAssertEqual(store.saves.last?.identity.anonymousID, "anon-stored")
    }

    func testTheStoredDenialDiscardsWhatWaited() {
        var denied = stored
        denied.consent = .denied
        let store = LockedStore(denied)
        let (aggregator, tracker, center) = makeAggregator(store)
        MeasurementEvent.post("a/first", to: center)
        aggregator.waitUntilDelivered()
        store.unlock()
        aggregator.protectedDataDidBecomeAvailable()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.count, 0, "posted while the remembered consent was denied")
        XCTAssertEqual(aggregator.consent, .denied)
        XCTAssertEqual(aggregator.diagnostics.discarded, 1)
    }

    func testConsentSetWhileWaitingWinsOverTheStoredOne() {
        var denied = stored
        denied.consent = .denied
        let store = LockedStore(denied)
        let (aggregator, tracker, center) = makeAggregator(store)
        aggregator.setConsent(.granted)
        MeasurementEvent.post("a/first", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.count, 0, "still waiting for the identity")
        store.unlock()
        aggregator.protectedDataDidBecomeAvailable()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map(\.name), ["a/first"])
        XCTAssertEqual(aggregator.consent, .granted)
        XCTAssertEqual(store.saves.last?.consent, .granted, "the newer choice is remembered")
    }

    func testWhatWaitsIsBoundedDroppingTheOldestAndCounted() {
        let store = LockedStore(stored)
        let problems = LockedValue<[String]>([])
        let (aggregator, tracker, center) = makeAggregator(store, heldEventLimit: 5, problems: problems)
        for index in 0..<8 { MeasurementEvent.post("feed/item_tapped", args: ["position": index], to: center) }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.diagnostics.heldUntilStoreReadable, 5)
        XCTAssertEqual(aggregator.diagnostics.dropped, 3)
        XCTAssertEqual(problems.withLock { $0 }.filter { $0.contains("held event feed/item_tapped dropped") }.count, 3)
        store.unlock()
        aggregator.protectedDataDidBecomeAvailable()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map { $0.args["position"] }, (3..<8).map { .int($0) })
    }

    func testTheReleaseIsRecordedOnceTheStoreIsReadNeverAsAnInstall() {
        let store = LockedStore(stored)
        let (aggregator, _, _) = makeAggregator(store)
        let known = LockedValue<[EventAggregator.AppRelease]>([])
        let now = aggregator.recordAppRelease(version: "1.1", build: "2") { release in
            known.withLock { $0.append(release) }
        }
        XCTAssertNil(now, "not known before the store is read")
        XCTAssertEqual(aggregator.recordAppRelease(version: "1.1", build: "2"), .unchanged)
        store.unlock()
        aggregator.protectedDataDidBecomeAvailable()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(known.withLock { $0 }, [.updated(previousVersion: "1.0", previousBuild: "1")])
        XCTAssertEqual(store.saves.last?.appVersion, "1.1")
    }

    func testForgetUserWhileWaitingForgetsOnceTheStoreIsRead() {
        let store = LockedStore(stored)
        let (aggregator, tracker, center) = makeAggregator(store)
        MeasurementEvent.post("a/before", to: center)
        aggregator.forgetUser()
        MeasurementEvent.post("a/after", to: center)
        store.unlock()
        aggregator.protectedDataDidBecomeAvailable()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map(\.name), ["a/before", "a/after"])
        XCTAssertEqual(tracker.events.first?.attribution?.identity.anonymousID, "anon-stored")
        XCTAssertNotEqual(tracker.events.last?.attribution?.identity.anonymousID, "anon-stored")
        XCTAssertNil(tracker.events.last?.attribution?.identity.userID)
        XCTAssertNotEqual(store.saves.last?.personalDataSalt, stored.personalDataSalt)
    }

    func testADamagedStoreIsStillRepairedAtOnce() {
        // Only "not readable yet" waits: an error without it is damage, as before.
        final class BrokenStore: IdentityStore {
            func load() throws -> IdentityStoreContents? { throw IdentityStoreError(path: "/x", problem: "is garbage") }
            func save(_ contents: IdentityStoreContents) throws {}
        }
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = BrokenStore()
        let tracker = OrderedTracker()
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("a/first", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.count, 1)
        XCTAssertEqual(aggregator.diagnostics.heldUntilStoreReadable, 0)
    }
}
