import Foundation
import ImpressionTracking
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// Commit, push, batching, failures and the cycle.
final class ImpressionEngineTests: XCTestCase {
    private func show(
        _ ids: Range<Int>, on engine: ImpressionEngine<Int>, from start: TimeInterval, for seconds: TimeInterval
    ) {
        for id in ids { engine.appeared(id, at: start) }
        for id in ids { engine.disappeared(id, at: start + seconds) }
    }

    func testFinishedImpressionsWaitForTheCommit() throws {
        let harness = try EngineUnderTest()
        show(0..<3, on: harness.engine, from: 0, for: 2)
        harness.engine.push()
        XCTAssertTrue(harness.pushed.isEmpty)
        XCTAssertEqual(harness.engine.commit(at: 2), 3)
        XCTAssertEqual(harness.engine.diagnostics.waitingInStore, 3)
        XCTAssertEqual(harness.engine.push(), 3)
        XCTAssertEqual(harness.pushed.map(\.itemID), [0, 1, 2])
        XCTAssertEqual(harness.engine.diagnostics.waitingInStore, 0)
    }

    func testPushSendsInBatchesOfTheConfiguredSize() throws {
        let harness = try EngineUnderTest { $0.batchSize = 50 }
        show(0..<120, on: harness.engine, from: 0, for: 2)
        harness.engine.runCycle(at: 2)
        XCTAssertEqual(harness.service.batches.map(\.count), [50, 50, 20])
        XCTAssertEqual(harness.pushed.map(\.itemID), Array(0..<120))
        XCTAssertEqual(harness.engine.diagnostics.batchesSent, 3)
    }

    func testFailedSendIsRetriedAtTheNextPushWithoutDuplicates() throws {
        let problems = LockedValue<[String]>([])
        let harness = try EngineUnderTest {
            $0.batchSize = 10
            $0.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        }
        show(0..<25, on: harness.engine, from: 0, for: 2)
        harness.engine.commit(at: 2)
        XCTAssertEqual(harness.engine.push(), 25)
        harness.engine.appeared(99, at: 3)
        harness.engine.disappeared(99, at: 5)
        harness.engine.commit(at: 5)
        harness.service.failNextSends(1)
        XCTAssertEqual(harness.engine.push(), 0)
        XCTAssertEqual(harness.engine.diagnostics.waitingInStore, 1)
        XCTAssertEqual(harness.engine.push(), 1)
        XCTAssertEqual(harness.pushed.map(\.itemID), Array(0..<25) + [99])
        XCTAssertEqual(harness.engine.diagnostics.sendFailures, 1)
        XCTAssertEqual(
            problems.withLock { $0 },
            ["sending 1 impressions failed, they will be retried at the next push: Unavailable()"])
    }

    func testSendFailureMidwayKeepsTheUnsentBatchesInOrder() throws {
        let service = FailingOnSecondBatchService()
        let clock = ManualImpressionClock()
        var configuration = ImpressionConfiguration()
        configuration.batchSize = 10
        let engine = try ImpressionEngine<Int>(
            configuration: configuration, encoder: PassThroughEncoder<Int>(), service: service, clock: clock,
            scheduler: ManualCycleScheduler())
        show(0..<25, on: engine, from: 0, for: 2)
        engine.commit(at: 2)
        XCTAssertEqual(engine.push(), 10)
        XCTAssertEqual(engine.diagnostics.waitingInStore, 15)
        XCTAssertEqual(engine.push(), 15)
        XCTAssertEqual(service.sent.withLock { $0 }, Array(0..<25))
    }

    func testEncodingFailureDropsTheBatchAndCountsIt() throws {
        let problems = LockedValue<[String]>([])
        var configuration = ImpressionConfiguration()
        configuration.batchSize = 2
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        let service = RecordingService<Int>()
        let engine = try ImpressionEngine<Int>(
            configuration: configuration, encoder: RejectingItemOneEncoder(), service: service,
            clock: ManualImpressionClock(), scheduler: ManualCycleScheduler())
        show(0..<4, on: engine, from: 0, for: 2)
        engine.runCycle(at: 2)
        XCTAssertEqual(service.impressions.map(\.itemID), [2, 3])
        XCTAssertEqual(engine.diagnostics.droppedOnEncodingFailure, 2)
        XCTAssertEqual(
            problems.withLock { $0 }, ["encoding 2 impressions failed, they were dropped: item 1 cannot be encoded"])
    }

    func testFullStoreDropsTheOldestAndCountsThem() throws {
        let problems = LockedValue<[String]>([])
        let harness = try EngineUnderTest {
            $0.storeLimit = 5
            $0.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        }
        show(0..<8, on: harness.engine, from: 0, for: 2)
        harness.engine.runCycle(at: 2)
        XCTAssertEqual(harness.pushed.map(\.itemID), [3, 4, 5, 6, 7])
        XCTAssertEqual(harness.engine.diagnostics.droppedOnOverflow, 3)
        XCTAssertEqual(
            problems.withLock { $0 }, ["the impression store was full; the 3 oldest impressions were dropped"])
    }

    func testEnteringBackgroundCommitsAndPushes() throws {
        let harness = try EngineUnderTest()
        harness.engine.appeared(1, at: 0)
        harness.engine.enteredBackground(at: 4)
        XCTAssertEqual(harness.pushed.map(\.itemID), [1])
        XCTAssertEqual(harness.pushed.first?.end, 4)
    }

    func testEnteringBackgroundCanLeavePushingToTheCycle() throws {
        let harness = try EngineUnderTest { $0.pushesOnBackground = false }
        harness.engine.appeared(1, at: 0)
        harness.engine.enteredBackground(at: 4)
        XCTAssertTrue(harness.pushed.isEmpty)
        harness.engine.runCycle(at: 5)
        XCTAssertEqual(harness.pushed.map(\.itemID), [1])
    }

    func testCycleRunsEveryIntervalOnTheScheduler() throws {
        let harness = try EngineUnderTest { $0.commitInterval = 3 }
        harness.engine.startCycle()
        harness.engine.startCycle()
        XCTAssertEqual(harness.scheduler.scheduledIntervals, [3])
        XCTAssertTrue(harness.engine.isCycleRunning)

        harness.engine.appeared(1)
        harness.clock.advance(by: 3)
        harness.scheduler.tick()
        XCTAssertEqual(harness.pushed.map(\.itemID), [1])
        XCTAssertEqual(harness.pushed.first?.visibleDuration, 3)

        harness.engine.stopCycle()
        XCTAssertEqual(harness.scheduler.scheduledIntervals, [])
        harness.engine.appeared(2)
        harness.clock.advance(by: 3)
        harness.scheduler.tick()
        XCTAssertEqual(harness.pushed.map(\.itemID), [1])
    }

    /// The scheduler is app code: it is called outside the engine's lock, so it may ask the
    /// engine about its cycle (under the lock this deadlocked, or aborted with os_unfair_lock).
    func testASchedulerMayCallBackIntoTheEngine() throws {
        let scheduler = CallingBackScheduler()
        let engine = try ImpressionEngine<Int>(scheduler: scheduler)
        scheduler.engine = engine
        engine.startCycle()
        XCTAssertEqual(scheduler.sawRunning.withLock { $0 }, [false])
        XCTAssertTrue(engine.isCycleRunning)
        XCTAssertEqual(scheduler.inner.scheduledIntervals.count, 1)
    }

    func testReleasedEngineStopsItsCycle() throws {
        let scheduler = ManualCycleScheduler()
        var engine: ImpressionEngine<Int>? = try ImpressionEngine<Int>(scheduler: scheduler)
        engine?.startCycle()
        XCTAssertEqual(scheduler.scheduledIntervals.count, 1)
        engine = nil
        XCTAssertEqual(scheduler.scheduledIntervals.count, 0)
    }
}

/// A manual scheduler that asks the engine whether its cycle runs while it schedules.
private final class CallingBackScheduler: ImpressionCycleScheduler, @unchecked Sendable {
    // @unchecked: `engine` is set once, before the engine starts its cycle.
    weak var engine: ImpressionEngine<Int>?
    let inner = ManualCycleScheduler()
    let sawRunning = LockedValue<[Bool]>([])

    func scheduleRepeating(every interval: TimeInterval, _ tick: @escaping @Sendable () -> Void) -> ScheduledCycle {
        if let engine { sawRunning.withLock { $0.append(engine.isCycleRunning) } }
        return inner.scheduleRepeating(every: interval, tick)
    }
}

/// Refuses any batch holding item 1.
private struct RejectingItemOneEncoder: ImpressionEncoder {
    struct ItemOne: Error, CustomStringConvertible {
        var description: String { "item 1 cannot be encoded" }
    }

    func encode(_ batch: [Impression<Int>], clock: any ImpressionClock) throws -> [Impression<Int>] {
        if batch.contains(where: { $0.itemID == 1 }) { throw ItemOne() }
        return batch
    }
}

private final class FailingOnSecondBatchService: ImpressionTrackingService {
    let sent = LockedValue<[Int]>([])
    private let calls = LockedValue(0)

    func send(_ payload: [Impression<Int>]) throws {
        if calls.withLock({
            $0 += 1; return $0
        }) == 2 {
            throw RecordingService<Int>.Unavailable()
        }
        sent.withLock { $0.append(contentsOf: payload.map(\.itemID)) }
    }
}
