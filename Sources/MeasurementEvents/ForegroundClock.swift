import Foundation

/// The time the app spent in the foreground, as the aggregator knows it from its lifecycle
/// moves (`applicationDidEnterBackground()`, `applicationWillEnterForeground()`), in posting
/// order with the events: what a tracker turns into "foreground time since the previous event"
/// (GA4's `engagement_time_msec`).
///
/// A pure value, driven by the times it is given. It runs from the aggregator's start (taken to
/// be in the foreground, as its sessions are) and starts again, under a new ``epoch``, when the
/// user changes (a reset, `forgetUser()`): a new user's time is its own.
///
/// Events carry the clock as their attribution's storage holds it (it changes only at a
/// lifecycle move, so stamping an event still costs one retain); the reading of an event is
/// ``reading(at:)`` of its own timestamp.
package struct ForegroundClock: Sendable, Hashable {
    /// One run of the clock: readings of different epochs are not compared.
    package private(set) var epoch: UInt64
    /// The foreground time before ``foregroundSince``.
    package private(set) var accumulated: TimeInterval = 0
    /// When the app last came to the foreground; `nil` while it is in the background.
    package private(set) var foregroundSince: Date?

    /// A clock that starts at `date`, in the foreground.
    package init(startingAt date: Date) {
        epoch = UInt64.random(in: 0...UInt64.max)
        foregroundSince = date
    }

    /// The clock's value for an event posted at `date`.
    package struct Reading: Sendable, Hashable {
        /// The run of the clock it was read from.
        package var epoch: UInt64
        /// Foreground time from the clock's start to the event, in seconds.
        package var foregroundTime: TimeInterval

        package init(epoch: UInt64, foregroundTime: TimeInterval) {
            self.epoch = epoch
            self.foregroundTime = foregroundTime
        }

        /// Foreground time from `previous` (an earlier event's reading) to this one, in whole
        /// milliseconds; from the clock's start when `previous` is `nil` or of another run of
        /// the clock. Never negative; at most `UInt32.max` (49 days).
        package func milliseconds(since previous: Reading?) -> Int64 {
            let start = previous.flatMap { $0.epoch == epoch ? $0.foregroundTime : nil } ?? 0
            let seconds = foregroundTime - start
            guard seconds > 0 else { return 0 }  // also NaN
            return Int64(min(seconds * 1000, Double(UInt32.max)).rounded())
        }
    }

    /// The reading of an event posted at `date` (in posting order with the lifecycle moves).
    package func reading(at date: Date) -> Reading {
        var time = accumulated
        if let foregroundSince { time += max(0, date.timeIntervalSince(foregroundSince)) }
        return Reading(epoch: epoch, foregroundTime: time)
    }

    /// The app went to the background at `date`: the time from then on does not count.
    package mutating func enterBackground(at date: Date) {
        guard foregroundSince != nil else { return }
        accumulated = reading(at: date).foregroundTime
        foregroundSince = nil
    }

    /// The app came back to the foreground at `date`.
    package mutating func enterForeground(at date: Date) {
        if foregroundSince == nil { foregroundSince = date }
    }

    /// The user changed at `date`: a new run, from zero, in the foreground or background as now.
    package mutating func restart(at date: Date) {
        epoch = UInt64.random(in: 0...UInt64.max)
        accumulated = 0
        if foregroundSince != nil { foregroundSince = date }
    }
}
