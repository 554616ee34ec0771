import MeasurementEvents

/// An `error/occurred` event as the vendors' encoders read it: `MeasurementEventsStandard`'s
/// `ErrorEvent` posts it, and its catalog declares it (`MeasurementEventsStandardEvents.ErrorOccurred`,
/// which this reads the way the generated type does; a test holds the two together).
package struct ReportedError: Equatable, Sendable {
    /// The event's name in the catalog.
    package static let eventName: EventName = "error/occurred"
    /// The error's type (`error_type`): `CocoaError`, `URLError`.
    package var type: String
    /// The error's message (`message`), present only when the app opted in to sending it.
    package var message: String?

    /// The error an `error/occurred` event reports; `nil` for any other event, and for one the
    /// catalog's typed event would not read (a required arg missing, an arg of another type).
    ///
    /// - Parameter event: a queued event.
    package init?(_ event: MeasurementEvent) {
        guard event.name == Self.eventName, let type = event.args["error_type"]?.stringValue,
            event.args["error_domain"]?.stringValue != nil, event.args["error_code"]?.intValue != nil
        else { return nil }
        for optional in ["message", "context"] {
            if let value = event.args[optional], value.stringValue == nil { return nil }
        }
        self.type = type
        self.message = event.args["message"]?.stringValue
    }
}
