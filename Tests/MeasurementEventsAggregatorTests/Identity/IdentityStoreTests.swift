import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// Identity, traits, group and consent survive a relaunch; a damaged or unreadable store is
/// reported and replaced, never a crash.
final class IdentityStoreTests: XCTestCase {
    private func aggregator(
        store: any IdentityStore, center: NotificationCenter = NotificationCenter(),
        tracker: OrderedTracker = OrderedTracker(),
        problems: LockedValue<[String]>? = nil, consent: Consent = .granted
    ) -> EventAggregator {
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = store
        configuration.consent = consent
        configuration.problemHandler = { problem in problems?.withLock { $0.append(problem.description) } }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        return aggregator
    }

    func testARelaunchRestoresAnonymousIDUserIDTraitsGroupAndConsent() throws {
        let directory = makeTemporaryDirectory("relaunch")
        defer { try? FileManager.default.removeItem(at: directory) }
        let center = NotificationCenter()
        let store = FileIdentityStore(directory: directory)
        let first = aggregator(store: store, center: center)
        MeasurementIdentity.identify(userID: "user-1", traits: ["plan": "pro"], to: center)
        MeasurementIdentity.group("acme", traits: ["seats": 40], to: center)
        first.waitUntilDelivered()
        first.setConsent(.denied)
        let before = first.currentAttribution.identity
        first.stop()

        let second = aggregator(store: store)
        XCTAssertEqual(second.currentAttribution.identity, before)
        XCTAssertEqual(second.currentAttribution.identity.userID, "user-1")
        XCTAssertEqual(second.currentAttribution.identity.groupTraits, ["seats": 40])
        XCTAssertEqual(second.consent, .denied, "a denial is remembered, whatever the configured default")
    }

    func testTheAnonymousIDIsMadeOncePerInstall() {
        let directory = makeTemporaryDirectory("anonymous")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = aggregator(store: FileIdentityStore(directory: directory)).currentAttribution.identity.anonymousID
        let second = aggregator(store: FileIdentityStore(directory: directory)).currentAttribution.identity.anonymousID
        XCTAssertEqual(first, second)
        XCTAssertNotEqual(first, aggregator(store: InMemoryIdentityStore()).currentAttribution.identity.anonymousID)
    }

    func testRestoredDenialIsAnnouncedToTrackersWhichDiscardBeforeAnyEvent() {
        let store = InMemoryIdentityStore(
            IdentityStoreContents(identity: EventIdentity(anonymousID: "anon"), consent: .denied))
        let tracker = OrderedTracker()
        let center = NotificationCenter()
        let aggregator = aggregator(store: store, center: center, tracker: tracker)
        MeasurementEvent.post("app/one", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.announcedConsents, [.denied])
        XCTAssertTrue(tracker.events.isEmpty)
    }

    func testACorruptStoreIsReportedMovedAsideAndReplaced() throws {
        let directory = makeTemporaryDirectory("corrupt")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("identity.json")
        try Data("{\"identity\": {\"anonymousID\": 12".utf8).write(to: file)
        let problems = LockedValue<[String]>([])
        let store = FileIdentityStore(directory: directory)
        let aggregator = aggregator(store: store, problems: problems)

        XCTAssertEqual(aggregator.diagnostics.identityStoreFailures, 1)
        let reported = problems.withLock { $0 }
        XCTAssertEqual(reported.count, 1)
        XCTAssertTrue(
            reported.first?.hasPrefix("identity store \(file.path) is not a valid identity file") == true, "\(reported)"
        )
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.path + ".corrupt"), "kept for inspection")
        let replaced = try XCTUnwrap(store.load())
        XCTAssertEqual(replaced.identity.anonymousID, aggregator.currentAttribution.identity.anonymousID)
    }

    func testAStoredIdentityThatBreaksTheRulesIsRejected() throws {
        let directory = makeTemporaryDirectory("invalid")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileIdentityStore(directory: directory)
        try store.save(
            IdentityStoreContents(
                identity: EventIdentity(userID: String(repeating: "x", count: 5_000), anonymousID: "a")))
        XCTAssertThrowsError(try store.load()) { error in
            XCTAssertTrue("\(error)".contains("holds an identity that is not valid"), "\(error)")
        }
    }

    func testAnUnwritableStoreDirectoryIsReportedAndEventsStillFlow() throws {
        let parent = makeTemporaryDirectory("unwritable")
        defer { try? FileManager.default.removeItem(at: parent) }
        // A file where the directory should be: nothing can be created or written under it.
        let blocked = parent.appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: blocked)
        let problems = LockedValue<[String]>([])
        let tracker = OrderedTracker()
        let center = NotificationCenter()
        let aggregator = aggregator(
            store: FileIdentityStore(directory: blocked), center: center, tracker: tracker, problems: problems)
        MeasurementIdentity.identify(userID: "user-1", to: center)
        MeasurementEvent.post("app/one", to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(tracker.events.map(\.userID), ["user-1"], "identity still applies in memory")
        XCTAssertEqual(aggregator.diagnostics.identityStoreFailures, 1, "reported once, not per save")
        XCTAssertTrue(
            problems.withLock { $0 }.allSatisfy { $0.contains("cannot be written") }, "\(problems.withLock { $0 })")
    }

    /// The store is app code (the Keychain, say): the same contents are not written twice,
    /// as when an app identifies the same user at every launch.
    func testUnchangedContentsAreNotWrittenAgain() {
        let store = CountingStore()
        let center = NotificationCenter()
        let aggregator = aggregator(store: store, center: center)
        aggregator.waitUntilDelivered()
        let atStart = store.saves.withLock { $0 }
        MeasurementIdentity.identify(userID: "user-1", traits: ["plan": "pro"], to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(store.saves.withLock { $0 }, atStart + 1)
        MeasurementIdentity.identify(userID: "user-1", traits: ["plan": "pro"], to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(store.saves.withLock { $0 }, atStart + 1)

        // Relaunched on what was saved: identifying the same user writes nothing.
        let relaunched = self.aggregator(store: store, center: NotificationCenter())
        let beforeRelaunchIdentify = store.saves.withLock { $0 }
        relaunched.receive(
            Notification(
                name: .measurementIdentity, object: nil,
                userInfo: IdentityChange.identify(userID: "user-1", traits: ["plan": .string("pro")]).userInfo))
        relaunched.waitUntilDelivered()
        XCTAssertEqual(store.saves.withLock { $0 }, beforeRelaunchIdentify)
        MeasurementIdentity.reset(to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(store.saves.withLock { $0 }, beforeRelaunchIdentify + 1)
    }
}

/// An in-memory store that counts its writes.
private final class CountingStore: IdentityStore, @unchecked Sendable {
    // @unchecked: both properties are locked values.
    let saves = LockedValue(0)
    private let inner = InMemoryIdentityStore()

    func load() throws -> IdentityStoreContents? { try inner.load() }

    func save(_ contents: IdentityStoreContents) throws {
        saves.withLock { $0 += 1 }
        try inner.save(contents)
    }
}
