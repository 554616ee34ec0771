import Dispatch
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// Where the impression engine reads the time: monotonic seconds, plus a way to turn such an
/// instant into a wall-clock date for the wire.
///
/// The engine never calls `Date()` on its own: production code uses ``SystemImpressionClock``,
/// tests and simulations use ``ManualImpressionClock`` and advance it.
///
/// ```swift
/// let clock = ManualImpressionClock()
/// let engine = try ImpressionEngine<Int>(clock: clock)
/// engine.appeared(7)
/// clock.advance(by: 1.5)
/// engine.disappeared(7)          // visible for 1.5 s: an impression
/// ```
public protocol ImpressionClock: Sendable {
    /// The current instant, in seconds, on a clock that never goes backwards.
    func now() -> TimeInterval

    /// The wall-clock date of an instant read from ``now()``.
    ///
    /// - Parameter instant: seconds on this clock.
    /// - Returns: the date it stands for, for the wire.
    func date(at instant: TimeInterval) -> Date
}

/// The system's monotonic clock, counting the time the device sleeps (not affected by the
/// user changing the date).
///
/// Reading it costs a few nanoseconds; dates are derived from one wall-clock reading taken
/// when the clock is made. The clock keeps counting while the device sleeps (Darwin's
/// `mach_continuous_time`, Linux's `CLOCK_BOOTTIME`): uptime stops in sleep, so dates derived from
/// it fell behind by all the sleep since the clock was made.
public struct SystemImpressionClock: ImpressionClock {
    private let readSeconds: @Sendable () -> TimeInterval
    private let anchorInstant: TimeInterval
    private let anchorDate: Date

    /// Makes a clock anchored to the wall-clock date now.
    public init() {
        self.init(readSeconds: Self.secondsIncludingSleep, wallClock: Date())
    }

    /// A clock reading `readSeconds`, whose current reading stands for `wallClock`: tests
    /// inject a source to simulate sleep.
    init(readSeconds: @escaping @Sendable () -> TimeInterval, wallClock: Date) {
        self.readSeconds = readSeconds
        anchorDate = wallClock
        anchorInstant = readSeconds()
    }

    public func now() -> TimeInterval { readSeconds() }

    public func date(at instant: TimeInterval) -> Date {
        anchorDate.addingTimeInterval(instant - anchorInstant)
    }

    /// Seconds since an arbitrary point, counting sleep.
    static func secondsIncludingSleep() -> TimeInterval {
        #if canImport(Darwin)
            // mach_continuous_time counts sleep, mach_absolute_time (Dispatch's uptime) does not;
            // both macOS 10.12, iOS 10, tvOS 10, watchOS 3.
            return TimeInterval(mach_continuous_time()) * nanosecondsPerTick / 1_000_000_000
        #elseif os(Linux) || os(Android)
            // CLOCK_BOOTTIME counts suspend; CLOCK_MONOTONIC (Dispatch's uptime) does not.
            var time = timespec()
            guard clock_gettime(CLOCK_BOOTTIME, &time) == 0 else { return uptime() }
            return TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1_000_000_000
        #else
            return uptime()
        #endif
    }

    #if canImport(Darwin)
        private static let nanosecondsPerTick: Double = {
            var timebase = mach_timebase_info_data_t()
            guard mach_timebase_info(&timebase) == KERN_SUCCESS, timebase.denom != 0 else { return 1 }
            return Double(timebase.numer) / Double(timebase.denom)
        }()
    #endif

    private static func uptime() -> TimeInterval {
        TimeInterval(DispatchTime.now().uptimeNanoseconds) / 1_000_000_000
    }
}

/// A clock that only moves when told to: for tests and simulations.
///
/// Time is kept in whole nanoseconds, so that advancing by 0.2 s five times lands exactly
/// on 1 s. Safe to read and advance from any thread.
///
/// ```swift
/// let clock = ManualImpressionClock(startingAt: 100)
/// clock.advance(by: 0.25)
/// clock.now()        // 100.25
/// ```
public final class ManualImpressionClock: ImpressionClock {
    private let nanoseconds: LockedValue<Int64>
    /// The wall-clock date that instant 0 stands for.
    public let epoch: Date

    /// Makes a clock that stands still at `instant` until advanced.
    ///
    /// - Parameters:
    ///   - instant: the first reading of ``now()``, in seconds.
    ///   - epoch: the date instant 0 maps to; a fixed date keeps encoded output reproducible.
    public init(startingAt instant: TimeInterval = 0, epoch: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        nanoseconds = LockedValue(Self.nanoseconds(instant))
        self.epoch = epoch
    }

    public func now() -> TimeInterval {
        TimeInterval(nanoseconds.withLock { $0 }) / 1_000_000_000
    }

    public func date(at instant: TimeInterval) -> Date {
        epoch.addingTimeInterval(instant)
    }

    /// Moves the clock forward; negative or non-finite amounts are ignored, since the clock is
    /// monotonic.
    ///
    /// - Parameter seconds: how far to move.
    public func advance(by seconds: TimeInterval) {
        guard seconds.isFinite, seconds > 0 else { return }
        let step = Self.nanoseconds(seconds)
        nanoseconds.withLock { $0 += step }
    }

    /// Moves the clock to `instant`, if that is not in the past.
    ///
    /// - Parameter instant: the new reading of ``now()``, in seconds.
    public func advance(to instant: TimeInterval) {
        guard instant.isFinite else { return }
        let target = Self.nanoseconds(instant)
        nanoseconds.withLock { $0 = max($0, target) }
    }

    private static func nanoseconds(_ seconds: TimeInterval) -> Int64 {
        guard seconds.isFinite else { return 0 }
        // Clamped so that absurd inputs (centuries) cannot trap the conversion.
        return Int64(min(max(seconds * 1_000_000_000, -9e18), 9e18).rounded())
    }
}
