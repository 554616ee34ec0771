import Dispatch
import Foundation
import MeasurementEvents

// The delivery pipeline: what happens to a round of posted events, in this order, every step
// in this file. Everything here runs in the delivery context (the aggregator's queue, or the
// posting thread under the synchronous-delivery lock).
//
//   drain / deliverNow     a round from the inbox: events in posting order, controls (identity
//                          changes, moves to the background) at their places among them
//   1. attribution         `deliverSegment`: identity, session and context stamped; session
//                          events added where sessions start or end
//   2. the tracking plan   `checkPlanThenDeliver` / `checkingPlan`: args omitted, events
//                          blocked, violations counted, reported and (by policy) forwarded
//   3. the app's processors  `deliver(_:violations:)`, in order; with none (the usual case)
//                          `admitWhole` admits the whole batch under one lock instead
//   4. consent, readiness, holding  `admitOrHold`, built on `State.forwardsNow(consent:)`, the
//                          one decision; held events come back here (`releaseHeldEvents`)
//   5. personal data       `forward` / `forwardHashingPersonalData`: `pii` args hashed, except
//                          for trackers that take them in clear
//   6. the trackers        `forward`, each in order, then the trail's entry (`forwardRecording`,
//                          only with a trail); `didReceive(_:)` just before them
//
// Every step that ends an event (blocked, discarded, held and dropped, forwarded) records its
// `EventTrailEntry` when a trail is set. Processors can be inserted after steps 1, 2, 3 and 5
// (`Configuration.processorsAfter`), which is how the tests see an event as each step left it.

/// A built-in step of the delivery pipeline after which processors can be inserted
/// (``EventAggregator/Configuration/processorsAfter``).
package enum DeliveryStep: Hashable, Sendable, CaseIterable {
    /// Identity, session and context stamped.
    case attribution
    /// The tracking plan checked: args omitted, blocked events gone.
    case plan
    /// The app's processors run.
    case processors
    /// Personal data hashed: the event the trackers get (except those taking it in clear).
    case personalData
}

extension EventAggregator {
    /// Runs `body` where trackers are called, between two deliveries and never during one, and
    /// waits for it: on the queue (directly when already on it), or under the
    /// synchronous-delivery lock. Asynchronous delivery runs `body` on a queue thread:
    /// `queue.sync` would run it on the caller's thread, and trackers must never run on a
    /// posting (or main) thread.
    package func onDeliveryContext(_ body: @escaping @Sendable () -> Void) {
        switch configuration.delivery {
        case .asynchronous:
            if isOnDeliveryQueue {
                body()
            } else {
                queue.async(execute: body)
                queue.sync {}
            }
        case .synchronous:
            synchronousDelivery.lock()
            defer { synchronousDelivery.unlock() }
            body()
        }
    }

    var isOnDeliveryQueue: Bool {
        DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self)
    }

    /// The inbox's `roundWaiting`: a drain on the queue, after the coalescing delay.
    func scheduleDrain() {
        let delay = configuration.deliveryCoalescing
        if delay > 0 {
            queue.asyncAfter(deadline: .now() + delay) { self.drain(asRequested: true) }
        } else {
            queue.async { self.drain(asRequested: true) }
        }
    }

    /// Delivers everything posted before the call, in order, applying controls (identity
    /// changes, background moves) between the events they were posted between. Posts made
    /// during the round are left to the drain they scheduled.
    ///
    /// Only the drain a post scheduled (`asRequested`) lets posts schedule another, and it
    /// drains one round: when every drain did (those of `waitUntilDelivered` too) and looped
    /// until the buffers were empty, a busy poster scheduled one more timer every few dozen
    /// posts (a dispatch source and four allocations each), and the timers multiplied.
    func drain(asRequested: Bool = false) {
        var round = inbox.nextRound(asRequested: asRequested)
        deliver(&round)
        inbox.finish(&round)
    }

    /// The inbox's `deliverNow` (synchronous delivery): one event or control, on the posting
    /// thread, under the synchronous-delivery lock. (Nothing to finish: no buffer, no bound.)
    func deliverNow(_ round: inout Inbox.Round) {
        synchronousDelivery.lock()
        defer { synchronousDelivery.unlock() }
        deliver(&round)
    }

    private func deliver(_ round: inout Inbox.Round) {
        var start = 0
        for control in round.controls {
            deliverSegment(&round.events, start..<control.position)
            apply(control)
            start = control.position
        }
        deliverSegment(&round.events, start..<round.events.count)
    }

    // MARK: 1. Attribution

    /// Stamps the events of `range` with identity, session and context, adds session events
    /// where sessions start or end (when configured), and delivers them.
    func deliverSegment(_ batch: inout [MeasurementEvent], _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        var expanded: [MeasurementEvent]?
        var sessionsStarted = 0
        for index in range {
            let (transition, problem) = attribution.stamp(&batch[index])
            if let problem { reportStoreProblem(problem) }
            if transition.started != nil { sessionsStarted += 1 }
            if !transition.isEmpty, configuration.sessions.emitsEvents {
                if expanded == nil { expanded = Array(batch[range.lowerBound..<index]) }
                expanded!.append(contentsOf: sessionEvents(for: transition))
            }
            expanded?.append(batch[index])
        }
        if sessionsStarted > 0 { state.withLock { $0.diagnostics.sessionsStarted += sessionsStarted } }
        if var expanded {
            deliverAll(&expanded, 0..<expanded.count)
        } else {
            deliverAll(&batch, range)
        }
    }

    /// Steps 2 to 6 of the pipeline (see the head of this file) for events already stamped:
    /// the plan, then the processors, consent and holding, personal data and the trackers.
    func deliverAll(_ batch: inout [MeasurementEvent], _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        if insertsProcessors {
            var stamped = processed(batch[range], after: .attribution)
            return checkPlanThenDeliver(&stamped, stamped.indices)
        }
        checkPlanThenDeliver(&batch, range)
    }

    // MARK: 2. The tracking plan

    private func checkPlanThenDeliver(_ batch: inout [MeasurementEvent], _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        if let checker = planChecker {
            // For the trail: the violations of the delivered events, by their place in the range.
            var found: [Int: [PlanViolation]] = [:]
            if var replaced = checkingPlan(&batch, range, with: checker, violationsByPlace: &found) {
                return deliverChecked(&replaced, 0..<replaced.count, violations: found)
            }
            return deliverChecked(&batch, range, violations: found)
        } else if PostSites.checkingAggregators.value > 0 {
            removingPostSites(&batch, range)
        }
        deliverChecked(&batch, range, violations: [:])
    }

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

    // MARK: 3. The app's processors, 4. consent, readiness and holding

    private func deliverChecked(
        _ batch: inout [MeasurementEvent], _ range: Range<Int>, violations: [Int: [PlanViolation]]
    ) {
        guard !range.isEmpty else { return }
        if !insertsProcessors, let trackers = admitWhole(&batch, range) {
            // Passed `inout`: reading `batch[index]` (or through a buffer pointer) copied every
            // field and destroyed the copy, per event; exclusive access needs no copy.
            if violations.isEmpty {
                for index in range { forward(&batch[index], to: trackers) }
            } else {
                for index in range {
                    forward(&batch[index], to: trackers, violations: violations[index - range.lowerBound] ?? [])
                }
            }
        } else {
            for index in range { deliver(batch[index], violations: violations[index - range.lowerBound] ?? []) }
        }
    }

    /// In the usual state (consent granted, ready, nothing held, no processors) admits a whole
    /// batch under one lock, giving its events their ids, and returns the trackers; otherwise
    /// returns nil and admits nothing. Locking per event made the delivery thread contend
    /// for the state lock four times per event.
    private func admitWhole(_ batch: inout [MeasurementEvent], _ range: Range<Int>) -> [any EventTracker]? {
        state.withLock { state -> [any EventTracker]? in
            guard state.processors.isEmpty, state.forwardsNow(consent: inbox.consent) else {
                return nil
            }
            for index in range where batch[index].id == MeasurementEvent.placeholderID {
                batch[index].id = state.ids.next()
            }
            state.diagnostics.forwarded += range.count
            return state.trackers
        }
    }

    private func deliver(_ event: MeasurementEvent, violations: [PlanViolation]) {
        let (processors, assignedID) = state.withLock { state -> ([any EventProcessor], UUID?) in
            (state.processors, event.id == MeasurementEvent.placeholderID ? state.ids.next() : nil)
        }
        var event = event
        if let assignedID { event.id = assignedID }
        if insertsProcessors {
            guard let processed = process(event, with: processorsAfter[.plan] ?? [], violations: violations) else {
                return
            }
            event = processed
        }
        guard var event = process(event, with: processors, violations: violations) else { return }
        if insertsProcessors {
            guard let processed = process(event, with: processorsAfter[.processors] ?? [], violations: violations)
            else { return }
            event = processed
        }
        if let trackers = admitOrHold(.event(event), violations: violations) {
            forward(&event, to: trackers, violations: violations)
        }
    }

    /// `event` through `processors` in order; nil when one discards it (counted, and recorded
    /// in the trail).
    private func process(
        _ event: MeasurementEvent, with processors: [any EventProcessor], violations: [PlanViolation]
    ) -> MeasurementEvent? {
        var event = event
        for processor in processors {
            guard let processed = processor.process(event) else {
                state.withLock { $0.diagnostics.discarded += 1 }
                inbox.trail?.record(EventTrailEntry(event: event, fate: .discardedByProcessor, violations: violations))
                return nil
            }
            event = processed
        }
        return event
    }

    /// The events of `events` through the processors inserted after `step`, those discarded left
    /// out (see ``Configuration/processorsAfter``).
    func processed(_ events: ArraySlice<MeasurementEvent>, after step: DeliveryStep) -> [MeasurementEvent] {
        let processors = processorsAfter[step] ?? []
        return events.compactMap { process($0, with: processors, violations: []) }
    }

    /// `event` through the processors inserted after `step`.
    func processed(_ event: MeasurementEvent, after step: DeliveryStep) -> MeasurementEvent? {
        process(event, with: processorsAfter[step] ?? [], violations: [])
    }

    /// The trackers when `item` may go to them now; otherwise discards it (no consent now, or
    /// none when it was posted) or holds it (not ready, consent pending) and returns nil.
    /// (Events posted without consent never get here: the inbox discards them.)
    ///
    /// - Parameter violations: the plan's findings on the event, for the trail.
    func admitOrHold(
        _ item: Held, postedWithoutConsent: Bool = false, violations: [PlanViolation] = []
    ) -> [any EventTracker]? {
        var dropped: Held?
        var fate: EventTrailEntry.Fate?
        let isEvent: Bool
        if case .event = item { isEvent = true } else { isEvent = false }
        let trackers = state.withLock { state -> [any EventTracker]? in
            if postedWithoutConsent || inbox.consent.discards {
                if isEvent {
                    state.diagnostics.discarded += 1
                    fate = .discardedWithoutConsent
                }
                return nil
            }
            // While held events wait for release, newer ones queue behind them to keep order.
            if state.forwardsNow(consent: inbox.consent) {
                if isEvent { state.diagnostics.forwarded += 1 }
                return state.trackers
            }
            dropped = hold(item, in: &state)
            if isEvent { fate = .held }
            return nil
        }
        // Outside the lock: the handler and the observer may read diagnostics or post.
        if let dropped {
            switch dropped {
            case .event(let event):
                configuration.problemHandler?(.heldEventDropped(event.name))
                inbox.trail?.record(EventTrailEntry(event: event, fate: .dropped(reason: Self.heldLimitReason)))
            case .identity:
                configuration.problemHandler?(.heldEventDropped("(identity)"))
            }
        }
        if let fate, let trail = inbox.trail, case .event(let event) = item {
            trail.record(EventTrailEntry(event: event, fate: fate, violations: violations))
        }
        return trackers
    }

    /// The trail's reason for a held event dropped by ``Configuration/heldEventLimit``.
    static let heldLimitReason = "more than the held-event limit were waiting"

    /// Records, for the trail, the end of held events discarded with `fate`.
    func recordDiscarded(_ items: [Held], _ fate: EventTrailEntry.Fate) {
        guard let trail = inbox.trail else { return }
        for case .event(let event) in items { trail.record(EventTrailEntry(event: event, fate: fate)) }
    }

    /// Holds `item`; returns the oldest held item when the limit made it go.
    private func hold(_ item: Held, in state: inout State) -> Held? {
        state.held.append(item)
        defer { state.diagnostics.held = state.held.count }
        guard state.held.count > max(configuration.heldEventLimit, 0) else { return nil }
        state.diagnostics.dropped += 1
        return state.held.removeFirst()
    }

    func releaseHeldEvents() {
        onDeliveryContext {
            // Deliveries also run in this context, so nothing is added to `held` meanwhile.
            let (items, trackers) = self.state.withLock { state -> ([Held], [any EventTracker]) in
                guard state.isOpen(consent: self.inbox.consent) else { return ([], []) }
                defer {
                    state.diagnostics.forwarded +=
                        state.held.filter { if case .event = $0 { true } else { false } }.count
                    state.held.removeAll()
                    state.diagnostics.held = 0
                }
                return (state.held, state.trackers)
            }
            for item in items {
                switch item {
                case .event(let event): self.forward(event, to: trackers)
                case .identity(let event): self.forward(event, to: trackers)
                }
            }
        }
    }

    // MARK: 5. Personal data, 6. the trackers

    /// The merged catalogs of `configuration` and the processor that hashes their personal
    /// args (minus those sent in clear); no processor when nothing is left to hash.
    static func registering(_ configuration: Configuration) -> (RegisteredCatalogs, PersonalDataProcessor?) {
        let registered = RegisteredCatalogs(configuration.catalogs)
        var args = registered.personalDataArgs
        for (name, inClear) in configuration.personalDataSentInClear {
            args[name]?.subtract(inClear)
            if args[name]?.isEmpty == true { args[name] = nil }
        }
        guard !args.isEmpty else { return (registered, nil) }
        // Without an app-wide salt, the install's salt is used at delivery (see below).
        let salt = configuration.personalDataSalt ?? ""
        return (registered, PersonalDataProcessor(personalArgsByEvent: args, treatment: .hash(salt: salt)))
    }

    /// Forwards `clear` hashed, except to the trackers that asked for personal data in clear.
    func forwardHashingPersonalData(
        _ clear: MeasurementEvent, with hashing: PersonalDataProcessor, to trackers: [any EventTracker],
        violations: [PlanViolation] = []
    ) {
        // Without an app-wide salt, the install's (delivery context: the attribution's own).
        let hashing =
            configuration.personalDataSalt != nil
            ? hashing
            : PersonalDataProcessor(
                personalArgsByEvent: hashing.personalArgsByEvent, treatment: .hash(salt: attribution.personalDataSalt))
        // A hashing processor never discards.
        var hashed = hashing.process(clear) ?? clear
        if insertsProcessors {
            guard let processed = processed(hashed, after: .personalData) else { return }
            hashed = processed
        }
        if inbox.recordsTrail { return forwardRecording(clear, hashed, to: trackers, violations: violations) }
        didReceive(hashed)
        for tracker in trackers {
            let event = tracker is PersonalDataInClearTracker ? clear : hashed
            do {
                try tracker.track(event)
            } catch {
                trackerFailed(tracker, on: event.name, error)
            }
        }
    }

    func forward(_ event: borrowing MeasurementEvent, to trackers: [any EventTracker]) {
        var event = copy event
        forward(&event, to: trackers)
    }

    /// ``forward(_:to:)`` for an event the caller has exclusive access to: not copied.
    ///
    /// - Parameter violations: the plan's findings on the event, for the trail.
    func forward(_ event: inout MeasurementEvent, to trackers: [any EventTracker], violations: [PlanViolation] = []) {
        if let hashing = personalDataHashing, hashing.treatsArgs(of: event) {
            return forwardHashingPersonalData(event, with: hashing, to: trackers, violations: violations)
        }
        if insertsProcessors {
            guard let processed = processed(event, after: .personalData) else { return }
            event = processed
        }
        if inbox.recordsTrail { return forwardRecording(event, event, to: trackers, violations: violations) }
        didReceive(event)
        // No closure: capturing the event in one copied it (a retain and a release per field)
        // per event and tracker.
        trackers.withUnsafeBufferPointer { trackers in
            for index in trackers.indices {
                do {
                    try trackers[index].track(event)
                } catch {
                    trackerFailed(trackers[index], on: event.name, error)
                }
            }
        }
    }

    func forward(_ event: IdentityEvent, to trackers: [any EventTracker]) {
        didChangeIdentity(event)
        for tracker in trackers {
            call(tracker, on: "(identity)") { try $0.identify(event) }
        }
    }

    /// ``forward(_:to:)`` with a trail: each tracker's outcome (and body, when it can show it)
    /// recorded with the event. `clear` goes to the trackers that take personal data in clear.
    @inline(never)
    func forwardRecording(
        _ clear: MeasurementEvent, _ hashed: MeasurementEvent, to trackers: [any EventTracker],
        violations: [PlanViolation]
    ) {
        didReceive(hashed)
        var outcomes: [EventTrailEntry.TrackerOutcome] = []
        outcomes.reserveCapacity(trackers.count)
        for tracker in trackers {
            let event = tracker is PersonalDataInClearTracker ? clear : hashed
            var outcome = EventTrailEntry.TrackerOutcome(tracker: String(describing: type(of: tracker)))
            do {
                try tracker.track(event)
            } catch {
                trackerFailed(tracker, on: event.name, error)
                outcome.error = "\(error)"
            }
            if let describing = tracker as? any EventBodyDescribing {
                outcome.body = describing.describeBody(for: event)
            }
            outcomes.append(outcome)
        }
        inbox.trail?.record(
            EventTrailEntry(event: hashed, fate: .forwarded, violations: violations, trackers: outcomes))
    }

    func call(_ tracker: any EventTracker, on name: EventName?, _ body: (any EventTracker) throws -> Void) {
        do {
            try body(tracker)
        } catch {
            trackerFailed(tracker, on: name, error)
        }
    }

    /// Counts and reports a tracker's failure.
    @inline(never)
    func trackerFailed(_ tracker: any EventTracker, on name: EventName?, _ error: any Error) {
        state.withLock { $0.diagnostics.trackerFailures += 1 }
        configuration.problemHandler?(
            .trackerFailed(tracker: String(describing: type(of: tracker)), event: name ?? "(flush)", error: "\(error)"))
    }

    func reportStoreProblem(_ problem: IdentityStoreError) {
        state.withLock { $0.diagnostics.identityStoreFailures += 1 }
        configuration.problemHandler?(.identityStoreFailed(problem))
    }
}

extension EventAggregator {
    /// What waits while consent is pending or the trackers are not ready.
    enum Held {
        case event(MeasurementEvent)
        case identity(IdentityEvent)
    }
}
