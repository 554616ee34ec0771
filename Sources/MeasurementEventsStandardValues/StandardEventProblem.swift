import MeasurementEvents

/// Why a standard event (screen view, order, deep link, error, timer) was not passed on: the
/// event, the arg, what was found and what was expected.
///
/// ```swift
/// // order/completed: currency: found "EUX", expected an ISO 4217 currency code such as EUR
/// ```
public struct StandardEventProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The event that was dropped.
    public var event: EventName
    /// The arg at fault (or what was limited: `rate limit`, `timer`).
    public var arg: String
    /// What was found, quoted in full.
    public var found: String
    /// What was expected, and what was done.
    public var expected: String

    /// A problem with one arg of an event.
    ///
    /// - Parameters:
    ///   - event: the event.
    ///   - arg: the arg at fault.
    ///   - found: what was found.
    ///   - expected: what was expected.
    public init(event: EventName, arg: String, found: String, expected: String) {
        self.event = event
        self.arg = arg
        self.found = found
        self.expected = expected
    }

    /// `event: arg: found …, expected …`.
    public var description: String { "\(event): \(arg): found \(found), expected \(expected)" }
}
