import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// A clock for tests: a fixed, advanceable `now`; scheduled work either runs at once (on
/// another thread, its delay recorded) or waits for ``advance(by:)``.
final class TestClock: DeliveryClock, @unchecked Sendable {
    // @unchecked: all state is behind `lock`.
    private let lock = NSLock()
    private var current: Date
    private var pending: [(deadline: Date, work: @Sendable () -> Void, cancelled: Cancelled)] = []
    private var delays: [TimeInterval] = []
    let runsImmediately: Bool

    final class Cancelled: ScheduledWork, @unchecked Sendable {
        // @unchecked: `flag` is only read and written under the clock's lock.
        var flag = false
        let lock: NSLock
        init(lock: NSLock) { self.lock = lock }
        func cancel() { lock.lock(); flag = true; lock.unlock() }
    }

    init(now: Date = Date(timeIntervalSince1970: 1_714_566_600), runsImmediately: Bool) {
        current = now
        self.runsImmediately = runsImmediately
    }

    func now() -> Date { lock.lock(); defer { lock.unlock() }; return current }

    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let handle = Cancelled(lock: lock)
        lock.lock()
        delays.append(delay)
        if !runsImmediately { pending.append((current.addingTimeInterval(delay), work, handle)) }
        lock.unlock()
        if runsImmediately {
            DispatchQueue.global().async {
                self.lock.lock()
                let cancelled = handle.flag
                self.lock.unlock()
                if !cancelled { work() }
            }
        }
        return handle
    }

    /// Delays asked for so far.
    var scheduledDelays: [TimeInterval] { lock.lock(); defer { lock.unlock() }; return delays }

    /// Moves time on to the earliest pending deadline and runs what became due; returns the
    /// seconds moved, or `nil` when nothing is pending.
    @discardableResult
    func advanceToNextDeadline() -> TimeInterval? {
        lock.lock()
        let next = pending.filter { !$0.cancelled.flag }.map(\.deadline).min()
        let seconds = next.map { max(0, $0.timeIntervalSince(current)) }
        lock.unlock()
        guard let seconds else { return nil }
        advance(by: seconds)
        return seconds
    }

    /// Moves time on and runs what became due.
    func advance(by seconds: TimeInterval) {
        lock.lock()
        current = current.addingTimeInterval(seconds)
        let due = pending.filter { $0.deadline <= current && !$0.cancelled.flag }
        pending.removeAll { $0.deadline <= current }
        lock.unlock()
        for item in due { item.work() }
    }
}

/// The same clock gives an aggregator its event times (`EventAggregator.Configuration.clock`).
extension TestClock: EventClock {}

/// A test case with a loopback collector running and a fresh directory, both gone afterwards.
class LoopbackTestCase: XCTestCase {
    var collector: LoopbackCollector!
    var directory: URL!

    override func setUpWithError() throws {
        collector = LoopbackCollector()
        try collector.start()
        directory = makeTemporaryDirectory(name)
    }

    override func tearDown() {
        collector.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A fresh directory under the system's temporary folder.
func makeTemporaryDirectory(_ name: String = #function) -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("MeasurementEventsHTTPTests-\(name.filter { $0.isLetter })-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Files in the tracker's queue directory.
func queueFiles(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("queue").path)) ?? [])
        .sorted()
}

/// A tracker configuration for tests: no timer, immediate retries, quiet log.
func testConfiguration(clock: TestClock = TestClock(runsImmediately: true), flushAt: Int = 20)
    -> HTTPTracker.Configuration
{
    var configuration = HTTPTracker.Configuration()
    configuration.clock = clock
    configuration.flushAt = flushAt
    configuration.flushInterval = nil
    configuration.requestTimeout = 5
    configuration.retryPolicy = RetryPolicy(random: { 0 })
    configuration.logHandler = { _ in }
    return configuration
}

/// The Segment calls in every request the collector received.
func segmentCalls(_ requests: [LoopbackCollector.Request]) -> [[String: Any]] {
    requests.flatMap { request -> [[String: Any]] in
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let batch = object["batch"] as? [[String: Any]]
        else { return [] }
        return batch
    }
}

/// The `index` property of each Segment call received, in order (repeats included).
func receivedIndices(_ requests: [LoopbackCollector.Request]) -> [Int] {
    segmentCalls(requests).compactMap { ($0["properties"] as? [String: Any])?["index"] as? Int }
}

func numbered(_ count: Int, from first: Int = 0) -> [MeasurementEvent] {
    (first..<(first + count)).map { MeasurementEvent("test/numbered", args: ["index": .int($0)]) }
}

/// An executable of this package's build (a test's child process), beside the test bundle on
/// Apple platforms and beside the test runner elsewhere.
func builtExecutable(_ name: String) -> URL {
    #if canImport(Darwin)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent().appendingPathComponent(name)
        }
    #endif
    return Bundle.main.bundleURL.appendingPathComponent(name)
}
