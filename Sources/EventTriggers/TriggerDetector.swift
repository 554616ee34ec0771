import Dispatch
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Holds the events attached to objects and runs them when the UI layer reports a trigger.
///
/// ```swift
/// let detector = TriggerDetector.shared
/// detector.attach(TriggeredEvent(.didAppear) { _ in MeasurementEvent.post("feed/opened") }, to: viewController)
/// // in the view controller's viewDidAppear:
/// detector.reportDidAppear(self)
/// ```
///
/// Reporting only looks the object's events up under a lock; the actions run on the detector's
/// serial queue, in reporting order (per reporting thread), unless the report asks for
/// `synchronously: true`. Attaching holds the object weakly: a released object's events never
/// fire and are dropped.
public final class TriggerDetector: @unchecked Sendable {
    // @unchecked: the registry lives behind its lock; every other stored property is immutable
    // (`queueKey` is only used as an identity token).

    /// A detector for the whole app, using the system clock.
    public static let shared = TriggerDetector()

    private let registry = LockedValue(AttachmentRegistry())
    private let queue = DispatchQueue(label: "MeasurementEvents.TriggerDetector")
    private let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    private let now: @Sendable () -> Date
    private let traceHandler: (@Sendable (String) -> Void)?

    /// Makes a detector with its own registry and queue; most apps use ``shared``.
    ///
    /// - Parameters:
    ///   - now: the clock read when a trigger fires; inject one in tests.
    ///   - traceHandler: called on the delivery queue, before the action, with a line for each
    ///     firing of an event that has a trace: `didAppear fired "Feed shown" (id …)`.
    public init(
        now: @escaping @Sendable () -> Date = { Date() },
        traceHandler: (@Sendable (String) -> Void)? = nil
    ) {
        self.now = now
        self.traceHandler = traceHandler
        queue.setSpecific(key: queueKey, value: ObjectIdentifier(self))
    }

    // MARK: Attaching

    /// Attaches an event to `object` for as long as the object lives.
    ///
    /// - Parameters:
    ///   - event: the trigger and the action to run.
    ///   - object: the object whose reports fire the event; held weakly.
    /// - Returns: the event's id, for ``detach(_:from:)``.
    @discardableResult
    public func attach(_ event: TriggeredEvent, to object: AnyObject) -> UUID {
        registry.withLock { $0.attach([event], to: object) }
        return event.id
    }

    /// Attaches several events to `object`; they fire in this order.
    ///
    /// - Parameters:
    ///   - events: the events, in firing order.
    ///   - object: the object whose reports fire the events; held weakly.
    /// - Returns: the events' ids, in the same order.
    @discardableResult
    public func attach(_ events: [TriggeredEvent], to object: AnyObject) -> [UUID] {
        registry.withLock { $0.attach(events, to: object) }
        return events.map(\.id)
    }

    /// Detaches one event.
    ///
    /// - Parameters:
    ///   - id: the id ``attach(_:to:)-(TriggeredEvent,_)`` returned.
    ///   - object: the object it was attached to.
    /// - Returns: whether it was attached.
    @discardableResult
    public func detach(_ id: UUID, from object: AnyObject) -> Bool {
        registry.withLock { $0.detach([id], from: object) } > 0
    }

    /// Detaches every event of `object`.
    ///
    /// - Parameter object: the object whose events go.
    public func detachAll(from object: AnyObject) {
        registry.withLock { $0.detachAll(from: object) }
    }

    /// The events attached to `object`, in attachment order.
    ///
    /// - Parameter object: the object to look up.
    /// - Returns: its events, or none when it has none (or is not the object they were attached to).
    public func events(attachedTo object: AnyObject) -> [TriggeredEvent] {
        registry.withLock { $0.events(of: object) }
    }

    /// Drops the events of released objects now (it also happens as the registry grows).
    public func prune() {
        registry.withLock { $0.prune() }
    }

    /// How many objects with attached events are still alive.
    public var attachedObjectCount: Int { registry.withLock { $0.liveObjectCount } }

    /// How many objects the registry holds events for, released ones not yet pruned included.
    public var registryEntryCount: Int { registry.withLock { $0.entryCount } }

    // MARK: Reporting

    /// Runs the events of `objects` that `trigger` fires. Every per-trigger entry point
    /// (`reportDidAppear(_:)` and the others) comes here.
    ///
    /// - Parameters:
    ///   - trigger: what happened; ``Trigger/none`` fires nothing.
    ///   - objects: the objects it happened to; each one's events fire, in this order.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func report(_ trigger: Trigger, for objects: [AnyObject], synchronously: Bool = false) -> Bool {
        guard trigger != .none, !objects.isEmpty else { return false }
        let fired = registry.withLock { registry in
            objects.flatMap { registry.take(trigger, for: $0) }
        }
        guard !fired.isEmpty else { return false }
        let timestamp = now()
        let traceHandler = traceHandler
        let run: @Sendable () -> Void = {
            for event in fired {
                let firing = TriggerFiring(
                    timestamp: timestamp, trigger: trigger, eventID: event.id, trace: event.trace)
                if let traceHandler, let trace = event.trace {
                    traceHandler("\(trigger) fired \"\(trace)\" (id \(event.id.uuidString))")
                }
                event.action(firing)
            }
        }
        if synchronously { onQueue(run) } else { queue.async(execute: run) }
        return true
    }

    // MARK: Waiting

    /// Blocks until every action queued so far has run. For tests and shutdown; calling it
    /// from an action returns at once.
    public func flush() {
        onQueue {}
    }

    /// Runs `body` after everything queued, on the queue (or directly when already on it).
    private func onQueue(_ body: () -> Void) {
        if DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self) {
            body()
        } else {
            queue.sync(execute: body)
        }
    }
}
