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
#endif

/// An aggregator's `shutdown(deadline:)` with an `HTTPTracker` (issue 49, point 3): what the
/// collector did not take by the deadline is on disk, the report says so, and the next run on
/// the same directory sends it.
final class HTTPTrackerQueuedDeliveryReportingTests: LoopbackTestCase {
    private func makeTracker(sendingTo base: URL, clock: TestClock = TestClock(runsImmediately: false)) throws
        -> HTTPTracker
    {
        // A tracker of an earlier run may still be going away (a reply in progress): its
        // directory lock goes with it.
        var made: HTTPTracker?
        let deadline = Date().addingTimeInterval(30)
        while made == nil {
            do {
                made = try HTTPTracker(
                    encoder: SegmentEncoder(writeKey: "k", baseURL: base), directory: directory,
                    configuration: testConfiguration(clock: clock, flushAt: 10))
            } catch {
                if Date() > deadline { throw error }
                usleep(10_000)
            }
        }
        return made!
    }

    func testAShutdownWhileTheCollectorAnswers503LeavesEverythingOnDiskAndTheNextRunSendsIt() async throws {
        // A collector of its own for the 503s: a request of the first run still on the wire
        // cannot be accepted by the second run's.
        let unavailable = LoopbackCollector()
        try unavailable.start()
        defer { unavailable.stop() }
        unavailable.setDefaultReply(LoopbackCollector.Reply(status: 503))
        try await {
            let tracker = try makeTracker(sendingTo: unavailable.baseURL)
            let center = NotificationCenter()
            let aggregator = EventAggregator(
                center: center, filter: .allowAll, destinations: [Destination(tracker, name: "collector")],
                configuration: .server)
            aggregator.start()
            for event in numbered(50) { event.post(to: center) }

            let report = await aggregator.shutdown(deadline: Date())
            XCTAssertEqual(report.forwarded, 50)
            XCTAssertEqual(report.delivered, 0)
            XCTAssertEqual(report.stillQueued, 50, "\(report)")
            XCTAssertEqual(report.destinations["collector"]?.whereQueued, directory.path)
            XCTAssertTrue(report.deadlinePassed)
            XCTAssertEqual(report.dropped, [], "a 503 drops nothing")
        }()

        let tracker = try makeTracker(sendingTo: collector.baseURL)
        let aggregator = EventAggregator(
            center: NotificationCenter(), filter: .allowAll, destinations: [Destination(tracker, name: "collector")],
            configuration: .server)
        aggregator.start()
        let report = await aggregator.shutdown(deadline: Date().addingTimeInterval(60))
        XCTAssertEqual(report.delivered, 50, "\(report)")
        XCTAssertEqual(report.stillQueued, 0)
        XCTAssertTrue(report.deliveredEverything)
        XCTAssertEqual(Set(receivedIndices(collector.requests)), Set(0..<50))
    }

    /// A collector that stalls (it takes requests and does not answer until released): the
    /// tracker keeps writing to its queue on disk, so posts go on, nothing is dropped in flight,
    /// and what memory holds stays under the bound; once it answers, the shutdown delivers all.
    func testAStalledCollectorLosesNothingAndTheShutdownDeliversEverythingOnceItAnswers() async throws {
        let stalled = DispatchSemaphore(value: 0)
        collector.respond { _ in
            stalled.wait()
            stalled.signal()
            return nil
        }
        let tracker = try makeTracker(sendingTo: collector.baseURL, clock: TestClock(runsImmediately: true))
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration.server
        configuration.maximumInFlightEvents = 100
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, destinations: [Destination(tracker, name: "collector")],
            configuration: configuration)
        aggregator.start()
        for event in numbered(2_000) { event.post(to: center) }
        aggregator.waitUntilDelivered()

        XCTAssertEqual(aggregator.diagnostics.droppedInFlight, 0)
        XCTAssertEqual(tracker.diagnostics.accepted, 2_000, "written to disk while the collector stalls")
        stalled.signal()
        let report = await aggregator.shutdown(deadline: Date().addingTimeInterval(120))
        XCTAssertEqual(report.delivered, 2_000, "\(report)")
        XCTAssertTrue(report.deliveredEverything)
        XCTAssertEqual(Set(receivedIndices(collector.requests)), Set(0..<2_000))
    }

    #if os(macOS) || os(Linux)
        /// A child process (`http-crash-child server-sigterm`) posts from a thread through an
        /// aggregator with the server configuration, as fast as it can, and gets SIGTERM after a
        /// random number of posts: its handler calls `shutdown(deadline:)` and prints the report.
        /// Every post that returned before the shutdown began is delivered or on disk (a tracker
        /// on the same directory then sends it), and the report's counts say which; the posts
        /// after it are refused and counted. Killed by the count of printed lines, not by time.
        func testSIGTERMMidRunLeavesEveryAcceptedPostDeliveredOrOnDiskAndTheReportSaysWhich() throws {
            let child = builtExecutable("http-crash-child")
            guard FileManager.default.isExecutableFile(atPath: child.path) else {
                throw XCTSkip(
                    "http-crash-child not found at \(child.path); run `swift build --build-tests` first (Xcode does not build it)"
                )
            }
            var generator = SystemRandomNumberGenerator()
            for run in 0..<3 {
                let runDirectory = makeTemporaryDirectory("sigterm\(run)")
                defer { try? FileManager.default.removeItem(at: runDirectory) }
                let first = run * 10_000_000
                let output = try runUntilSIGTERM(
                    child, directory: runDirectory, first: first,
                    afterLines: Int.random(in: 1_000...30_000, using: &generator))
                let reportLine = try XCTUnwrap(output.last { $0.hasPrefix("report ") }, "run \(run): no report")
                let numbers = reportLine.split(separator: " ").dropFirst().compactMap { Int($0) }
                XCTAssertEqual(numbers.count, 5)
                let (forwarded, delivered, stillQueued, dropped, refused) = (
                    numbers[0], numbers[1], numbers[2], numbers[3], numbers[4]
                )
                let posted = output.compactMap { Int($0) }
                XCTAssertEqual(posted, Array(first..<(first + posted.count)), "run \(run): printed in posting order")
                // One posting thread: the refused posts are the last ones it made.
                let accepted = posted.dropLast(refused)
                XCTAssertEqual(forwarded, accepted.count, "run \(run): every accepted post reached the tracker")
                XCTAssertEqual(dropped, 0, "run \(run)")
                XCTAssertEqual(delivered + stillQueued, accepted.count, "run \(run): delivered or on disk")

                let before = Set(receivedIndices(collector.requests))
                let restarted = try HTTPTracker(
                    encoder: SegmentEncoder(writeKey: "crash-test", baseURL: collector.baseURL),
                    directory: runDirectory, configuration: testConfiguration())
                try restarted.consentDidChange(to: .granted)
                XCTAssertTrue(restarted.waitUntilDelivered(timeout: 120), "run \(run): queue not drained")
                let received = Set(receivedIndices(collector.requests))
                XCTAssertTrue(accepted.allSatisfy(received.contains), "run \(run): an accepted post was lost")
                let sentNow = received.subtracting(before).filter { $0 >= first && $0 < first + posted.count }
                XCTAssertLessThanOrEqual(
                    sentNow.count, stillQueued, "run \(run): the next run sent what the report said was on disk")
                print(
                    "SIGTERM run \(run): \(posted.count) posted, \(accepted.count) accepted, \(delivered) delivered, "
                        + "\(stillQueued) on disk (\(sentNow.count) sent by the next run), \(refused) refused")
            }
        }

        /// Runs the child until it has printed `afterLines` lines, sends SIGTERM, and returns every
        /// complete line it printed.
        private func runUntilSIGTERM(_ child: URL, directory: URL, first: Int, afterLines: Int) throws -> [String] {
            let process = Process()
            process.executableURL = child
            process.arguments = [
                directory.path, collector.baseURL.absoluteString, String(first), "100000000", "server-sigterm",
            ]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            let collected = LockedValue((data: Data(), signalled: false))
            let reading = DispatchSemaphore(value: 0)
            let reader = output.fileHandleForReading
            try process.run()
            let pid = process.processIdentifier
            DispatchQueue.global().async {
                var lines = 0
                while true {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    lines += chunk.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
                    let signalNow = collected.withLock { state -> Bool in
                        state.data.append(chunk)
                        guard !state.signalled, lines >= afterLines else { return false }
                        state.signalled = true
                        return true
                    }
                    if signalNow { kill(pid, SIGTERM) }
                }
                reading.signal()
            }
            process.waitUntilExit()
            reading.wait()
            let text = String(decoding: collected.withLock { $0.data }, as: UTF8.self)
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if !text.hasSuffix("\n") { lines.removeLast() }
            return lines
        }
    #endif
}
