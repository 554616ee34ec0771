import MeasurementEvents
import MeasurementEventsAggregator

/// A catalog of one event with a personal-data arg (`email`) and a plain one (`plan`), and a
/// second event where `email` is not marked personal: shared by the tests of personal data and
/// of the delivery pipeline.
enum AccountCatalog {
    static let catalog = EventCatalog(
        module: "Account",
        events: [
            EventSpec(
                name: "account/signed_up", type: .userAction,
                args: [
                    ArgSpec(name: "email", type: .string, isRequired: true, isPersonalData: true),
                    ArgSpec(name: "plan", type: .string, isRequired: true, isPersonalData: false),
                ]),
            EventSpec(
                name: "account/plan_changed", type: .userAction,
                args: [ArgSpec(name: "email", type: .string, isRequired: true, isPersonalData: false)]),
        ])
}
