import MeasurementEvents

/// The standard event and args that the vendors' encoders read without a value type of this
/// module: the alias event, and the campaign a deep link names. Declared in
/// `Events/MeasurementEventsStandard.json`; a test holds them to the catalog.
package enum StandardEventNames {
    /// `user/aliased` (`MeasurementEventsStandardEvents.UserAliased`), with the args
    /// `previous_id` and `user_id`.
    package static let userAliased: EventName = "user/aliased"
    /// The campaign's args, from a deep link's UTM parameters (`DeepLink.utmArgs`).
    package static let campaignArgs = ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"]
}
