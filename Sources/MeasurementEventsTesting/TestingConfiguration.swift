import MeasurementEvents
import MeasurementEventsAggregator

extension EventAggregator.Configuration {
    /// The default configuration with identity, consent and session kept in memory
    /// (`identityStore = .inMemory`): what a test's aggregator should start from, so that tests
    /// never share the app's identity file, nor each other's.
    ///
    /// ```swift
    /// var configuration = EventAggregator.Configuration.testing
    /// configuration.deliveryCoalescing = 0
    /// let aggregator = EventAggregator(center: center, trackers: [tracker], configuration: configuration)
    /// ```
    public static var testing: EventAggregator.Configuration {
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = .inMemory
        return configuration
    }
}
