/// The tracking plan at delivery: every event checked against the registered catalogs before
/// the processors run (``EventAggregator/Configuration/planConformance``).
extension EventAggregator {
    /// Checks the events of `range`, omitting args in place as the policy says. Returns `nil`
    /// when the range is to be delivered as it is; otherwise the events to deliver instead
    /// (blocked ones left out, `plan/violation` events added after the event they describe).
    ///
    /// With a trail, `violationsByPlace` receives the violations of each delivered event, by its
    /// place among the events to deliver, and blocked events are recorded with theirs.
    func checkingPlan(
        _ batch: inout [MeasurementEvent], _ range: Range<Int>, with checker: PlanChecker,
        violationsByPlace: inout [Int: [PlanViolation]]
    ) -> [MeasurementEvent]? {
        var blockedEvents: [(MeasurementEvent, [PlanViolation])] = []
        let trail = inbox.trail
        // The place of the next delivered event: in `replaced` once it exists (its events so
        // far are those of the range before it, in the same places), in the range until then.
        var place = 0
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
            if trail != nil, found {
                if deliver {
                    violationsByPlace[place] = Array(violations[first...])
                } else {
                    blockedEvents.append((batch[index], Array(violations[first...])))
                }
            }
            if deliver { place += 1 }
            if forwards, found {
                for violation in violations[first...] {
                    replaced?.append(Self.violationEvent(violation, at: batch[index]))
                    place += 1
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
        for (event, found) in blockedEvents {
            trail?.record(
                EventTrailEntry(event: event, fate: .dropped(reason: "blocked by the plan"), violations: found))
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
