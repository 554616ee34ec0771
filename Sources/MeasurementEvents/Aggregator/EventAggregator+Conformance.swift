/// The tracking plan at delivery: every event checked against the registered catalogs before
/// the processors run (``EventAggregator/Configuration/planConformance``).
extension EventAggregator {
    /// Checks the events of `range`, omitting args in place as the policy says. Returns `nil`
    /// when the range is to be delivered as it is; otherwise the events to deliver instead
    /// (blocked ones left out, `plan/violation` events added after the event they describe).
    func checkingPlan(
        _ batch: inout [MeasurementEvent], _ range: Range<Int>, with checker: PlanChecker
    ) -> [MeasurementEvent]? {
        var replaced: [MeasurementEvent]?
        var violations: [PlanViolation] = []
        var blocked = 0
        let forwards = checker.policy.forwardsViolationEvents
        // Sites travel only while an aggregator records them (see PostSites).
        let sitesTravel = PostSites.checkingAggregators.value > 0
        for index in range {
            let first = violations.count
            let site = sitesTravel ? PostSites.take(from: &batch[index]) : nil
            let deliver = checker.check(&batch[index], file: site?.file, line: site?.line, into: &violations)
            let found = violations.count > first
            if !deliver { blocked += 1 }
            if replaced == nil, !deliver || (forwards && found) {
                replaced = Array(batch[range.lowerBound..<index])
            }
            if deliver { replaced?.append(batch[index]) }
            if forwards, found {
                for violation in violations[first...] {
                    replaced?.append(Self.violationEvent(violation, at: batch[index]))
                }
            }
        }
        guard !violations.isEmpty else { return nil }
        state.withLock { state in
            for violation in violations { state.diagnostics.planViolations[violation.kind, default: 0] += 1 }
            state.diagnostics.blockedByPlan += blocked
        }
        // Outside the lock: the handler is user code.
        if let handler = configuration.problemHandler {
            for violation in violations { handler(.planViolation(violation)) }
        }
        return replaced
    }

    /// An aggregator without a plan on a center where another one checks a plan: the posts
    /// carry their site, which is not an arg of the event.
    func removingPostSites(_ batch: inout [MeasurementEvent], _ range: Range<Int>) {
        for index in range { _ = PostSites.take(from: &batch[index]) }
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
