import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// One trigger and the action it runs, attached to an object with
/// `TriggerDetector.attach(_:to:)`.
///
/// ```swift
/// let shown = TriggeredEvent(.didAppear, trace: "FeedViewController shown") { firing in
///     MeasurementEvent.post("feed/opened", args: ["at": firing.timestamp.timeIntervalSince1970])
/// }
/// detector.attach(shown, to: feedViewController)
/// ```
///
/// The action runs on the detector's serial queue (or on the reporting thread when the report
/// asks for synchronous delivery). It must not capture the object it is attached to strongly:
/// the detector would then keep the object alive. Capture `[weak self]` or plain values.
public struct TriggeredEvent: Sendable, Identifiable {
    /// For correlating a firing with logs; unique per event.
    public let id: UUID
    /// What has to happen to the object for the action to run.
    public let trigger: Trigger
    /// A free-form note for debugging ("FeedViewController shown"), handed to the action and
    /// to the detector's trace handler.
    public let trace: String?
    /// When true, the event is detached as it fires, so it runs at most once.
    public let firesOnce: Bool
    /// What runs when the event fires, on the detector's queue.
    public let action: @Sendable (TriggerFiring) -> Void

    /// Makes an event; attach it to an object with ``TriggerDetector/attach(_:to:)-(TriggeredEvent,_)``.
    ///
    /// - Parameters:
    ///   - trigger: what has to happen to the object for `action` to run.
    ///   - trace: a free-form note for debugging, handed to the action and the detector's trace handler.
    ///   - id: the event's identity, for ``TriggerDetector/detach(_:from:)``; unique by default.
    ///   - firesOnce: detach the event as it fires, so that it runs at most once.
    ///   - action: what runs when the event fires; must not capture the object strongly.
    public init(
        _ trigger: Trigger,
        trace: String? = nil,
        id: UUID = EventIDGenerator.makeID(),
        firesOnce: Bool = false,
        action: @escaping @Sendable (TriggerFiring) -> Void
    ) {
        self.id = id
        self.trigger = trigger
        self.trace = trace
        self.firesOnce = firesOnce
        self.action = action
    }
}

/// What an action receives when its event fires.
public struct TriggerFiring: Sendable, Equatable {
    /// When the trigger was reported, read from the detector's clock.
    public let timestamp: Date
    /// The trigger that was reported.
    public let trigger: Trigger
    /// The ``TriggeredEvent/id`` of the event that fired.
    public let eventID: UUID
    /// The ``TriggeredEvent/trace`` of the event that fired.
    public let trace: String?

    /// Makes a firing, as the detector does; for tests of actions.
    ///
    /// - Parameters:
    ///   - timestamp: when the trigger was reported.
    ///   - trigger: the trigger that was reported.
    ///   - eventID: the id of the event that fired.
    ///   - trace: the trace of the event that fired.
    public init(timestamp: Date, trigger: Trigger, eventID: UUID, trace: String?) {
        self.timestamp = timestamp
        self.trigger = trigger
        self.eventID = eventID
        self.trace = trace
    }
}
