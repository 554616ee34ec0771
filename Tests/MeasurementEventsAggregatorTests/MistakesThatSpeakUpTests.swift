import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The mistakes a newcomer makes are reported, once, instead of failing in silence.
final class MistakesThatSpeakUpTests: XCTestCase {
    private func aggregator(
        on center: NotificationCenter, problems: LockedValue<[String]>
    ) -> EventAggregator {
        var configuration = EventAggregator.Configuration.testing
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        return EventAggregator(
            center: center, filter: .allowAll, trackers: [RecordingTracker()], configuration: configuration)
    }

    func testWaitingOnAnAggregatorNeverStartedAfterPostsSaysToCallStartOnce() {
        let center = NotificationCenter()
        let problems = LockedValue<[String]>([])
        let aggregator = aggregator(on: center, problems: problems)
        MeasurementEvent.post("feed/opened", to: center)
        MeasurementEvent.post("feed/closed", to: center)
        aggregator.waitUntilDelivered()
        aggregator.flush()
        _ = aggregator.diagnostics
        XCTAssertEqual(
            problems.withLock { $0 },
            [
                "an event was posted but no aggregator has been started on this center; call start() (2 posted so far, none received)"
            ])
    }

    func testReadingTheDiagnosticsOfAnAggregatorNeverStartedSaysSo() {
        let center = NotificationCenter()
        let problems = LockedValue<[String]>([])
        let aggregator = aggregator(on: center, problems: problems)
        MeasurementEvent.post("feed/opened", to: center)
        XCTAssertEqual(aggregator.diagnostics.received, 0)
        XCTAssertEqual(problems.withLock { $0 }.count, 1)
    }

    func testAStartedAggregatorReportsNothing() {
        let center = NotificationCenter()
        let problems = LockedValue<[String]>([])
        let aggregator = aggregator(on: center, problems: problems)
        MeasurementEvent.post("feed/opened", to: center)  // before start: a usual launch order
        aggregator.start()
        MeasurementEvent.post("feed/closed", to: center)
        aggregator.flush()
        XCTAssertEqual(problems.withLock { $0 }, [])
    }

    func testWithoutPostsWaitingReportsNothing() {
        let problems = LockedValue<[String]>([])
        aggregator(on: NotificationCenter(), problems: problems).waitUntilDelivered()
        XCTAssertEqual(problems.withLock { $0 }, [])
    }

    func testAnAggregatorNotStartedBesideAStartedOneIsNamedAsSuch() {
        let center = NotificationCenter()
        let problems = LockedValue<[String]>([])
        let started = aggregator(on: center, problems: LockedValue<[String]>([]))
        started.start()
        let forgotten = aggregator(on: center, problems: problems)
        MeasurementEvent.post("feed/opened", to: center)
        forgotten.waitUntilDelivered()
        XCTAssertEqual(
            problems.withLock { $0 },
            [
                "an event was posted on this aggregator's center but it was never started (another aggregator on that center was); call start() on it"
            ])
    }

    func testTheDefaultProblemHandlerWritesToStandardErrorInDebugBuildsOnly() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(UUID().uuidString)")
        XCTAssertTrue(FileManager.default.createFile(atPath: output.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: output) }
        let file = try FileHandle(forWritingTo: output)
        let saved = dup(STDERR_FILENO)
        dup2(file.fileDescriptor, STDERR_FILENO)
        let center = NotificationCenter()
        let aggregator = EventAggregator(center: center, filter: .allowAll, configuration: .testing)
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.waitUntilDelivered()
        dup2(saved, STDERR_FILENO)
        close(saved)
        try file.close()
        let written = try String(contentsOf: output, encoding: .utf8)
        #if DEBUG
            XCTAssertEqual(
                written,
                "[MeasurementEvents] an event was posted but no aggregator has been started on this center; call start() (1 posted so far, none received)\n"
            )
        #else
            XCTAssertEqual(written, "")
        #endif
    }
}
