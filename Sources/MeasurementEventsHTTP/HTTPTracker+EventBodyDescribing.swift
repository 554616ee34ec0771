import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

extension HTTPTracker: EventBodyDescribing {
    /// The body the tracker's encoder makes of `event` alone, as the vendor would receive it
    /// (uncompressed): what an inspector shows beside the event (`EventTrailEntry.TrackerOutcome.body`).
    ///
    /// When the encoder leaves the event out, the text says why; when it changes the event, the
    /// changes follow the body.
    ///
    /// - Parameter event: a forwarded event.
    /// - Returns: the request's method, URL and body, or the encoder's reasons for sending nothing.
    public func describeBody(for event: MeasurementEvent) -> String? {
        let batch = encoder.encode([QueuedEvent(event: event)], context: BatchContext(sentAt: event.timestamp))
        var text = ""
        if let request = batch.request {
            text = "\(request.method) \(request.url.absoluteString)\n" + String(decoding: request.body, as: UTF8.self)
        }
        for rejection in batch.rejected { text += (text.isEmpty ? "" : "\n") + "not sent: \(rejection)" }
        for adaptation in batch.adaptations { text += (text.isEmpty ? "" : "\n") + "changed: \(adaptation)" }
        return text.isEmpty ? nil : text
    }
}
