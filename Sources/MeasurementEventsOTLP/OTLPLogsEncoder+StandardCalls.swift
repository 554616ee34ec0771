import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsStandardValues

// OpenTelemetry's semantic conventions for the standard events
// (opentelemetry.io/docs/specs/semconv/registry/attributes/app/):
// - Screen views: "app.screen.name" (the screen's name) and "app.screen.id" (what tells the
//   screen apart: its class, as the registry's examples "MyApp.ProfileViewController" show),
//   both from the app registry (development status). The conventions define no screen-view
//   event, so the record keeps the event's own name (screen/viewed).
// - Errors: "exception.type" and "exception.message" (registry/attributes/exception/), from
//   error/occurred's error_type and message (the message only when the app opted in).
// - Orders and aliases: no convention exists; the args are the attributes, amounts as string
//   attributes holding the decimal text (no double on the way).
// - Refunds (an order whose revenue_type is refund): no convention exists either; the record
//   adds the boolean attribute "order.refund" (true), named after the registry's rule of
//   dot-separated namespaces (opentelemetry.io/docs/specs/semconv/general/naming/), so that a
//   query tells refunds from sales without reading revenue_type's free text. The amounts stay
//   as posted, positive: what was refunded.
extension OTLPLogsEncoder {
    /// The attribute a refund's record carries, `true`: `order.refund`.
    static let refundAttribute = "order.refund"

    /// The semantic-convention attributes of a standard event, added to its args.
    static func standardAttributes(_ queued: QueuedEvent) -> [(String, EventValue)] {
        if queued.kind == .track, let error = ReportedError(queued.event) {
            var attributes: [(String, EventValue)] = [("exception.type", .string(error.type))]
            if let message = error.message { attributes.append(("exception.message", .string(message))) }
            return attributes
        }
        switch StandardCall(queued) {
        case .order(let order):
            return order.isRefund ? [(refundAttribute, .bool(true))] : []
        case .screen(let view):
            var attributes: [(String, EventValue)] = [("app.screen.name", .string(view.name))]
            if let screenClass = view.screenClass { attributes.append(("app.screen.id", .string(screenClass))) }
            return attributes
        case .alias, nil:
            return []
        }
    }
}

/// An `error/occurred` event as this encoder reads it: `MeasurementEventsStandard`'s `ErrorEvent`
/// posts it, and its catalog declares it (`MeasurementEventsStandardEvents.ErrorOccurred`, which
/// this reads the way the generated type does; `OTLPStandardCallTests` holds the two together).
/// Here rather than beside `Order` in MeasurementEventsStandardValues: only this encoder reads it,
/// and every app that links that module would pay for the type (4 KB of the one-event app).
struct ReportedError: Equatable {
    /// The event's name in the catalog.
    static let eventName: EventName = "error/occurred"
    /// The error's type (`error_type`): `CocoaError`, `URLError`.
    var type: String
    /// The error's message (`message`), present only when the app opted in to sending it.
    var message: String?

    /// The error an `error/occurred` event reports; `nil` for any other event, and for one the
    /// catalog's typed event would not read (a required arg missing, an arg of another type).
    init?(_ event: borrowing MeasurementEvent) {  // borrowed: asked of every event (issue 49)
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
