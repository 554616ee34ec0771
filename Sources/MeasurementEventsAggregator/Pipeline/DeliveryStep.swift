import Foundation
import MeasurementEvents

/// One step of an aggregator's delivery pipeline. The built-in steps are values of it (see
/// ``EventAggregator/BuiltInStep``), and so are the app's own, inserted before or after any of
/// them:
///
/// ```swift
/// struct DropDebugArgs: DeliveryStep {
///     func run(_ batch: inout DeliveryBatch, for aggregator: EventAggregator) {
///         batch.process { event in
///             var event = event
///             event.args["debug"] = nil
///             return event
///         }
///     }
/// }
/// configuration.insert(DropDebugArgs(), after: .attribution)
/// ```
///
/// Steps run in the aggregator's delivery context (its serial queue, or the posting thread with
/// synchronous delivery), one batch at a time, in posting order: each takes the batch as the
/// step before left it. A step runs only while the batch has events.
public protocol DeliveryStep: Sendable {
    /// Runs the step on `batch`.
    ///
    /// - Parameters:
    ///   - batch: the events, as the step before left them.
    ///   - aggregator: the aggregator whose pipeline runs.
    func run(_ batch: inout DeliveryBatch, for aggregator: EventAggregator)
}

/// What goes through the pipeline: a segment of a round's events, in posting order, and what the
/// steps found on each.
public struct DeliveryBatch: Sendable {
    /// The events, in posting order.
    public internal(set) var events: [MeasurementEvent]
    /// The plan's findings on each event, by its place in `events`: only with a trail, and only
    /// once the plan found something in the batch.
    var violations: [[PlanViolation]]?
    /// Each event as it was before its personal data was hashed (nil for those with none), for
    /// the trackers that take it in clear; nil while no event was hashed.
    var clear: [MeasurementEvent?]?
    /// The events a step discarded, with the plan's findings: counted and recorded in the trail
    /// after the step (`EventAggregator.run`).
    var discarded: [(MeasurementEvent, [PlanViolation])] = []
    /// Where the events go: set by the admission step.
    var destinations: Destinations?

    init(_ events: [MeasurementEvent] = []) { self.events = events }

    /// Each event through `transform`, in order: the event it returns takes its place, `nil`
    /// discards it (counted in ``EventAggregator/Diagnostics-swift.struct/discarded`` and
    /// recorded in the trail as discarded by a processor).
    ///
    /// - Parameter transform: returns the event to pass on, or `nil`.
    public mutating func process(_ transform: (MeasurementEvent) -> MeasurementEvent?) {
        var discarded = self.discarded
        compactMap { event, violations in
            if let kept = transform(event) { return kept }
            discarded.append((event, violations))
            return nil
        }
        self.discarded = discarded
    }

    /// The plan's findings on the event at `index`.
    func violations(at index: Int) -> [PlanViolation] { violations?[index] ?? [] }

    /// Gives the events that have none their ids from `ids`, in order (under the state lock).
    mutating func assignIDs(from ids: inout EventIDGenerator) {
        for index in events.indices where events[index].id == MeasurementEvent.placeholderID {
            events[index].id = ids.next()
        }
    }

    /// Keeps the events for which `transform` returns one (in its place), with what was found
    /// on them; drops the others. `transform` gets each event with the plan's findings on it.
    mutating func compactMap(_ transform: (MeasurementEvent, [PlanViolation]) -> MeasurementEvent?) {
        var kept: [Int] = []
        var events: [MeasurementEvent] = []
        events.reserveCapacity(self.events.count)
        for index in self.events.indices {
            if let event = transform(self.events[index], violations(at: index)) {
                events.append(event)
                kept.append(index)
            }
        }
        if kept.count < self.events.count {
            violations = violations.map { found in kept.map { found[$0] } }
            clear = clear.map { found in kept.map { found[$0] } }
        }
        self.events = events
    }
}

extension EventAggregator {
    /// The built-in steps of the delivery pipeline, in their order; the app's steps go before or
    /// after any of them (``Configuration-swift.struct/insert(_:before:)``,
    /// ``Configuration-swift.struct/insert(_:after:)``).
    ///
    /// 1. ``attribution``: identity, session and context stamped; session events added.
    /// 2. ``plan``: the registered catalogs checked (only with catalogs).
    /// 3. ``processors``: the app's processors (only with processors).
    /// 4. ``admission``: consent and readiness decide whether the events go on now, wait or go.
    /// 5. ``personalData``: personal args hashed (only with catalogs that declare some).
    ///
    /// Then each ``Destination``.
    public enum BuiltInStep: Hashable, Sendable, CaseIterable {
        /// Identity, session and context stamped.
        case attribution
        /// The tracking plan checked: args omitted, blocked events gone, violations reported.
        case plan
        /// The app's processors run.
        case processors
        /// Consent, readiness and holding: events go on, wait or are discarded.
        case admission
        /// Personal data hashed: the event the trackers get (except those taking it in clear).
        case personalData
    }
}

extension EventAggregator.Configuration {
    /// Runs `step` just before the built-in step `builtIn`, after any step inserted there before.
    ///
    /// ```swift
    /// configuration.insert(ProcessorsStep([GlobalContextProcessor(["build": "beta"])]), before: .admission)
    /// ```
    ///
    /// - Parameters:
    ///   - step: the app's step.
    ///   - builtIn: the built-in step it runs before (where it would be when it is absent).
    public mutating func insert(_ step: any DeliveryStep, before builtIn: EventAggregator.BuiltInStep) {
        insertedSteps.append(InsertedStep(step: step, builtIn: builtIn, isAfter: false))
    }

    /// Runs `step` just after the built-in step `builtIn`, after any step inserted there before.
    ///
    /// ```swift
    /// configuration.insert(ProcessorsStep([GlobalContextProcessor(["build": "beta"])]), after: .attribution)
    /// ```
    ///
    /// - Parameters:
    ///   - step: the app's step.
    ///   - builtIn: the built-in step it runs after (where it would be when it is absent).
    public mutating func insert(_ step: any DeliveryStep, after builtIn: EventAggregator.BuiltInStep) {
        insertedSteps.append(InsertedStep(step: step, builtIn: builtIn, isAfter: true))
    }

    /// A step the app inserted, and where.
    struct InsertedStep: Sendable {
        var step: any DeliveryStep
        var builtIn: EventAggregator.BuiltInStep
        var isAfter: Bool
    }
}

/// The aggregator's pipeline: its steps in order, and where events that skip the first steps join
/// it.
struct Pipeline: Sendable {
    let steps: [any DeliveryStep]
    /// Where stamped events (session events) join: just after the attribution step.
    let afterAttribution: Int
    /// Where released held events join: just after the admission step.
    let afterAdmission: Int

    /// The built-in steps present (`plan` and `personalData` with what registering the
    /// catalogs made, `processors` with the app's processors) in their order, with the steps
    /// the app inserted around each.
    init(
        plan: (any DeliveryStep)?, processors: [any EventProcessor], personalData: (any DeliveryStep)?,
        inserted: [EventAggregator.Configuration.InsertedStep]
    ) {
        var steps: [any DeliveryStep] = []
        var afterAttribution = 0
        var afterAdmission = 0
        for builtIn in EventAggregator.BuiltInStep.allCases {
            steps += inserted.filter { $0.builtIn == builtIn && !$0.isAfter }.map(\.step)
            switch builtIn {
            case .attribution: steps.append(AttributionStep())
            case .plan: if let plan { steps.append(plan) }
            case .processors: if !processors.isEmpty { steps.append(ProcessorsStep(processors)) }
            case .admission: steps.append(AdmissionStep())
            case .personalData: if let personalData { steps.append(personalData) }
            }
            if builtIn == .attribution { afterAttribution = steps.count }
            if builtIn == .admission { afterAdmission = steps.count }
            steps += inserted.filter { $0.builtIn == builtIn && $0.isAfter }.map(\.step)
        }
        self.steps = steps
        self.afterAttribution = afterAttribution
        self.afterAdmission = afterAdmission
    }
}
