import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Small formatting helpers shared by the encoders.
package enum WireFormats {
    /// `2024-05-01T12:30:00.123Z`: ISO 8601 in UTC with milliseconds, as Segment expects.
    ///
    /// Computed in Int64 from the civil calendar, not with `gmtime_r`: `time_t` is 32 bits on
    /// Apple Watch, where a date after 2038 would trap.
    package static func iso8601(_ date: Date) -> String {
        let milliseconds = self.milliseconds(date)
        let (days, dayMilliseconds) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = civilDate(daysSince1970: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = dayMilliseconds % 1000
        let millis = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        let seconds = dayMilliseconds / 1000
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yearText)-\(two(month))-\(two(day))T"
            + "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)).\(millis)Z"
    }

    /// Milliseconds since 1970, clamped to the years 1 to 9999 (``UnixTime``).
    package static func milliseconds(_ date: Date) -> Int64 { UnixTime.milliseconds(date) }

    /// Microseconds since 1970, clamped like ``milliseconds(_:)``.
    package static func microseconds(_ date: Date) -> Int64 { UnixTime.microseconds(date) }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let remainder = (value % divisor + divisor) % divisor
        return ((value - remainder) / divisor, remainder)
    }

    /// Howard Hinnant's `civil_from_days`: the proleptic Gregorian date of a day count.
    private static func civilDate(daysSince1970: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let (era, dayOfEra) = floorDivision(daysSince1970 + 719_468, 146_097)
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `base` with `path` appended, keeping any path the base already has (for proxies).
    package static func url(_ base: URL, path: String, query: [(String, String)] = []) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        let basePath = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        components.path = basePath + path
        if !query.isEmpty { components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        return components.url!
    }
}
