import Foundation
import MeasurementEvents

/// Prints one readable line per event, for the demo and for debugging:
///
/// ```
/// [MeasurementEvents] 12:03:04.123 [cl] feed/item_tapped item_id=42 position=3
/// ```
public struct ConsoleTracker: EventTracker {
    private let prefix: String
    private let write: @Sendable (String) -> Void

    /// A tracker that prints one line per event.
    ///
    /// - Parameters:
    ///   - prefix: printed before each line.
    ///   - write: where lines go; standard output by default.
    public init(prefix: String = "[MeasurementEvents]", write: @escaping @Sendable (String) -> Void = { print($0) }) {
        self.prefix = prefix
        self.write = write
    }

    /// Prints one line for `event`.
    ///
    /// - Parameter event: the event.
    public func track(_ event: MeasurementEvent) throws {
        write("\(prefix) \(Self.clockTime(event.timestamp)) \(event)")
    }

    /// `HH:mm:ss.SSS` in UTC, without a formatter (formatters are neither cheap nor Sendable);
    /// `--:--:--.---` for a date no clock can show (infinite or NaN).
    static func clockTime(_ date: Date, limit: IntRange = .native) -> String {
        // The time of day is taken in Double before any conversion: milliseconds since 1970
        // do not fit in a 32-bit Int (Apple Watch), the milliseconds of one day do.
        let dayLength = 86_400_000.0
        let remainder = (date.timeIntervalSince1970 * 1000).rounded(.down).truncatingRemainder(dividingBy: dayLength)
        guard let dayMilliseconds = checkedInt(remainder < 0 ? remainder + dayLength : remainder, limit: limit) else {
            return "--:--:--.---"
        }
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(dayMilliseconds / 3_600_000, 2)):\(pad(dayMilliseconds / 60_000 % 60, 2)):"
            + "\(pad(dayMilliseconds / 1000 % 60, 2)).\(pad(dayMilliseconds % 1000, 3))"
    }
}
