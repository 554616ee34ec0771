import Foundation

/// Decides when an ``HTTPTracker`` uploads on its own, besides ``HTTPTracker/flush()``, which
/// always uploads. Policies combine: the tracker uploads as soon as any of
/// `HTTPTracker.Configuration.flushPolicies` says so.
///
/// ```swift
/// var configuration = HTTPTracker.Configuration()
/// configuration.flushPolicies = [CountFlushPolicy(count: 50), BackgroundFlushPolicy()]
/// ```
///
/// Four ship: ``CountFlushPolicy``, ``IntervalFlushPolicy``, ``BackgroundFlushPolicy`` and
/// ``ManualFlushPolicy`` ("never until asked"). Every requirement has a default that never
/// uploads, so a policy of its own states only what it decides.
public protocol FlushPolicy: Sendable {
    /// Whether to upload now that `queuedEvents` events wait (asked after each event is queued).
    ///
    /// - Parameter queuedEvents: the events on disk, waiting to be sent.
    /// - Returns: `true` to upload everything queued now.
    func shouldFlush(queuedEvents: Int) -> Bool
    /// Upload this many seconds after an event is queued, at the latest; `nil` for no timer.
    /// The timer runs only while events wait.
    var interval: TimeInterval? { get }
    /// Whether ``HTTPTracker/didEnterBackground()`` uploads (it always forces the queue to storage).
    var flushesOnBackground: Bool { get }
}

extension FlushPolicy {
    /// Never: counts decide nothing.
    ///
    /// - Parameter queuedEvents: the events waiting.
    /// - Returns: `false`.
    public func shouldFlush(queuedEvents: Int) -> Bool { false }
    /// No timer.
    public var interval: TimeInterval? { nil }
    /// Going to the background does not upload.
    public var flushesOnBackground: Bool { false }
}

/// Uploads once `count` events wait (Segment's mobile libraries: 20).
public struct CountFlushPolicy: FlushPolicy {
    /// The number of waiting events that starts an upload; at least 1.
    public let count: Int

    /// Uploads once `count` events wait.
    ///
    /// - Parameter count: the number of waiting events that starts an upload; at least 1.
    public init(count: Int) { self.count = max(1, count) }

    /// Whether `queuedEvents` reached ``count``.
    ///
    /// - Parameter queuedEvents: the events waiting.
    /// - Returns: `queuedEvents >= count`.
    public func shouldFlush(queuedEvents: Int) -> Bool { queuedEvents >= count }
}

/// Uploads at most `seconds` after an event is queued (Segment's mobile libraries: 30 s). No
/// timer runs while nothing waits.
public struct IntervalFlushPolicy: FlushPolicy {
    /// The longest an event waits before an upload starts, in seconds.
    public let seconds: TimeInterval

    /// Uploads at most `seconds` after an event is queued.
    ///
    /// - Parameter seconds: the longest wait, in seconds; not finite or not positive means no timer.
    public init(seconds: TimeInterval) { self.seconds = seconds }

    /// ``seconds``, when finite and positive.
    public var interval: TimeInterval? { seconds.isFinite && seconds > 0 ? seconds : nil }
}

/// Uploads when the app goes to the background (``HTTPTracker/didEnterBackground()``).
public struct BackgroundFlushPolicy: FlushPolicy {
    /// Uploads when the app goes to the background.
    public init() {}

    /// `true`.
    public var flushesOnBackground: Bool { true }
}

/// Never uploads on its own: only ``HTTPTracker/flush()`` does ("never until asked"). Alone in
/// `flushPolicies`, events wait on disk until the app asks.
public struct ManualFlushPolicy: FlushPolicy {
    /// Never uploads on its own.
    public init() {}
}

/// Several policies as one: any of them starts an upload; the shortest interval wins.
struct CombinedFlushPolicy: FlushPolicy {
    let policies: [any FlushPolicy]

    func shouldFlush(queuedEvents: Int) -> Bool { policies.contains { $0.shouldFlush(queuedEvents: queuedEvents) } }
    /// The shortest finite, positive interval; without the arrays of `compactMap` and `filter`:
    /// the tracker asks at every event.
    var interval: TimeInterval? {
        var shortest: TimeInterval?
        for policy in policies {
            guard let seconds = policy.interval, seconds.isFinite, seconds > 0 else { continue }
            if shortest.map({ seconds < $0 }) ?? true { shortest = seconds }
        }
        return shortest
    }
    var flushesOnBackground: Bool { policies.contains(where: \.flushesOnBackground) }
}
