import MeasurementEvents

extension SessionRules {
    /// The catalog of the session events these rules send (``startedEventName`` and
    /// ``endedEventName``), for an aggregator that checks events against the plan:
    ///
    /// ```swift
    /// configuration.catalogs = [DemoFeedEvents.catalog, configuration.sessions.catalog]
    /// ```
    public var catalog: EventCatalog {
        EventCatalog(
            module: "MeasurementEvents",
            events: [
                EventSpec(name: startedEventName, type: .activity, args: []),
                EventSpec(
                    name: endedEventName, type: .activity,
                    args: [
                        ArgSpec(
                            name: "duration_seconds", type: .double, isRequired: true, isPersonalData: false,
                            minimum: 0)
                    ]),
            ])
    }
}
