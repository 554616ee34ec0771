import Foundation
import MeasurementEvents

/// Where the aggregator reads the time: event timestamps and session rules.
///
/// Tests inject a clock they advance by hand instead of sleeping:
///
/// ```swift
/// final class TestClock: EventClock, @unchecked Sendable { var date = Date(); func now() -> Date { date } }
/// ```
///
/// `MeasurementEventsTesting` ships one (`ManualEventClock`).
public protocol EventClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's wall clock.
public struct SystemEventClock: EventClock {
    /// The system clock.
    public init() {}
    @inline(__always)
    public func now() -> Date { Date() }
}
