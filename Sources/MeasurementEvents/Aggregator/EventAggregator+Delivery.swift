import Dispatch
import Foundation

/// Delivery: everything here runs in the delivery context (the aggregator's queue, or the
/// posting thread under the synchronous-delivery lock).
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

    func deliverAll(_ batch: inout [MeasurementEvent], _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        // The tracking plan, before the processors (see EventAggregator+Conformance.swift).
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

    private func deliverChecked(
        _ batch: inout [MeasurementEvent], _ range: Range<Int>, violations: [Int: [PlanViolation]]
    ) {
        guard !range.isEmpty else { return }
        if let trackers = admitWhole(&batch, range) {
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
            guard state.processors.isEmpty, inbox.consent == .granted, state.ready, state.held.isEmpty else {
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
        for processor in processors {
            guard let processed = processor.process(event) else {
                state.withLock { $0.diagnostics.discarded += 1 }
                inbox.trail?.record(EventTrailEntry(event: event, fate: .discardedByProcessor, violations: violations))
                return
            }
            event = processed
        }
        if let trackers = admitOrHold(.event(event), violations: violations) {
            forward(&event, to: trackers, violations: violations)
        }
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
            if inbox.consent == .granted && state.ready && state.held.isEmpty {
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
        if inbox.trail != nil { return forwardRecording(event, event, to: trackers, violations: violations) }
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
                guard state.ready, self.inbox.consent == .granted else { return ([], []) }
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
