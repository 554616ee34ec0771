import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

/// What an aggregator delivers to a vendor's tracker on a server: one `checkout/started` from
/// each of two requests handled in their own `MeasurementRequestContext` (alice of tenant acme,
/// bob of tenant globex) and one from outside any context, with the aggregator's own user
/// (`app-user`). The encoders' tests check that each body carries each event's own user.
package enum RequestContextSamples {
    /// The three delivered events, as a vendor's queue holds them, in posting order.
    package static func delivered() -> [QueuedEvent] {
        let center = NotificationCenter()
        let tracker = CollectingTracker()
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = .inMemory
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        MeasurementIdentity.identify(userID: "app-user", to: center)
        MeasurementRequestContext(
            userID: "alice-1", anonymousID: "anon-alice", attributes: ["tenant": "acme", "request_id": "r-1"]
        ).run { MeasurementEvent.post("checkout/started", args: ["step": 1], to: center) }
        MeasurementRequestContext(
            userID: "bob-22", anonymousID: "anon-bob", attributes: ["tenant": "globex", "request_id": "r-2"]
        ).run { MeasurementEvent.post("checkout/started", args: ["step": 1], to: center) }
        MeasurementEvent.post("checkout/started", args: ["step": 1], to: center)
        aggregator.waitUntilDelivered()
        return tracker.events.withLock { $0 }.map { QueuedEvent(event: $0) }
    }

    /// Each delivered event's body, encoded alone by `encoder`.
    package static func bodies(_ encoder: any BatchEncoder) -> [String] {
        delivered().map { EncoderSamples.body(encoder, $0) }
    }

    private final class CollectingTracker: EventTracker {
        let events = LockedValue<[MeasurementEvent]>([])
        func track(_ event: MeasurementEvent) { events.withLock { $0.append(event) } }
    }
}
