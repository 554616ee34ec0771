import Dispatch
import Foundation

/// Time as the tracker sees it: the current date (for `sentAt`) and delayed work (flush
/// timers, retry backoff). Tests pass their own clock so that nothing waits real seconds.
///
/// ```swift
/// var configuration = HTTPTracker.Configuration()
/// configuration.clock = SystemDeliveryClock()   // the default
/// ```
public protocol DeliveryClock: Sendable {
    /// The current date.
    func now() -> Date
    /// Runs `work` once, `delay` seconds from now, on any thread. The returned handle cancels it.
    ///
    /// - Parameters:
    ///   - delay: seconds from now; a negative delay runs `work` at once.
    ///   - work: what to run.
    /// - Returns: a handle that cancels the work.
    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork
}

/// Something scheduled on a ``DeliveryClock``.
public protocol ScheduledWork: Sendable {
    /// Cancels the work if it has not started.
    func cancel()
}

/// The real clock: `Date()` and `DispatchQueue.asyncAfter`.
public struct SystemDeliveryClock: DeliveryClock {
    /// The real clock.
    public init() {}

    /// The current date, `Date()`.
    public func now() -> Date { Date() }

    /// Runs `work` on a global queue `delay` seconds from now.
    ///
    /// - Parameters:
    ///   - delay: seconds from now; a negative delay runs `work` at once.
    ///   - work: what to run.
    /// - Returns: a handle that cancels the work.
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let item = DispatchWorkItem(block: work)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + max(0, delay), execute: item)
        return DispatchScheduledWork(item: item)
    }

    private struct DispatchScheduledWork: ScheduledWork, @unchecked Sendable {
        // @unchecked: DispatchWorkItem is thread-safe; it is not marked Sendable on Linux.
        let item: DispatchWorkItem
        func cancel() { item.cancel() }
    }
}
