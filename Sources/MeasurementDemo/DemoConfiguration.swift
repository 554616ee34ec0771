import MeasurementEventsAggregator

extension EventAggregator.Configuration {
    /// The demo's aggregators: a tool's, not an app's, so identity is kept in memory and nothing
    /// is written to the home folder of whoever runs `swift run measurement-demo` (the identity
    /// section keeps it on disk, in a temporary folder, to show that it persists).
    static var demo: EventAggregator.Configuration {
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = .inMemory
        return configuration
    }
}
