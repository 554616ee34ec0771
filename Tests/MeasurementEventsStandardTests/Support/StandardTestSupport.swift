import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsStandard
import MeasurementEventsTesting

/// A real aggregator on its own center, with a manual clock, the standard processor and a
/// recording tracker; the allow-list is the standard catalog plus `test/*`.
final class StandardSetup: @unchecked Sendable {
    // @unchecked: `problems` is only touched under its own lock.
    let center = NotificationCenter()
    let clock = ManualEventClock()
    let tracker = RecordingTracker()
    let processor: StandardEventsProcessor
    let aggregator: EventAggregator
    private let recorded = LockedValue<[StandardEventProblem]>([])

    init(maximumErrorsPerType: Int = 10, sendsErrorMessages: Bool = false) {
        let recorded = self.recorded
        processor = StandardEventsProcessor(
            maximumErrorsPerType: maximumErrorsPerType, sendsErrorMessages: sendsErrorMessages,
            problemHandler: { problem in recorded.withLock { $0.append(problem) } })
        var configuration = EventAggregator.Configuration.testing
        configuration.clock = clock
        aggregator = EventAggregator(
            center: center,
            filter: EventFilter(allow: ["test/*"] + MeasurementEventsStandardEvents.allNames.map(EventPattern.init)),
            trackers: [tracker], processors: [processor], configuration: configuration)
        aggregator.start()
    }

    var problems: [StandardEventProblem] { recorded.withLock { $0 } }

    /// Waits for delivery and returns what the tracker received.
    var delivered: [MeasurementEvent] {
        aggregator.waitUntilDelivered()
        return tracker.events
    }

    func post(_ name: EventName, args: EventArgs = [:]) {
        MeasurementEvent.post(name, args: args, to: center)
    }
}

func decimal(_ text: String) -> Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))! }
