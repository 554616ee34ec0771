import MeasurementEvents
import MeasurementEventsAggregator

extension EventAggregator.Configuration {
    /// The default configuration with identity in memory (as the test kit's `.testing`, which
    /// this target does not link): tests never share an identity file.
    static var testing: EventAggregator.Configuration {
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = .inMemory
        return configuration
    }
}
