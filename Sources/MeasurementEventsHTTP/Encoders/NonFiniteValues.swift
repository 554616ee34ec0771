import MeasurementEvents
import MeasurementEventsAggregator

/// NaN and ±infinity in an event's values: JSON has no number for them, so each encoder says
/// what it sends instead, and reports it as an adaptation (counted in `adaptedByEncoder`).
///
/// - Segment, Amplitude, GA4: `null` (their APIs take JSON numbers only; a bare `NaN` would make
///   the whole body unparsable and the batch refused).
/// - OTLP: the string `"NaN"`, `"Infinity"` or `"-Infinity"` as a `stringValue`. The proto3 JSON
///   mapping allows those strings in `doubleValue`, but some receivers refuse them and with them
///   the whole request; a string attribute is read by every receiver and keeps what was posted.
///
/// Events posted through a notification never carry these values (the bus refuses them); an
/// event made in code can.
package enum NonFiniteValues {
    /// The spelling used for `value` by encoders that send it as a string.
    package static func spelling(_ value: Double) -> String {
        value.isNaN ? "NaN" : value > 0 ? "Infinity" : "-Infinity"
    }

    /// One adaptation per event of `events` whose values hold a non-finite double, naming the
    /// keys and what was sent instead (`sentAs`).
    package static func adaptations(in events: [QueuedEvent], sentAs: String) -> [EncodedBatch.Rejection] {
        events.compactMap { queued in
            let values: EventArgs
            switch queued.kind {
            case .track: values = queued.event.args
            case .identify: values = queued.identity.traits
            case .group: values = queued.identity.groupTraits
            }
            // Over the pairs, without an array or a lookup per key: every event of every request
            // passes here, and almost none has a non-finite number.
            var keys: [String] = []
            for (key, value) in values {
                if case .double(let double) = value, !double.isFinite { keys.append(key) }
            }
            guard !keys.isEmpty else { return nil }
            let names = keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            return .init(event: queued.event.name, reason: "non-finite number in \(names) sent as \(sentAs)")
        }
    }
}
