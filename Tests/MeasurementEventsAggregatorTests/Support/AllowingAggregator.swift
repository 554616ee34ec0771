import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting

/// An aggregator that keeps every event, on a center of its own, with a recording tracker and
/// the given coalescing delay (a long one leaves the draining to `waitUntilDelivered`).
func allowingAggregator(coalescing: TimeInterval) -> (EventAggregator, RecordingTracker, NotificationCenter) {
    let center = NotificationCenter()
    let tracker = RecordingTracker()
    var configuration = EventAggregator.Configuration.testing
    configuration.deliveryCoalescing = coalescing
    let aggregator = EventAggregator(
        center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
    aggregator.start()
    return (aggregator, tracker, center)
}
