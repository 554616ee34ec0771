import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// A clock that moves only when a test moves it: inject it as
/// `EventAggregator.Configuration.clock` and advance it instead of sleeping.
///
/// ```swift
/// let clock = ManualEventClock()
/// var configuration = EventAggregator.Configuration()
/// configuration.clock = clock
/// MeasurementEvent.post("feed/opened")
/// clock.advance(by: 31 * 60)     // half an hour later, without waiting for it
/// MeasurementEvent.post("feed/opened")   // in a new session
/// ```
///
/// Safe to read and move from any thread.
public final class ManualEventClock: EventClock, @unchecked Sendable {
    // @unchecked: `current` sits behind its lock.
    private let current: LockedValue<Date>

    /// A clock reading `now`: by default a fixed, round date (2024-05-01 12:30 UTC), so that
    /// session ids are the same on every run.
    ///
    /// - Parameter now: the clock's first reading.
    public init(now: Date = Date(timeIntervalSince1970: 1_714_566_600)) {
        current = LockedValue(now)
    }

    /// The date the clock was last set or advanced to.
    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock `seconds` forward (or back, when negative).
    ///
    /// - Parameter seconds: how far to move; negative moves back.
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// Sets the clock to `date`.
    ///
    /// - Parameter date: the clock's new reading.
    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}
