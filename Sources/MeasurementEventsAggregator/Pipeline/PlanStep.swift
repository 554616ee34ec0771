import Foundation
import MeasurementEvents

// The pipeline's second step: the registered catalogs checked. Made only where the catalogs are
// registered (`EventAggregator.register(_:)`, Catalog/CatalogRegistration.swift): an app that
// registers no catalog links none of the checks.

/// The tracking plan's step (``EventAggregator/BuiltInStep/plan``): the registered catalogs'
/// checker, applied by `EventAggregator.checkPlan(_:with:)`.
///
/// The check is a closure made with the checker (`init(checker:)`, called by the registration
/// only), not a stored checker: a type's conformance to a protocol stays in every app that links
/// its module, with the functions its witness calls, so a `run` that called `checkPlan` itself
/// linked the whole plan check into apps without catalogs (+90 KB for the one-event app).
struct PlanStep: DeliveryStep {
    private let check: @Sendable (inout DeliveryBatch, EventAggregator) -> Void

    init(checker: PlanChecker) {
        check = { batch, aggregator in aggregator.checkPlan(&batch, with: checker) }
    }

    func run(_ batch: inout DeliveryBatch, for aggregator: EventAggregator) {
        check(&batch, aggregator)
    }
}

extension EventAggregator {
    /// `checker`'s findings applied to the batch: args omitted in place as the policy says,
    /// blocked events left out, `plan/violation` events added after the event they describe.
    /// With a trail, the batch keeps each event's violations, and blocked events are recorded
    /// with theirs. The posting sites the events carry are taken here.
    func checkPlan(_ batch: inout DeliveryBatch, with checker: PlanChecker) {
        // Sites travel only while an aggregator records them.
        let sitesTravel = PostSites.checkingAggregators.value > 0
        let trail = inbox.trail
        let forwards = checker.policy.forwardsViolationEvents
        var blockedEvents: [(MeasurementEvent, [PlanViolation])] = []
        // The events to deliver instead, once one is blocked or a violation event is added:
        // until then they are the events of the batch before the current one.
        var replaced: [MeasurementEvent]?
        var violationsByPlace: [[PlanViolation]] = []
        var violations: [PlanViolation] = []
        var blocked = 0
        for index in batch.events.indices {
            let first = violations.count
            let site = sitesTravel ? PostSites.take(from: &batch.events[index]) : nil
            let deliver = checker.check(&batch.events[index], file: site?.file, line: site?.line, into: &violations)
            let found = Array(violations[first...])
            if !deliver { blocked += 1 }
            if replaced == nil, !deliver || (forwards && !found.isEmpty) {
                replaced = Array(batch.events[..<index])
            }
            if deliver {
                replaced?.append(batch.events[index])
                if trail != nil { violationsByPlace.append(found) }
            } else if trail != nil, !found.isEmpty {
                blockedEvents.append((batch.events[index], found))
            }
            if forwards {
                for violation in found {
                    replaced?.append(Self.violationEvent(violation, at: batch.events[index]))
                    if trail != nil { violationsByPlace.append([]) }
                }
            }
        }
        guard !violations.isEmpty else { return }
        state.withLock { state in
            for violation in violations { state.diagnostics.planViolations[violation.kind, default: 0] += 1 }
            state.diagnostics.blockedByPlan += blocked
        }
        // Outside the lock: the handler is user code.
        if let handler = configuration.problemHandler {
            for violation in violations { handler(.planViolation(violation)) }
        }
        for (event, found) in blockedEvents {
            trail?.record(
                EventTrailEntry(event: event, fate: .dropped(reason: "blocked by the plan"), violations: found))
        }
        if let replaced { batch.events = replaced }
        if trail != nil { batch.violations = violationsByPlace }
    }

    /// The `plan/violation` event that reports `violation` to trackers; never the value.
    static func violationEvent(_ violation: PlanViolation, at event: MeasurementEvent) -> MeasurementEvent {
        var args: EventArgs = [
            "violated_event": .string(violation.event.rawValue), "kind": .string(violation.kind.rawValue),
            "rule": .string(violation.rule), "action": .string(violation.action.rawValue),
        ]
        if let arg = violation.arg { args["arg"] = .string(arg) }
        if let type = violation.valueType { args["value_type"] = .string(type) }
        if let file = violation.file { args["file"] = .string(file) }
        if let line = violation.line { args["line"] = .int(line) }
        var report = MeasurementEvent(
            PlanConformancePolicy.violationEventName, type: .activity, args: args, id: MeasurementEvent.placeholderID,
            timestamp: event.timestamp)
        report.attributionStorage = event.attributionStorage
        return report
    }
}
