import MeasurementEvents

/// What happens to events while the user has not agreed to analytics. Remembered across
/// launches by an aggregator's ``EventAggregator/Configuration-swift.struct/identityStore``.
///
/// An ``EventAggregator`` owns the consent in force (``EventAggregator/consent``,
/// ``EventAggregator/setConsent(_:)``); trackers hear of every change through
/// ``EventTracker/consentDidChange(to:)`` and keep no value of their own that could disagree.
///
/// ```swift
/// aggregator.setConsent(.denied)   // trackers discard what they hold; nothing more is sent
/// ```
public enum Consent: String, Sendable, Equatable, Codable {
    /// Events flow to trackers.
    case granted
    /// Events are held in memory (bounded by
    /// ``EventAggregator/Configuration-swift.struct/heldEventLimit``) until consent is granted,
    /// or discarded if it is denied.
    case pendingHolding
    /// Events are discarded (and counted) as they are received, before any processor, until
    /// consent is granted; granting it later does not send them.
    case pendingDiscarding
    /// Events are discarded (and counted) as they are received, before any processor; trackers
    /// were told to discard what they hold.
    case denied

    var discards: Bool { self == .pendingDiscarding || self == .denied }
}

extension EventAggregator {
    /// The consent type, now `MeasurementEvents/Consent` at the top level so that trackers
    /// need not name the aggregator class.
    @available(*, deprecated, renamed: "MeasurementEventsAggregator.Consent")
    public typealias Consent = MeasurementEventsAggregator.Consent
}

extension Consent {
    /// The consent's number in an atomic.
    var code: Int64 {
        switch self {
        case .granted: return 0
        case .pendingHolding: return 1
        case .pendingDiscarding: return 2
        case .denied: return 3
        }
    }

    init(code: Int64) {
        switch code {
        case 0: self = .granted
        case 1: self = .pendingHolding
        case 2: self = .pendingDiscarding
        default: self = .denied
        }
    }
}
