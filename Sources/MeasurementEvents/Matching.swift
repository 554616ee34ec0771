import Foundation

extension MeasurementEvent {
    /// A notification handler that matches one event, for a plain
    /// `XCTestCase.expectation(forNotification:object:handler:)`:
    ///
    /// ```swift
    /// expectation(forNotification: .measurementEvent, object: nil,
    ///             handler: MeasurementEvent.matcher("feed/item_tapped", args: ["position": 3]))
    /// ```
    ///
    /// `args` lists the arguments that must be present with these values; others are ignored.
    /// Malformed notifications never match.
    ///
    /// - Parameters:
    ///   - name: the event name to match.
    ///   - args: args that must be present with these values.
    ///   - type: the event type to match; `nil` matches any.
    /// - Returns: a handler for `XCTestCase.expectation(forNotification:object:handler:)`.
    public static func matcher(
        _ name: EventName, args: [String: any EventValueConvertible] = [:], type: EventType? = nil
    ) -> @Sendable (Notification) -> Bool {
        let args = args.eventArgs
        return { notification in
            guard let event = try? MeasurementEvent(notification: notification) else { return false }
            return event.matches(name, args: args, type: type)
        }
    }

    /// Whether this event has `name`, `type` (when given), and every pair of `args`.
    ///
    /// - Parameters:
    ///   - name: the event name.
    ///   - args: args that must be present with these values.
    ///   - type: the event type; `nil` matches any.
    /// - Returns: whether the event matches.
    public func matches(_ name: EventName, args: EventArgs = [:], type: EventType? = nil) -> Bool {
        guard self.name == name else { return false }
        if let type, self.type != type { return false }
        return args.allSatisfy { self.args[$0.key] == $0.value }
    }
}
