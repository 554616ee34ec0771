import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

final class HTTPTrackerDirectoryTests: XCTestCase {
    private func messages(makingATrackerIn directory: URL) throws -> [String] {
        let messages = LockedValue<[String]>([])
        var configuration = testConfiguration()
        configuration.logHandler = { message in messages.withLock { $0.append(message) } }
        _ = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "k", baseURL: URL(string: "http://127.0.0.1:9")!),
            directory: directory, configuration: configuration)
        return messages.withLock { $0 }
    }

    func testADirectoryInAnAppGroupContainerIsLoggedAsAMistake() throws {
        // A suspended iOS app holding a file lock in a shared container is killed (0xdead10cc).
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let shared = root.appendingPathComponent("Shared/AppGroup/6C1D2F0E/analytics")
        let logged = try messages(makingATrackerIn: shared)
        XCTAssertEqual(
            logged.filter { $0.contains("is in an App Group container") && $0.contains("0xdead10cc") }.count, 1,
            "\(logged)")
    }

    func testADirectoryInTheAppsOwnContainerIsNotLogged() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let logged = try messages(
            makingATrackerIn: root.appendingPathComponent("Library/Application Support/analytics"))
        XCTAssertFalse(logged.contains { $0.contains("App Group") }, "\(logged)")
    }
}
