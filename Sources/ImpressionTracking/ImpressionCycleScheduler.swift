import Dispatch
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Runs the engine's commit-and-push cycle repeatedly.
///
/// ``DispatchCycleScheduler`` uses a timer; ``ManualCycleScheduler`` runs the cycle only when
/// a test or a simulation calls ``ManualCycleScheduler/tick()``.
public protocol ImpressionCycleScheduler: Sendable {
    /// Calls `tick` every `interval` seconds until the returned token is cancelled.
    ///
    /// - Parameters:
    ///   - interval: seconds between two ticks.
    ///   - tick: the engine's commit-and-push cycle.
    /// - Returns: the running schedule, to cancel.
    func scheduleRepeating(every interval: TimeInterval, _ tick: @escaping @Sendable () -> Void) -> ScheduledCycle
}

/// A running schedule; ``cancel()`` stops it (calling it again does nothing).
public struct ScheduledCycle: Sendable {
    private let onCancel: @Sendable () -> Void

    /// Makes a schedule that runs `onCancel` when cancelled; for custom schedulers.
    ///
    /// - Parameter onCancel: stops the schedule; may be called more than once.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    /// Stops the schedule.
    public func cancel() { onCancel() }
}

/// Ticks from a `DispatchSourceTimer` on a serial queue, so cycles never overlap.
public struct DispatchCycleScheduler: ImpressionCycleScheduler {
    private let queue: DispatchQueue

    /// Makes a scheduler whose ticks run on `queue`.
    ///
    /// - Parameter queue: a serial queue; by default a utility queue of its own.
    public init(queue: DispatchQueue = DispatchQueue(label: "ImpressionTracking.cycle", qos: .utility)) {
        self.queue = queue
    }

    public func scheduleRepeating(every interval: TimeInterval, _ tick: @escaping @Sendable () -> Void)
        -> ScheduledCycle
    {
        let timer = TimerBox(DispatchSource.makeTimerSource(queue: queue))
        let (period, leeway) = Self.period(of: interval)
        timer.source.schedule(deadline: .now() + period, repeating: period, leeway: leeway)
        timer.source.setEventHandler(handler: tick)
        timer.source.resume()
        return ScheduledCycle { timer.source.cancel() }
    }

    /// The timer's period, in the finest unit whose count fits in `Int` (5 s in nanoseconds
    /// overflows a 32-bit Int, as on Apple Watch), and a tenth of it as leeway, which lets the
    /// system batch wake-ups. The interval is clamped to between 1 ms and one day; NaN reads
    /// as one day.
    static func period(
        of interval: TimeInterval, limit: IntRange = .native
    ) -> (period: DispatchTimeInterval, leeway: DispatchTimeInterval) {
        let seconds = interval.isNaN ? 86_400 : min(max(interval, 0.001), 86_400)
        if let count = checkedInt((seconds * 1e9).rounded(), limit: limit) {
            return (.nanoseconds(count), .nanoseconds(count / 10))
        }
        if let count = checkedInt((seconds * 1e6).rounded(), limit: limit) {
            return (.microseconds(count), .microseconds(count / 10))
        }
        // At most 86_400_000, which fits in any Int.
        let count = checkedInt((seconds * 1e3).rounded(), limit: limit) ?? 86_400_000
        return (.milliseconds(count), .milliseconds(count / 10))
    }

    private final class TimerBox: @unchecked Sendable {
        // @unchecked: DispatchSource is thread-safe; the box only carries it across the closure.
        let source: any DispatchSourceTimer
        init(_ source: any DispatchSourceTimer) { self.source = source }
    }
}

/// Ticks only when told to: for tests and simulations.
///
/// ```swift
/// let scheduler = ManualCycleScheduler()
/// let engine = try ImpressionEngine<Int>(clock: clock, scheduler: scheduler)
/// engine.startCycle()
/// clock.advance(by: 5)
/// scheduler.tick()          // one commit-and-push, on this thread
/// ```
public final class ManualCycleScheduler: ImpressionCycleScheduler {
    private struct State {
        var nextID = 0
        var ticks: [Int: @Sendable () -> Void] = [:]
        var intervals: [Int: TimeInterval] = [:]
    }

    private let state = LockedValue(State())

    /// Makes a scheduler with no schedule.
    public init() {}

    public func scheduleRepeating(every interval: TimeInterval, _ tick: @escaping @Sendable () -> Void)
        -> ScheduledCycle
    {
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            state.ticks[state.nextID] = tick
            state.intervals[state.nextID] = interval
            return state.nextID
        }
        return ScheduledCycle { [weak self] in
            self?.state.withLock { state in
                state.ticks[id] = nil
                state.intervals[id] = nil
            }
        }
    }

    /// The intervals of the schedules not cancelled yet.
    public var scheduledIntervals: [TimeInterval] {
        state.withLock { state in state.intervals.sorted { $0.key < $1.key }.map(\.value) }
    }

    /// Runs every active schedule once, on the calling thread.
    public func tick() {
        let ticks = state.withLock { state in state.ticks.sorted { $0.key < $1.key }.map(\.value) }
        for tick in ticks { tick() }
    }
}
