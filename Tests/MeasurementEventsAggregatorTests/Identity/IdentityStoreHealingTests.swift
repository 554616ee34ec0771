import Foundation
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

/// A damaged `identity.json` is moved aside once, reported once in plain words, and replaced;
/// the anonymous id survives whenever the damaged file still holds it.
final class IdentityStoreHealingTests: XCTestCase {
    private var directory: URL!
    private var file: URL { directory.appendingPathComponent("identity.json") }

    override func setUp() {
        directory = makeTemporaryDirectory(name)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// One launch: the problems it reported and the anonymous id it used.
    private func launch(_ store: FileIdentityStore? = nil) -> (problems: [String], anonymousID: String) {
        let problems = LockedValue<[String]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = store ?? FileIdentityStore(directory: directory)
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        let aggregator = EventAggregator(
            center: NotificationCenter(), filter: .allowAll, trackers: [], configuration: configuration)
        aggregator.start()
        aggregator.waitUntilDelivered()
        let id = aggregator.currentAttribution.identity.anonymousID
        aggregator.stop()
        return (problems.withLock { $0 }, id)
    }

    private func assertHealed(
        _ first: (problems: [String], anonymousID: String), expecting words: String, store: FileIdentityStore? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        XCTAssertEqual(first.problems.count, 1, "\(first.problems)", file: file, line: line)
        XCTAssertTrue(first.problems[0].contains(words), first.problems[0], file: file, line: line)
        XCTAssertTrue(
            first.problems[0].contains("moved it aside to identity.json.corrupt"), first.problems[0], file: file,
            line: line)
        let second = launch(store)
        XCTAssertEqual(second.problems, [], "healed: the next launch reports nothing", file: file, line: line)
        XCTAssertEqual(second.anonymousID, first.anonymousID, "and keeps the id", file: file, line: line)
        print("identity store case: \(first.problems[0])")
    }

    func testADirectoryInPlaceOfTheFileIsMovedAsideOnceAndReplaced() throws {
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        try assertHealed(
            launch(),
            expecting:
                "identity store \(file.path) is a directory, not a file; moved it aside to identity.json.corrupt; "
                + "nothing in it could be recovered, so this launch starts with a new anonymous id")
        var isDirectory: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.path + ".corrupt", isDirectory: &isDirectory))
        XCTAssertTrue(isDirectory.boolValue)
    }

    func testGarbageIsMovedAsideOnceAndReplaced() throws {
        try Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 151) }).write(to: file)
        try assertHealed(launch(), expecting: "is not a valid identity file")
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.path + ".corrupt"), "kept for inspection")
    }

    /// The process may not read the file. Tests run as root here, where permissions do not stop
    /// a read; a link that points at itself fails `open` the same way (an errno, told in words).
    func testAFileThatCannotBeReadIsMovedAsideNotOverwritten() throws {
        try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: file.path)
        try assertHealed(launch(), expecting: "cannot be read: too many levels of symbolic links")
        XCTAssertEqual(IdentityStoreFile.words(EACCES), "permission denied")
    }

    func testADamagedFileKeepsTheAnonymousIDAndConsentItStillHolds() throws {
        let store = FileIdentityStore(directory: directory)
        try store.save(
            IdentityStoreContents(
                identity: EventIdentity(userID: "user-1", anonymousID: "anon-kept-1234"), consent: .denied))
        let whole = try Data(contentsOf: file)
        try whole.prefix(whole.count - 5).write(to: file)
        let first = launch(store)
        XCTAssertEqual(first.anonymousID, "anon-kept-1234")
        try assertHealed(
            first, expecting: "kept the anonymous id it held (anon-kept-1234) and its consent (denied)", store: store)
        XCTAssertEqual(try store.load()?.consent, .denied)
    }

    func testAStoreThatCannotBeWrittenIsReportedOncePerLaunch() throws {
        let blocked = directory.appendingPathComponent("blocked")
        try Data("x".utf8).write(to: blocked)
        let store = FileIdentityStore(directory: blocked)
        let contents = IdentityStoreContents(identity: EventIdentity(anonymousID: "anon-1"))
        XCTAssertThrowsError(try store.save(contents)) { error in
            XCTAssertTrue("\(error)".contains("\(blocked.path) is not a directory"), "\(error)")
            XCTAssertTrue("\(error)".contains("kept in memory"), "\(error)")
        }
        XCTAssertNoThrow(try store.save(contents), "said once")
        try FileManager.default.removeItem(at: blocked)
        XCTAssertNoThrow(try store.save(contents), "writable again")
        try Data("x".utf8).write(to: blocked.appendingPathComponent("identity.json.new"))
        chmod(blocked.path, 0o500)
        defer { chmod(blocked.path, 0o700) }
        // A new episode is reported again (as root, a read-only directory is still writable).
        if getuid() != 0 { XCTAssertThrowsError(try store.save(contents)) }
    }

    func testTheFileIsPrivateToTheApp() throws {
        let nested = directory.appendingPathComponent("analytics")
        try FileIdentityStore(directory: nested).save(
            IdentityStoreContents(identity: EventIdentity(anonymousID: "anon-1")))
        let fileMode =
            try FileManager.default.attributesOfItem(atPath: nested.appendingPathComponent("identity.json").path)[
                .posixPermissions] as? Int
        let directoryMode = try FileManager.default.attributesOfItem(atPath: nested.path)[.posixPermissions] as? Int
        XCTAssertEqual(fileMode, 0o600)
        XCTAssertEqual(directoryMode, 0o700)
    }

    func testSalvageReadsOnlyPlainStrings() {
        XCTAssertEqual(IdentityStoreSalvage.stringValue(of: "a", in: #"{"a" : "x-1", "#), "x-1")
        XCTAssertNil(IdentityStoreSalvage.stringValue(of: "a", in: #"{"a":"x-1"#), "not closed")
        XCTAssertNil(IdentityStoreSalvage.stringValue(of: "a", in: #"{"a":12}"#))
        XCTAssertNil(IdentityStoreSalvage.stringValue(of: "a", in: #"{"a":"x\"y"}"#), "escapes are not guessed")
        XCTAssertNil(IdentityStoreSalvage.contents(in: Array(#"{"anonymousID":""}"#.utf8)))
    }
}
