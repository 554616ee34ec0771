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

    private let catalog = EventCatalog(
        module: "Account",
        events: [
            EventSpec(
                name: "account/signed_in", type: .userAction,
                args: [ArgSpec(name: "email", type: .string, isRequired: true, isPersonalData: true)])
        ])

    /// An aggregator on its own center, with a store value of its own on the test's directory.
    private final class Bus {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let problems = LockedValue<[String]>([])
        let aggregator: EventAggregator

        init(_ directory: URL, catalog: EventCatalog) {
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
            MeasurementEvent.post("account/signed_in", args: ["email": "jane@example.com"], to: center)
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
