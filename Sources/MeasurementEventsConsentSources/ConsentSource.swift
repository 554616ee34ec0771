import MeasurementEventsAggregator

/// Where consent by purpose comes from: a consent platform (CMP) that tells, for each
/// `ConsentPurpose`, whether the user granted it.
///
/// A source calls the closure given to ``start(_:)`` at once with the state of every purpose it
/// knows, when that state is known, and then at every change; the aggregator takes these
/// updates. ``IABTCFConsentSource`` is the built-in source for platforms that speak IAB TCF v2.2;
/// an app whose platform has its own API writes a source of a few lines:
///
/// ```swift
/// // Fragment: `MyPlatform` and its callback stand for the consent platform's own API.
/// final class MyPlatformConsentSource: ConsentSource {
///     func start(_ update: @escaping @Sendable ([ConsentPurpose: Consent]) -> Void) {
///         MyPlatform.shared.onChange = { choices in
///             update([.analytics: choices.analytics ? .granted : .denied])
///         }
///     }
///
///     func stop() { MyPlatform.shared.onChange = nil }
/// }
/// ```
public protocol ConsentSource: Sendable {
    /// Starts feeding consent to `update`: with the current state at once when it is known, and
    /// then at every change.
    ///
    /// - Parameter update: takes the consent of each purpose the source knows, for example
    ///   `[.analytics: .granted, .advertising: .denied]`. It may be called on any thread, never
    ///   on two at once for the same start.
    func start(_ update: @escaping @Sendable ([ConsentPurpose: Consent]) -> Void)

    /// Stops feeding consent: once `stop()` returns, the closure given to ``start(_:)`` is not
    /// called again.
    func stop()
}
