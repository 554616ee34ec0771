import Foundation

/// Dates as integer counts since 1970, for wire formats and session ids. Any `Date` may arrive
/// (an event made in code can carry one), so the date is clamped to the years 1 to 9999 first
/// and no count can overflow `Int64`; NaN reads as 1970.
package enum UnixTime {
    /// 0001-01-01T00:00:00Z, in seconds since 1970.
    package static let earliestSeconds: TimeInterval = -62_135_596_800
    /// 9999-12-31T23:59:59Z (the start of the last second), in seconds since 1970.
    package static let latestSeconds: TimeInterval = 253_402_300_799

    /// Milliseconds since 1970, rounded down.
    package static func milliseconds(_ date: Date) -> Int64 {
        Int64((clampedSeconds(date) * 1000).rounded(.down))  // fits: clamped below ±2.6e14
    }

    /// Microseconds since 1970, rounded down.
    package static func microseconds(_ date: Date) -> Int64 {
        Int64((clampedSeconds(date) * 1_000_000).rounded(.down))  // fits: clamped below ±2.6e17
    }

    /// Seconds since 1970 within 0001-01-01 and 9999-12-31; NaN reads as 1970.
    private static func clampedSeconds(_ date: Date) -> Double {
        let seconds = date.timeIntervalSince1970
        guard !seconds.isNaN else { return 0 }
        return min(max(seconds, earliestSeconds), latestSeconds + 0.999)
    }
}
