import Foundation

/// What waits between posting and delivery.
extension EventAggregator {
    struct Pending {
        var event: MeasurementEvent
        var needsID: Bool
        /// Consent as it was when the event was posted: an event posted without consent is
        /// never sent, even if consent arrives before it is delivered.
        var consentAtPost: MeasurementEvents.Consent
        /// The place in the aggregator's sequence (asynchronous delivery), set by its buffer.
        var sequence: Int64 = 0
    }

    /// A fast-path post as its buffer keeps it: the posted fields, made into a ``Pending`` event
    /// by the drain. Cheaper to make and move on the posting thread than an event.
    struct PostedEvent {
        var name: EventName
        var type: EventType
        var category: String?
        var args: [String: any EventValueConvertible]
        var timestamp: Date
        var consentAtPost: MeasurementEvents.Consent
        var sequence: Int64 = 0

        /// The event, its args converted; an error when one of them is not a valid value.
        func makePending() throws(MalformedEventError) -> Pending {
            let args = try NotificationKeys.readPostedArgs(args, notificationName: .measurementEvent)
            return Pending(
                event: MeasurementEvent(
                    id: MeasurementEvent.placeholderID, name: name, args: args, type: type, category: category,
                    label: nil, timestamp: timestamp, attributionStorage: nil),
                needsID: true, consentAtPost: consentAtPost, sequence: sequence)
        }
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
        var consentAtPost: MeasurementEvents.Consent
        /// The place in the aggregator's sequence (asynchronous delivery), set by its buffer.
        var sequence: Int64 = 0
    }

    /// What waits while consent is pending or the trackers are not ready.
    enum Held {
        case event(MeasurementEvent)
        case identity(IdentityEvent)
    }
}
