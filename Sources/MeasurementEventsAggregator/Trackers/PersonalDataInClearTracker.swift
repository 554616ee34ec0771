import MeasurementEvents

/// A tracker that receives the personal-data args of the registered catalogs in clear, where
/// every other tracker receives them hashed. Made by
/// ``EventTracker/receivingPersonalDataInClear()``, so that the exception reads at the place the
/// trackers are listed:
///
/// ```swift
/// let aggregator = EventAggregator(
///     filter: filter,
///     trackers: [http, ConsoleTracker().receivingPersonalDataInClear()],   // a local debug console
///     configuration: configuration)
/// ```
public struct PersonalDataInClearTracker: EventTracker {
    /// The tracker that receives the events.
    public let base: any EventTracker

    /// Wraps `base`.
    ///
    /// - Parameter base: the tracker that receives personal data in clear.
    public init(_ base: any EventTracker) {
        self.base = base
    }

    /// Hands `event` to ``base``.
    ///
    /// - Parameter event: the event, its personal data in clear.
    public func track(_ event: MeasurementEvent) throws { try base.track(event) }
    /// Flushes ``base``.
    public func flush() throws { try base.flush() }
    /// Tells ``base`` to discard what it holds.
    public func discardPending() throws { try base.discardPending() }
    /// Hands the identity change to ``base``.
    ///
    /// - Parameter event: the identity change.
    public func identify(_ event: IdentityEvent) throws { try base.identify(event) }
    /// Tells ``base`` the consent in force.
    ///
    /// - Parameter consent: the consent in force from now on.
    public func consentDidChange(to consent: Consent) throws {
        try base.consentDidChange(to: consent)
    }
}

extension EventTracker {
    /// This tracker, receiving the registered catalogs' personal-data args in clear instead of
    /// hashed (``EventAggregator/Configuration/catalogs``). For a local debug console, or a
    /// vendor contractually allowed to hold the data.
    ///
    /// - Returns: a tracker that forwards everything to `self`.
    public func receivingPersonalDataInClear() -> PersonalDataInClearTracker {
        PersonalDataInClearTracker(self)
    }
}
