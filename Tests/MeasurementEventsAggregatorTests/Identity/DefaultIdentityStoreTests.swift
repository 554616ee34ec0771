import Foundation
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

/// The default store keeps one identity and one salt per install, which two aggregators of one
/// process on one directory share (IdentityStoreOwnershipTests); no writable location means one
/// problem and work in memory (issue 30).
final class DefaultIdentityStoreTests: XCTestCase {
    private var directory: URL!

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

    /// One launch that posts an email; the anonymous id and the hash trackers got, and the problems.
    private func launch(
        _ store: any IdentityStore, forgetting: Bool = false
    ) -> (anonymousID: String, hash: String, problems: [String]) {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let problems = LockedValue<[String]>([])
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = store
        configuration.catalogs = [catalog]
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        if forgetting { aggregator.forgetUser() }
        MeasurementEvent.post("account/signed_in", args: ["email": "jane@example.com"], to: center)
        aggregator.waitUntilDelivered()
        let event = tracker.events.last
        return (
            event?.attribution?.identity.anonymousID ?? "", event?.args["email"]?.stringValue ?? "",
            problems.withLock { $0 }
        )
    }

    func testTheDefaultIsTheStandardFileStore() {
        let store = EventAggregator.Configuration().identityStore as? FileIdentityStore
        XCTAssertEqual(store?.directory, FileIdentityStore.standardDirectory)
        XCTAssertTrue(EventAggregator.Configuration.testing.identityStore is InMemoryIdentityStore)
    }

    func testTheStandardDirectoryIsTheXDGStateDirectoryOnLinux() throws {
        #if canImport(Darwin)
            throw XCTSkip("Apple platforms use Application Support")
        #else
            let saved = ProcessInfo.processInfo.environment["XDG_STATE_HOME"]
            defer {
                if let saved { setenv("XDG_STATE_HOME", saved, 1) } else { unsetenv("XDG_STATE_HOME") }
            }
            setenv("XDG_STATE_HOME", "/state/home", 1)
            let app = ProcessInfo.processInfo.processName
            XCTAssertEqual(FileIdentityStore.standardDirectory.path, "/state/home/\(app)/MeasurementEvents")
            setenv("XDG_STATE_HOME", "relative", 1)  // not absolute: ignored, as the specification says
            XCTAssertEqual(
                FileIdentityStore.standardDirectory.path,
                NSHomeDirectory() + "/.local/state/\(app)/MeasurementEvents")
        #endif
    }

    // The two processes of a real relaunch are checked by Scripts/check-readme-setup.py.
    func testTwoLaunchesSendTheSameAnonymousIDAndTheSameHash() {
        let store = FileIdentityStore(directory: directory)
        let first = launch(store)
        let second = launch(store)
        XCTAssertEqual(first.problems, [])
        XCTAssertEqual(second.problems, [])
        XCTAssertEqual(first.anonymousID, second.anonymousID)
        XCTAssertEqual(first.hash, second.hash)
        XCTAssertTrue(first.hash.hasPrefix("sha256:"), first.hash)
        // Another install: another salt, another hash for the same email.
        let other = launch(InMemoryIdentityStore())
        XCTAssertNotEqual(other.hash, first.hash)
        let saved = try? store.load()
        XCTAssertEqual(saved?.personalDataSalt?.utf8.count, 64)
    }

    func testForgettingTheUserReplacesTheSalt() {
        let store = FileIdentityStore(directory: directory)
        let first = launch(store)
        let forgotten = launch(store, forgetting: true)
        XCTAssertNotEqual(forgotten.anonymousID, first.anonymousID)
        XCTAssertNotEqual(forgotten.hash, first.hash)
        XCTAssertEqual(launch(store).hash, forgotten.hash, "and keeps the new one")
    }

    func testASecondStoreOnTheDirectoryInThisProcessSharesTheIdentity() throws {
        let owner = launch(FileIdentityStore(directory: directory))
        let other = launch(FileIdentityStore(directory: directory))
        XCTAssertEqual(other.problems, [])
        XCTAssertEqual(other.anonymousID, owner.anonymousID)
        XCTAssertEqual(other.hash, owner.hash)
    }

    func testAStoreLocationThatIsAFileIsReportedOnceAndEventsFlowInMemory() throws {
        let blocked = directory.appendingPathComponent("state")
        try Data("x".utf8).write(to: blocked)
        let result = launch(FileIdentityStore(directory: blocked))
        XCTAssertEqual(result.problems.count, 1, "\(result.problems)")
        XCTAssertTrue(result.problems[0].contains("\(blocked.path) is not a directory"), result.problems[0])
        XCTAssertTrue(result.hash.hasPrefix("sha256:"), "events still flow, hashed")
        print("location is a file: \(result.problems[0])")
    }

    func testADamagedFileWithoutItsSaltSaysHashesChange() throws {
        let store = FileIdentityStore(directory: directory)
        try store.save(IdentityStoreContents(identity: EventIdentity(anonymousID: "anon-kept-1234")))
        let file = directory.appendingPathComponent("identity.json")
        let whole = try Data(contentsOf: file)
        try whole.prefix(whole.count - 3).write(to: file)
        let result = launch(store)
        XCTAssertEqual(result.anonymousID, "anon-kept-1234")
        XCTAssertEqual(result.problems.count, 1, "\(result.problems)")
        XCTAssertTrue(result.problems[0].contains("hashes of personal data change from now on"), result.problems[0])
        print("damaged salt: \(result.problems[0])")
    }

    func testTheMemoryStoreWarningIsForAppsNotTestsOrPreviews() {
        XCTAssertTrue(IdentitySetupCheck.isTestOrPreview(["XCTestConfigurationFilePath": "/x"]))
        XCTAssertTrue(IdentitySetupCheck.isTestOrPreview(["XCODE_RUNNING_FOR_PREVIEWS": "1"]))
        XCTAssertFalse(IdentitySetupCheck.isTestOrPreview(["HOME": "/Users/jane"]))
        XCTAssertFalse(IdentitySetupCheck.warnsOfMemoryStore(FileIdentityStore(directory: directory)))
        print("identity in memory: \(EventAggregator.Problem.identityInMemory)")
    }

    /// A server or a command-line tool (no bundle identifier) keeps identity in memory on
    /// purpose (`Configuration.server` does): only an app or an extension is warned.
    func testTheMemoryStoreWarningIsForAProcessWithABundleIdentifier() {
        let app = ["HOME": "/Users/jane"]
        XCTAssertTrue(
            IdentitySetupCheck.keepsAnAppsIdentityInMemory(
                .inMemory, environment: app, bundleIdentifier: "com.example.app"))
        XCTAssertFalse(
            IdentitySetupCheck.keepsAnAppsIdentityInMemory(.inMemory, environment: app, bundleIdentifier: nil),
            "a server or a tool run with swift run")
        XCTAssertFalse(
            IdentitySetupCheck.keepsAnAppsIdentityInMemory(
                .inMemory, environment: ["XCTestConfigurationFilePath": "/x"], bundleIdentifier: "com.example.app"))
        XCTAssertFalse(
            IdentitySetupCheck.keepsAnAppsIdentityInMemory(
                FileIdentityStore(directory: directory), environment: app, bundleIdentifier: "com.example.app"))
        XCTAssertFalse(
            IdentitySetupCheck.keepsAnAppsIdentityInMemory(
                EventAggregator.Configuration.server.identityStore, environment: app, bundleIdentifier: nil))
    }
}
