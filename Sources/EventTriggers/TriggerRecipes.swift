import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsPlan

/// Ready-made events for the common cases, each one call.
///
/// ```swift
/// detector.attachOnce(.didAppear, to: onboarding) { _ in showTip() }
/// detector.attachPosting("settings/opened", type: .activity, on: .didAppear, to: settings)
/// detector.attachTimeOnScreen(to: article, args: ["screen": "article"])
/// detector.attachScreenView("FeedViewController", to: feed, plan: plan)
/// ```
extension TriggeredEvent {
    /// The event the time-on-screen recipes post by default; declare it in a tracking plan's
    /// catalog check next to the modules' names.
    public static let timeOnScreenEventName: EventName = "screen/time_on_screen"

    /// An event that runs `action` the first time `trigger` is reported, then detaches itself.
    ///
    /// - Parameters:
    ///   - trigger: what has to happen to the object.
    ///   - trace: a note for debugging.
    ///   - action: what runs, once.
    /// - Returns: the event, to attach.
    public static func once(
        _ trigger: Trigger, trace: String? = nil, action: @escaping @Sendable (TriggerFiring) -> Void
    ) -> TriggeredEvent {
        TriggeredEvent(trigger, trace: trace, firesOnce: true, action: action)
    }

    /// An event whose action posts a measurement event.
    ///
    /// - Parameters:
    ///   - name: the measurement event's name: `settings/opened`.
    ///   - type: its event type.
    ///   - category: its category, when the catalog gives one.
    ///   - args: its arguments.
    ///   - trigger: what has to happen to the object for the event to be posted.
    ///   - trace: a note for debugging.
    ///   - firesOnce: post at most once.
    ///   - center: where to post; `.default` unless a test isolates it.
    /// - Returns: the event, to attach.
    public static func posting(
        _ name: EventName,
        type: EventType = .default,
        category: String? = nil,
        args: [String: any EventValueConvertible] = [:],
        on trigger: Trigger,
        trace: String? = nil,
        firesOnce: Bool = false,
        to center: NotificationCenter = .default
    ) -> TriggeredEvent {
        TriggeredEvent(trigger, trace: trace, firesOnce: firesOnce) { _ in
            MeasurementEvent.post(name, type: type, category: category, args: args, to: center)
        }
    }

    /// A did-appear / did-disappear pair that measures how long the object was displayed.
    ///
    /// Each disappearance that follows an appearance calls `report` with the seconds between
    /// the two firings' timestamps (the detector's clock). A disappearance without an
    /// appearance reports nothing; a second appearance restarts the measurement.
    ///
    /// - Parameters:
    ///   - trace: a note for debugging, on both events.
    ///   - report: called on the detector's queue with the seconds on screen and the
    ///     disappearance's firing.
    /// - Returns: the did-appear and did-disappear events, to attach together.
    public static func timeOnScreen(
        trace: String? = nil,
        report: @escaping @Sendable (_ seconds: TimeInterval, _ disappearance: TriggerFiring) -> Void
    ) -> [TriggeredEvent] {
        let appearedAt = LockedValue<Date?>(nil)
        return [
            TriggeredEvent(.didAppear, trace: trace) { firing in
                appearedAt.withLock { $0 = firing.timestamp }
            },
            TriggeredEvent(.didDisappear, trace: trace) { firing in
                let start = appearedAt.withLock { start -> Date? in
                    defer { start = nil }
                    return start
                }
                guard let start else { return }
                report(max(0, firing.timestamp.timeIntervalSince(start)), firing)
            },
        ]
    }

    /// A did-appear event that reports the screen to a tracking plan, which posts its
    /// screen-view event when the plan lists the screen (and nothing otherwise).
    ///
    /// - Parameters:
    ///   - screen: the screen's name in the plan: `FeedViewController`.
    ///   - plan: the app's tracking plan (`MeasurementEventsPlan.TrackingPlan`).
    ///   - trace: a note for debugging.
    ///   - center: where to post; `.default` unless a test isolates it.
    /// - Returns: the event, to attach.
    public static func screenView(
        _ screen: String, plan: TrackingPlan, trace: String? = nil, to center: NotificationCenter = .default
    ) -> TriggeredEvent {
        TriggeredEvent(.didAppear, trace: trace) { _ in
            plan.reportScreenAppeared(screen, to: center)
        }
    }

    /// ``timeOnScreen(trace:report:)`` posting a measurement event with the duration, in
    /// seconds, as the `Double` arg `duration`, next to `args`.
    ///
    /// - Parameters:
    ///   - name: the event posted; ``timeOnScreenEventName`` by default.
    ///   - type: its event type.
    ///   - args: arguments posted next to `duration`.
    ///   - trace: a note for debugging.
    ///   - center: where to post; `.default` unless a test isolates it.
    /// - Returns: the did-appear and did-disappear events, to attach together.
    public static func postingTimeOnScreen(
        _ name: EventName = timeOnScreenEventName,
        type: EventType = .activity,
        args: [String: any EventValueConvertible] = [:],
        trace: String? = nil,
        to center: NotificationCenter = .default
    ) -> [TriggeredEvent] {
        timeOnScreen(trace: trace) { seconds, _ in
            var args = args
            args["duration"] = seconds
            MeasurementEvent.post(name, type: type, args: args, to: center)
        }
    }
}

extension TriggerDetector {
    /// Attaches an event that fires once, then detaches itself.
    ///
    /// - Parameters:
    ///   - trigger: what has to happen to the object.
    ///   - object: the object; held weakly.
    ///   - trace: a note for debugging.
    ///   - action: what runs, once.
    /// - Returns: the event's id, for ``detach(_:from:)``.
    @discardableResult
    public func attachOnce(
        _ trigger: Trigger, to object: AnyObject, trace: String? = nil,
        action: @escaping @Sendable (TriggerFiring) -> Void
    ) -> UUID {
        attach(.once(trigger, trace: trace, action: action), to: object)
    }

    /// Attaches an event that posts a measurement event when `trigger` is reported.
    ///
    /// - Parameters:
    ///   - name: the measurement event's name.
    ///   - type: its event type.
    ///   - category: its category, when the catalog gives one.
    ///   - args: its arguments.
    ///   - trigger: what has to happen to the object.
    ///   - object: the object; held weakly.
    ///   - trace: a note for debugging.
    ///   - firesOnce: post at most once.
    ///   - center: where to post; `.default` unless a test isolates it.
    /// - Returns: the event's id, for ``detach(_:from:)``.
    @discardableResult
    public func attachPosting(
        _ name: EventName,
        type: EventType = .default,
        category: String? = nil,
        args: [String: any EventValueConvertible] = [:],
        on trigger: Trigger,
        to object: AnyObject,
        trace: String? = nil,
        firesOnce: Bool = false,
        center: NotificationCenter = .default
    ) -> UUID {
        attach(
            .posting(
                name, type: type, category: category, args: args, on: trigger, trace: trace,
                firesOnce: firesOnce, to: center),
            to: object)
    }

    /// Attaches a did-appear event that posts the plan's screen-view event for `screen`.
    ///
    /// - Parameters:
    ///   - screen: the screen's name in the plan.
    ///   - object: the screen's object (its view controller); held weakly.
    ///   - plan: the app's tracking plan.
    ///   - trace: a note for debugging.
    ///   - center: where to post; `.default` unless a test isolates it.
    /// - Returns: the event's id, for ``detach(_:from:)``.
    @discardableResult
    public func attachScreenView(
        _ screen: String, to object: AnyObject, plan: TrackingPlan, trace: String? = nil,
        center: NotificationCenter = .default
    ) -> UUID {
        attach(.screenView(screen, plan: plan, trace: trace, to: center), to: object)
    }

    /// Attaches a time-on-screen pair that posts `name` with a `duration` arg (seconds) each
    /// time the object disappears after appearing.
    ///
    /// - Parameters:
    ///   - object: the screen's object; held weakly.
    ///   - name: the event posted; ``TriggeredEvent/timeOnScreenEventName`` by default.
    ///   - args: arguments posted next to `duration`.
    ///   - trace: a note for debugging.
    ///   - center: where to post; `.default` unless a test isolates it.
    /// - Returns: the ids of the two events.
    @discardableResult
    public func attachTimeOnScreen(
        to object: AnyObject,
        posting name: EventName = TriggeredEvent.timeOnScreenEventName,
        args: [String: any EventValueConvertible] = [:],
        trace: String? = nil,
        center: NotificationCenter = .default
    ) -> [UUID] {
        attach(TriggeredEvent.postingTimeOnScreen(name, args: args, trace: trace, to: center), to: object)
    }
}
