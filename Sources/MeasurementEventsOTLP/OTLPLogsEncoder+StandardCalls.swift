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
extension OTLPLogsEncoder {
    /// The semantic-convention attributes of a standard event, added to its args.
    static func standardAttributes(_ queued: QueuedEvent) -> [(String, EventValue)] {
        if queued.kind == .track, let error = ReportedError(queued.event) {
            var attributes: [(String, EventValue)] = [("exception.type", .string(error.type))]
            if let message = error.message { attributes.append(("exception.message", .string(message))) }
            return attributes
        }
        guard case .screen(let view) = StandardCall(queued) else { return [] }
        var attributes: [(String, EventValue)] = [("app.screen.name", .string(view.name))]
        if let screenClass = view.screenClass { attributes.append(("app.screen.id", .string(screenClass))) }
        return attributes
    }
}
