import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Starts timing events: the next post of the event carries `duration`, in seconds.
///
/// ```swift
/// Timers.start("checkout/completed")
/// // … later, on any thread:
/// MeasurementEvent.post("checkout/completed")   // duration=42.5
/// ```
///
/// Measured with the aggregator's clock by ``StandardEventsProcessor``, between the
/// timestamps of the `timer/started` post and the event's post, in posting order.
public enum Timers {
    /// Starts timing `event`; starting it again restarts the timer.
    ///
    /// - Parameters:
    ///   - event: the event to time.
    ///   - center: where to post; `.default` unless a test isolates it.
    public static func start(_ event: EventName, to center: NotificationCenter = .default) {
        MeasurementEventsStandardEvents.TimerStarted(event: event.rawValue).post(to: center)
    }
}
