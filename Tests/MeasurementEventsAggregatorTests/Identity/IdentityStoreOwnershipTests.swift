import Foundation
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Aggregators of one process on one store directory share the install's identity: one
/// anonymous id, one salt, no problem reported (issue 48); another process is still refused.
/// Real directories; each aggregator gets a store value of its own, as `.standard` gives one.
final class IdentityStoreOwnershipTests: XCTestCase {
    private var directory: URL!
    private var file: URL { directory.appendingPathComponent("identity.json") }

    override func setUp() {
        directory = makeTemporaryDirectory(name)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private let catalog = AccountCatalog.catalog

    /// An aggregator on its own center, with a store value of its own on the test's directory.
    private final class Bus {
        let center: NotificationCenter
        let tracker = RecordingTracker()
        let problems = LockedValue<[String]>([])
        let aggregator: EventAggregator

        init(_ directory: URL, catalog: EventCatalog, center: NotificationCenter = NotificationCenter()) {
            self.center = center
            var configuration = EventAggregator.Configuration()
            configuration.identityStore = FileIdentityStore(directory: directory)
            configuration.catalogs = [catalog]
            configuration.problemHandler = { [problems] problem in
                problems.withLock { $0.append(problem.description) }
            }
            aggregator = EventAggregator(
                center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
            aggregator.start()
        }

        /// Posts a sign-in with an email and returns the event the tracker got.
        func signIn() -> MeasurementEvent? {
            MeasurementEvent.post("account/signed_up", args: ["email": "jane@example.com", "plan": "pro"], to: center)
            aggregator.waitUntilDelivered()
            return tracker.events.last
        }
    }

    func testTwoAggregatorsOnOneDirectoryShareTheAnonymousIDAndTheSaltAndReportNothing() throws {
        let first = Bus(directory, catalog: catalog)
        let second = Bus(directory, catalog: catalog)
        let one = try XCTUnwrap(first.signIn())
        let other = try XCTUnwrap(second.signIn())
        XCTAssertEqual(first.problems.withLock { $0 }, [])
        XCTAssertEqual(second.problems.withLock { $0 }, [])
        XCTAssertEqual(other.anonymousID, one.anonymousID)
        XCTAssertEqual(other.args["email"], one.args["email"], "one salt: the same hash")
        XCTAssertTrue(one.args["email"]?.stringValue?.hasPrefix("sha256:") == true)
        let stored = try XCTUnwrap(try FileIdentityStore(directory: directory).load())
        XCTAssertEqual(stored.identity.anonymousID, one.anonymousID)
    }

    func testAnIdentityChangeOnOneBusReachesTheOtherAtItsNextDelivery() throws {
        let first = Bus(directory, catalog: catalog)
        let second = Bus(directory, catalog: catalog)
        let before = try XCTUnwrap(second.signIn())

        MeasurementIdentity.identify(userID: "u-1", traits: ["plan": "pro"], to: first.center)
        first.aggregator.waitUntilDelivered()
        let identified = try XCTUnwrap(second.signIn())
        XCTAssertEqual(identified.userID, "u-1")
        XCTAssertEqual(identified.anonymousID, before.anonymousID)

        MeasurementIdentity.reset(to: first.center)
        first.aggregator.waitUntilDelivered()
        let reset = try XCTUnwrap(second.signIn())
        XCTAssertNil(reset.userID, "signed out on the other bus: no user here either")
        XCTAssertNotEqual(reset.anonymousID, before.anonymousID)
        XCTAssertEqual(reset.anonymousID, try XCTUnwrap(first.signIn()).anonymousID)
        XCTAssertEqual(second.tracker.identityEvents.count, 0, "taken on the events, not told as a change of its own")
    }

    func testForgettingTheUserOnOneAggregatorGivesTheOtherTheNewAnonymousIDAndSalt() throws {
        let first = Bus(directory, catalog: catalog)
        let second = Bus(directory, catalog: catalog)
        let before = try XCTUnwrap(second.signIn())
        first.aggregator.forgetUser()
        let forgotten = try XCTUnwrap(first.signIn())
        let after = try XCTUnwrap(second.signIn())
        XCTAssertNotEqual(forgotten.anonymousID, before.anonymousID)
        XCTAssertEqual(after.anonymousID, forgotten.anonymousID)
        XCTAssertNotEqual(after.args["email"], before.args["email"], "the old salt is gone")
        XCTAssertEqual(after.args["email"], forgotten.args["email"])
        // The other aggregator's later saves never bring the forgotten identity back.
        second.aggregator.applicationDidEnterBackground()
        second.aggregator.waitUntilDelivered()
        let stored = try XCTUnwrap(try FileIdentityStore(directory: directory).load())
        XCTAssertEqual(stored.identity.anonymousID, forgotten.anonymousID)
    }

    func testOneAggregatorsSavesLeaveTheConsentAndReleaseTheOtherSaved() throws {
        let first = Bus(directory, catalog: catalog)
        let second = Bus(directory, catalog: catalog)
        first.aggregator.setConsent(.denied)
        XCTAssertEqual(first.aggregator.recordAppRelease(version: "2.0", build: "20"), .installed)
        // The second saves its identity change, its session and its background move.
        MeasurementIdentity.identify(userID: "u-2", to: second.center)
        _ = second.signIn()
        second.aggregator.applicationDidEnterBackground()
        second.aggregator.waitUntilDelivered()

        let stored = try XCTUnwrap(try FileIdentityStore(directory: directory).load())
        XCTAssertEqual(stored.consent, .denied, "the second set no consent: the first's stays")
        XCTAssertEqual(stored.appVersion, "2.0")
        XCTAssertEqual(stored.appBuild, "20")
        XCTAssertEqual(stored.identity.userID, "u-2", "the identity saved last")
        XCTAssertEqual(second.aggregator.consent, .granted, "each aggregator's consent is its own")
    }

    func testAnotherProcessHoldingTheDirectoryIsStillRefusedAndNothingIsWritten() throws {
        let saved = IdentityStoreContents(identity: EventIdentity(anonymousID: "other-process"))
        try FileIdentityStore(directory: directory).save(saved)
        let before = try Data(contentsOf: file)
        // A lock taken outside this process's registry of directories: to `flock`, an open file
        // description of its own is what another process's is.
        let descriptor = open(directory.appendingPathComponent("identity.lock").path, O_RDWR)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        XCTAssertEqual(flock(descriptor, LOCK_EX | LOCK_NB), 0)

        let refused = Bus(directory, catalog: catalog)
        let event = try XCTUnwrap(refused.signIn())
        let problems = refused.problems.withLock { $0 }
        XCTAssertEqual(problems.count, 1, "\(problems)")
        XCTAssertTrue(problems[0].contains("is in use by another process"), problems[0])
        XCTAssertTrue(problems[0].contains(directory.path), problems[0])
        XCTAssertNotEqual(event.anonymousID, "other-process", "in memory: a new anonymous id")
        XCTAssertEqual(try Data(contentsOf: file), before)
        print("another process: \(problems[0])")
    }

    func testTheLockIsReleasedWhenTheLastStoreOfTheProcessGoes() throws {
        var first: FileIdentityStore? = FileIdentityStore(directory: directory)
        var second: FileIdentityStore? = FileIdentityStore(directory: directory)
        _ = try first?.load()
        _ = try second?.load()
        let descriptor = open(directory.appendingPathComponent("identity.lock").path, O_RDWR)
        defer { close(descriptor) }
        XCTAssertNotEqual(flock(descriptor, LOCK_EX | LOCK_NB), 0, "held by the process")
        first = nil
        XCTAssertNotEqual(flock(descriptor, LOCK_EX | LOCK_NB), 0, "still held by the second store")
        second = nil
        XCTAssertEqual(flock(descriptor, LOCK_EX | LOCK_NB), 0, "free for another process")
    }

    // MARK: stop() lets the directory go

    /// Whether another process could take the directory now: a lock of the test's own, taken
    /// and given back at once.
    private func isFreeForAnotherProcess() -> Bool {
        let descriptor = open(directory.appendingPathComponent("identity.lock").path, O_RDWR)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }

    func testAnAggregatorMadeRightAfterStopTakesUpTheStoreWithTheSameAnonymousID() throws {
        let first = Bus(directory, catalog: catalog)
        let before = try XCTUnwrap(first.signIn())
        first.aggregator.stop()
        // The stopped aggregator is still alive here (the test holds it), yet the store is free.
        XCTAssertTrue(isFreeForAnotherProcess(), "stop() let the directory go before it returned")

        let second = Bus(directory, catalog: catalog)
        let after = try XCTUnwrap(second.signIn())
        XCTAssertEqual(after.anonymousID, before.anonymousID)
        XCTAssertEqual(after.args["email"], before.args["email"], "the same salt")
        XCTAssertEqual(first.problems.withLock { $0 } + second.problems.withLock { $0 }, [])
        XCTAssertFalse(isFreeForAnotherProcess(), "held by the second")
    }

    func testAStoppedAggregatorWritesNothingAndSaysSoOnce() throws {
        let first = Bus(directory, catalog: catalog)
        let before = try XCTUnwrap(first.signIn())
        first.aggregator.stop()
        let second = Bus(directory, catalog: catalog)
        _ = second.signIn()
        let saved = try Data(contentsOf: file)

        first.aggregator.setConsent(.denied)
        first.aggregator.forgetUser()
        MeasurementIdentity.identify(userID: "u-late", to: first.center)  // not observed any more
        first.aggregator.applicationDidEnterBackground()
        first.aggregator.waitUntilDelivered()

        XCTAssertEqual(try Data(contentsOf: file), saved, "nothing written to the store it let go")
        let problems = first.problems.withLock { $0 }
        XCTAssertEqual(problems.count, 1, "\(problems)")
        XCTAssertTrue(problems[0].contains("the consent (denied) holds for the events it still delivers"), problems[0])
        XCTAssertEqual(first.aggregator.consent, .denied, "in memory, for its own trackers")
        XCTAssertNotEqual(first.aggregator.currentAttribution.identity.anonymousID, before.anonymousID)
        XCTAssertEqual(try XCTUnwrap(second.signIn()).anonymousID, before.anonymousID)
        print("a change after stop(): \(problems[0])")
    }

    func testStartingAgainHoldsTheStoreAndTakesTheIdentitySavedMeanwhile() throws {
        let first = Bus(directory, catalog: catalog)
        let before = try XCTUnwrap(first.signIn())
        first.aggregator.stop()
        let second = Bus(directory, catalog: catalog)
        second.aggregator.forgetUser()
        let forgotten = try XCTUnwrap(second.signIn())
        XCTAssertNotEqual(forgotten.anonymousID, before.anonymousID)

        first.aggregator.start()
        let after = try XCTUnwrap(first.signIn())
        XCTAssertEqual(after.anonymousID, forgotten.anonymousID)
        XCTAssertEqual(after.args["email"], forgotten.args["email"])
        XCTAssertEqual(first.problems.withLock { $0 } + second.problems.withLock { $0 }, [])
        second.aggregator.stop()
        XCTAssertFalse(isFreeForAnotherProcess(), "the first holds it again")
        first.aggregator.stop()
        XCTAssertTrue(isFreeForAnotherProcess())
    }

    func testAHundredAggregatorsInARowKeepOneAnonymousIDWhileAnotherThreadPosts() throws {
        let center = NotificationCenter()
        // Another thread posts 30 events on the center during each aggregator's life and stop().
        let go = DispatchSemaphore(value: 0)
        let posted = DispatchSemaphore(value: 0)
        let running = LockedValue(true)
        DispatchQueue.global().async {
            while true {
                go.wait()
                guard running.withLock({ $0 }) else {
                    posted.signal()
                    return
                }
                for _ in 0..<30 {
                    MeasurementEvent.post(
                        "account/signed_up", args: ["email": "joe@example.com", "plan": "pro"], to: center)
                }
                posted.signal()
            }
        }
        var anonymousIDs: Set<String> = []
        var problems: [String] = []
        var freeAfterStop = 0
        for _ in 0..<100 {
            let bus = Bus(directory, catalog: catalog, center: center)
            go.signal()
            MeasurementEvent.post("account/signed_up", args: ["email": "jane@example.com", "plan": "pro"], to: center)
            bus.aggregator.waitUntilDelivered()
            bus.aggregator.stop()
            if isFreeForAnotherProcess() { freeAfterStop += 1 }
            posted.wait()
            bus.aggregator.waitUntilDelivered()  // what was posted while it stopped, if anything
            anonymousIDs.formUnion(bus.tracker.events.compactMap(\.anonymousID))
            problems += bus.problems.withLock { $0 }
        }
        running.withLock { $0 = false }
        go.signal()
        posted.wait()
        XCTAssertEqual(anonymousIDs.count, 1, "\(anonymousIDs)")
        XCTAssertEqual(problems.count, 0, "\(problems.prefix(3))")
        XCTAssertEqual(freeAfterStop, 100, "every stop() let the directory go before it returned")
        let stored = try XCTUnwrap(try FileIdentityStore(directory: directory).load())
        XCTAssertEqual(stored.identity.anonymousID, anonymousIDs.first)
    }

    // MARK: The merge of a save over what another aggregator saved

    private let stored = IdentityStoreContents(
        identity: EventIdentity(userID: "u-stored", anonymousID: "stored"), consent: .denied,
        appVersion: "2.0", appBuild: "20", personalDataSalt: "salt-stored")
    private let base = IdentityStoreContents(
        identity: EventIdentity(anonymousID: "base"), consent: .granted, appVersion: "1.0", appBuild: "10",
        personalDataSalt: "salt-base")

    func testAFieldThisAggregatorDidNotChangeStaysAsStored() {
        var mine = base
        mine.session = Session(
            id: 7, startedAt: Date(timeIntervalSince1970: 7), lastActivityAt: Date(timeIntervalSince1970: 8))
        let merged = AttributionState.merged(mine, base: base, over: stored)
        XCTAssertEqual(merged.identity, stored.identity)
        XCTAssertEqual(merged.personalDataSalt, stored.personalDataSalt)
        XCTAssertEqual(merged.consent, Consent.denied)
        XCTAssertEqual(merged.appVersion, "2.0")
        XCTAssertEqual(merged.session, mine.session, "its own change")
    }

    func testAFieldThisAggregatorChangedIsItsOwn() {
        var mine = base
        mine.identity = EventIdentity(anonymousID: "mine")
        mine.personalDataSalt = "salt-mine"
        mine.consent = .granted
        mine.appVersion = "3.0"
        let merged = AttributionState.merged(mine, base: base, over: stored)
        XCTAssertEqual(merged.identity.anonymousID, "mine")
        XCTAssertEqual(merged.personalDataSalt, "salt-mine", "the salt goes with the identity")
        XCTAssertEqual(merged.appVersion, "3.0")
        XCTAssertEqual(merged.appBuild, "10", "version and build go together")
        XCTAssertEqual(merged.consent, Consent.denied, "unchanged since its base: the stored one stays")
    }

    func testTheFirstIdentitySavedIsTheInstallsWhenThisAggregatorNeverReadTheStore() {
        var mine = base
        mine.identity = EventIdentity(anonymousID: "new")
        let merged = AttributionState.merged(mine, base: nil, over: stored)
        XCTAssertEqual(merged.identity, stored.identity)
        XCTAssertEqual(merged.personalDataSalt, stored.personalDataSalt)
        XCTAssertEqual(merged.consent, mine.consent)
        XCTAssertEqual(AttributionState.merged(mine, base: nil, over: nil), mine, "nothing stored: all its own")
        var withoutSalt = stored
        withoutSalt.personalDataSalt = nil  // written before 3.0.0: the salt made now is kept
        XCTAssertEqual(AttributionState.merged(mine, base: nil, over: withoutSalt).personalDataSalt, "salt-base")
    }
}
