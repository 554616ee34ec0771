import Foundation
import LoopbackCollector
import MeasurementEvents
@testable import MeasurementEventsHTTP
import XCTest

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A child process (`http-crash-child`) tracks 10,000 events and is killed with SIGKILL at a
/// random moment. An event is *accepted* when the child has printed its index, which it does
/// right after `track` returned. A new tracker on the same directory must then deliver every
/// accepted event; repeats are allowed only with the same message id.
final class CrashRecoveryTests: XCTestCase {
    private static let runs = 20
    private static let eventsPerRun = 10_000

    private var childURL: URL {
        #if canImport(Darwin)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("http-crash-child")
        }
        #endif
        return Bundle.main.bundleURL.appendingPathComponent("http-crash-child")
    }

    func testEveryAcceptedEventIsDeliveredAfterSIGKILL() throws {
        guard FileManager.default.isExecutableFile(atPath: childURL.path) else {
            return XCTFail("build http-crash-child first (swift build --build-tests builds it): \(childURL.path)")
        }
        let collector = LoopbackCollector()
        try collector.start()
        defer { collector.stop() }
        var generator = SystemRandomNumberGenerator()
        var killedMidway = 0
        var totalAccepted = 0
        for run in 0..<Self.runs {
            let directory = makeTemporaryDirectory("crash\(run)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let first = run * Self.eventsPerRun
            let (accepted, wasKilled) = try runChild(
                directory: directory, base: collector.baseURL, first: first,
                killAfter: Double.random(in: 0.05...0.6, using: &generator))
            if wasKilled { killedMidway += 1 }
            totalAccepted += accepted.count

            var configuration = testConfiguration()
            configuration.requestTimeout = 10
            let restarted = try HTTPTracker(
                encoder: SegmentEncoder(writeKey: "crash-test", baseURL: collector.baseURL),
                directory: directory, configuration: configuration)
            try restarted.consentDidChange(to: .granted)
            XCTAssertTrue(restarted.waitUntilDelivered(timeout: 60), "run \(run): queue not drained")
            let received = Set(receivedIndices(collector.requests))
            let missing = accepted.filter { !received.contains($0) }
            XCTAssertTrue(missing.isEmpty, "run \(run): \(missing.count) accepted events lost, e.g. \(missing.prefix(5))")
        }
        // Duplicates must be the same event (same message id), never a new one.
        var idsByIndex: [Int: Set<String>] = [:]
        var calls = 0
        for call in segmentCalls(collector.requests) {
            guard let index = (call["properties"] as? [String: Any])?["index"] as? Int,
                  let id = call["messageId"] as? String else { continue }
            idsByIndex[index, default: []].insert(id)
            calls += 1
        }
        XCTAssertTrue(idsByIndex.values.allSatisfy { $0.count == 1 }, "an index arrived under two message ids")
        let duplicates = calls - idsByIndex.count
        print("crash test: \(Self.runs) runs, \(killedMidway) killed before finishing, \(totalAccepted) accepted, "
              + "\(idsByIndex.count) distinct delivered, \(duplicates) duplicates (same message id)")
        XCTAssertGreaterThan(killedMidway, Self.runs / 2, "most runs should be killed mid-way")
    }

    private func runChild(directory: URL, base: URL, first: Int, killAfter: TimeInterval) throws -> ([Int], Bool) {
        let process = Process()
        process.executableURL = childURL
        process.arguments = [directory.path, base.absoluteString, String(first), String(Self.eventsPerRun)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let collected = LockedValue(Data())
        let reading = DispatchSemaphore(value: 0)
        let reader = output.fileHandleForReading
        DispatchQueue.global().async {
            let data = reader.readDataToEndOfFile()
            collected.withLock { $0 = data }
            reading.signal()
        }
        try process.run()
        Thread.sleep(forTimeInterval: killAfter)   // the random crash point, not a timing assertion
        let wasKilled = process.isRunning
        if wasKilled { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        reading.wait()
        let text = String(decoding: collected.withLock { $0 }, as: UTF8.self)
        // Only complete lines count: each was written whole, after `track` returned.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if !text.hasSuffix("\n") { lines.removeLast() }
        return (lines.compactMap { Int($0) }, wasKilled)
    }
}
