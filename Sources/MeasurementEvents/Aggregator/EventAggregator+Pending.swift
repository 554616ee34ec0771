import Foundation

/// What waits between posting and delivery.
extension EventAggregator {
    struct Pending {
        var event: MeasurementEvent
        var needsID: Bool
        /// The args of a fast-path post, still as posted; converted by `completeArgs`.
        var postedArgs: [String: any EventValueConvertible]?
        /// Consent as it was when the event was posted: an event posted without consent is
        /// never sent, even if consent arrives before it is delivered.
        var consentAtPost: Consent
        /// The place in the aggregator's sequence (asynchronous delivery), set by its buffer.
        var sequence: Int64 = 0
    }

    /// Something applied between two pending events, in posting order: an identity change or a
    /// move to or from the background. Kept apart from `pending` so that events cost nothing more.
    struct Control {
        enum Action {
            case identity(IdentityChange)
            case enterBackground
            case enterForeground
            case refreshContext
        }

        /// Applied before `pending[position]`.
        var position: Int
        var action: Action
        var timestamp: Date
        var consentAtPost: Consent
        /// The place in the aggregator's sequence (asynchronous delivery), set by its buffer.
        var sequence: Int64 = 0
    }

    /// What waits while consent is pending or the trackers are not ready.
    enum Held {
        case event(MeasurementEvent)
        case identity(IdentityEvent)
    }
}
