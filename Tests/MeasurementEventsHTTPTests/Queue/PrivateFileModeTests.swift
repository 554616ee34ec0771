import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Every file the package writes is its owner's alone (0600) and every folder of its own too
/// (0700), even under a umask that would widen them; the missing parents it creates are the
/// app's, made as `mkdir -p` makes them (the default mode: 0777 less the umask).
final class PrivateFileModeTests: LoopbackTestCase {
    private var savedUmask: mode_t = 0

    override func setUpWithError() throws {
        try super.setUpWithError()
        savedUmask = umask(0)  // the widest: files would be 0666 and folders 0777 if it were obeyed
    }

    override func tearDown() {
        umask(savedUmask)
        super.tearDown()
    }

    private func mode(_ path: String) -> mode_t {
        var status = stat()
        XCTAssertEqual(lstat(path, &status), 0, path)
        return status.st_mode & 0o777
    }

    /// Every file and folder under `root` (not `root` itself), by path relative to it.
    private func items(under root: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        return (enumerator?.allObjects as? [String] ?? []).sorted()
    }

    func testEveryFileAndFolderOfThePackageIsTheOwnersAloneAndParentsGetTheDefaultMode() throws {
        let center = NotificationCenter()
        // Nothing is uploaded unasked, so that no queue file is removed while it is listed below.
        var httpConfiguration = testConfiguration(flushAt: 3)
        httpConfiguration.flushPolicies = [ManualFlushPolicy()]
        let http = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL),
            directory: directory.appendingPathComponent("app/analytics/segment"),
            configuration: httpConfiguration)
        let lines = try JSONLinesFileTracker(url: directory.appendingPathComponent("logs/today/events.jsonl"))
        let store = FileIdentityStore(directory: directory.appendingPathComponent("identity/store"))
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = store
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [http, lines], configuration: configuration)
        aggregator.start()
        MeasurementIdentity.identify(userID: "user-1", to: center)
        // Seven events in batches of three: sealed batches and an open segment, none sent.
        for index in 0..<7 { MeasurementEvent.post("feed/item_tapped", args: ["position": index], to: center) }
        aggregator.waitUntilDelivered()

        let checked = items(under: directory)
        XCTAssertTrue(checked.contains("identity/store/identity.json"), "\(checked)")
        XCTAssertTrue(checked.contains("app/analytics/segment/queue"), "\(checked)")
        XCTAssertTrue(checked.contains("logs/today/events.jsonl"), "\(checked)")
        XCTAssertTrue(checked.contains { $0.hasPrefix("app/analytics/segment/queue/") }, "\(checked)")
        // The folders the package owns: the tracker's, its queue's, the identity store's.
        let own: Set = ["app/analytics/segment", "app/analytics/segment/queue", "identity/store"]
        // The app's: parents of those, and the folder it named for the file tracker's file.
        let parents: Set = ["app", "app/analytics", "identity", "logs", "logs/today"]
        for path in checked {
            let url = directory.appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            XCTAssertTrue(FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory))
            let expected = !isDirectory.boolValue ? "600" : own.contains(path) ? "700" : "777"
            if isDirectory.boolValue { XCTAssertTrue(own.contains(path) || parents.contains(path), path) }
            XCTAssertEqual(
                String(mode(url.path), radix: 8), expected, "\(path) (\(isDirectory.boolValue ? "folder" : "file"))")
        }
        print("modes:", checked.map { "\($0) \(String(mode(directory.appendingPathComponent($0).path), radix: 8))" })
    }

    func testAFileAnOlderVersionLeftReadableByOthersIsNarrowedWhenOpened() throws {
        let url = directory.appendingPathComponent("events.jsonl")
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: Data("{}\n".utf8)))
        XCTAssertEqual(chmod(url.path, 0o644), 0)
        _ = try JSONLinesFileTracker(url: url)
        XCTAssertEqual(String(mode(url.path), radix: 8), "600")
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), "{}\n")
    }

    func testAFolderThatExistedKeepsItsMode() throws {
        let existing = directory.appendingPathComponent("Documents")
        try FileManager.default.createDirectory(at: existing, withIntermediateDirectories: false)
        XCTAssertEqual(chmod(existing.path, 0o755), 0)
        _ = try JSONLinesFileTracker(url: existing.appendingPathComponent("events.jsonl"))
        XCTAssertEqual(String(mode(existing.path), radix: 8), "755")
        XCTAssertEqual(String(mode(existing.appendingPathComponent("events.jsonl").path), radix: 8), "600")
    }
}
