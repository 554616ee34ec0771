import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import XCTest

@testable import MeasurementEventsLifecycle

/// The background flush inside a task the app supplies as two closures: begun once per move to
/// the background, ended once, when the flush is done or the time runs out; never leaked.
final class BackgroundTaskTests: XCTestCase {
    /// The app's two calls, recorded.
    private final class RecordedTasks: @unchecked Sendable {
        // @unchecked: every property is behind its lock.
        let begun = LockedValue<[Int]>([])
        let ended = LockedValue<[Int]>([])
        let expirations = LockedValue<[@Sendable () -> Void]>([])
        let expiresAtOnce: Bool

        init(expiresAtOnce: Bool = false) { self.expiresAtOnce = expiresAtOnce }

        var task: BackgroundTask {
            BackgroundTask(
                begin: { expired in
                    let id = self.begun.withLock { begun -> Int in
                        begun.append(begun.count + 100)
                        return begun.count + 99
                    }
                    self.expirations.withLock { $0.append(expired) }
                    if self.expiresAtOnce { expired() }  // before `begin` even returned
                    return id
                },
                end: { id in self.ended.withLock { $0.append(id) } })
        }

        func waitForEnds(_ count: Int) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while ended.withLock({ $0.count }) < count && Date() < deadline { usleep(1_000) }
            return ended.withLock { $0.count } >= count
        }
    }

    private func observe(
        _ tasks: RecordedTasks, work: (@Sendable () -> Void)? = nil, center: NotificationCenter = NotificationCenter(),
        trackers: [any EventTracker] = []
    ) -> (AppLifecycleObserver, EventAggregator) {
        let aggregator = EventAggregator(center: center, filter: .allowAll, trackers: trackers, configuration: .testing)
        aggregator.start()
        let observer = AppLifecycleObserver.start(
            aggregator: aggregator, center: center, bundleInfo: ["CFBundleShortVersionString": "1.0"],
            backgroundTask: tasks.task, backgroundWork: work)
        observer.handle(.didBecomeActive)
        return (observer, aggregator)
    }

    func testTheBackgroundFlushRunsInATaskEndedWhenTheFlushIsDone() throws {
        let tasks = RecordedTasks()
        let workDone = LockedValue(false)
        let (observer, _) = observe(tasks) {
            usleep(20_000)
            workDone.withLock { $0 = true }
        }
        defer { observer.stop() }
        observer.handle(.didEnterBackground)
        XCTAssertEqual(tasks.begun.withLock { $0 }, [100], "begun at once, on the posting thread")
        XCTAssertTrue(tasks.waitForEnds(1))
        XCTAssertTrue(workDone.withLock { $0 }, "ended after the work")
        XCTAssertEqual(tasks.ended.withLock { $0 }, [100])
    }

    func testATaskThatExpiresIsEndedOnceAndNotAgainWhenTheWorkEnds() throws {
        let tasks = RecordedTasks(expiresAtOnce: true)
        let release = DispatchSemaphore(value: 0)
        let (observer, _) = observe(tasks) { release.wait() }
        defer { observer.stop() }
        observer.handle(.didEnterBackground)
        XCTAssertTrue(tasks.waitForEnds(1))
        XCTAssertEqual(tasks.ended.withLock { $0 }, [100], "ended by the expiration, the work still running")
        tasks.expirations.withLock { $0 }.forEach { $0() }  // a second expiration call
        XCTAssertEqual(tasks.ended.withLock { $0 }, [100], "never twice")
        release.signal()
    }

    func testEveryMoveToTheBackgroundBeginsAndEndsItsOwnTask() throws {
        let tasks = RecordedTasks()
        let (observer, _) = observe(tasks)
        defer { observer.stop() }
        for _ in 0..<200 {
            observer.handle(.didEnterBackground)
            observer.handle(.willEnterForeground)
        }
        XCTAssertTrue(tasks.waitForEnds(200))
        XCTAssertEqual(tasks.begun.withLock { $0 }.sorted(), tasks.ended.withLock { $0 }.sorted(), "none leaked")
    }

    func testEndingBeforeTheIdentifierIsKnownWaitsForIt() {
        let ended = LockedValue<[Int]>([])
        let ending = BackgroundTaskEnding(end: { id in ended.withLock { $0.append(id) } })
        ending.finish()
        XCTAssertEqual(ended.withLock { $0 }, [])
        ending.started(7)
        XCTAssertEqual(ended.withLock { $0 }, [7], "ended as soon as it is known")
        ending.finish()
        XCTAssertEqual(ended.withLock { $0 }, [7], "and only once")
    }

    func testTheTaskLastsUntilTheHTTPTrackerUploaded() throws {
        let collector = LoopbackCollector()
        try collector.start()
        defer { collector.stop() }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("BackgroundTaskTests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = HTTPTracker.Configuration()
        configuration.flushPolicies = [ManualFlushPolicy()]
        configuration.logHandler = { _ in }
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), directory: directory,
            configuration: configuration)
        let tasks = RecordedTasks()
        let center = NotificationCenter()
        let whenWorkEnded = LockedValue<(requests: Int, queued: Int)?>(nil)
        let (observer, aggregator) = observe(
            tasks,
            work: { [collector] in
                _ = tracker.waitUntilDelivered(timeout: 20)
                whenWorkEnded.withLock { $0 = (collector.requests.count, tracker.diagnostics.queued) }
            }, center: center, trackers: [tracker])
        defer { observer.stop() }
        MeasurementEvent.post("checkout/paid", to: center)
        aggregator.waitUntilDelivered()
        observer.handle(.didEnterBackground)
        XCTAssertTrue(tasks.waitForEnds(1))
        let atEnd = try XCTUnwrap(whenWorkEnded.withLock { $0 })
        XCTAssertGreaterThanOrEqual(atEnd.requests, 1, "uploaded before the task ended")
        XCTAssertEqual(atEnd.queued, 0, "nothing left queued when the task ended")
        XCTAssertTrue(collector.requests.contains { $0.bodyText.contains("checkout/paid") })
    }
}
