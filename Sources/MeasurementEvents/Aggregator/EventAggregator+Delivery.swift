import Dispatch
import Foundation

/// Delivery: everything here runs in the delivery context (the aggregator's queue, or the
/// posting thread under the synchronous-delivery lock).
extension EventAggregator {
    func scheduleDrain() {
        let delay = configuration.deliveryCoalescing
        if delay > 0 {
            queue.asyncAfter(deadline: .now() + delay) { self.drainAsRequested() }
        } else {
            queue.async { self.drainAsRequested() }
        }
    }

    /// The drain a post scheduled: clears the request first, so that a post appended after the
    /// buffers are swapped schedules the next one.
    ///
    /// Only this drain clears it, and it drains one round: when every drain cleared it (those
    /// of `waitUntilDelivered` too) and looped until the buffers were empty, each clearing let
    /// a busy poster schedule one more timer (a dispatch source and four allocations each, every
    /// few dozen posts), and the timers multiplied. Now at most one is pending.
    func drainAsRequested() {
        inbox.drainRequested.exchange(0)
        drain()
    }

    /// Delivers one event at once (synchronous delivery), on the posting thread.
    func deliverNow(_ pending: Pending) {
        var batch = [pending]
        synchronousDelivery.lock()
        defer { synchronousDelivery.unlock() }
        deliverSegment(&batch, 0..<batch.count)
    }

    /// Delivers everything posted before the call, in order, applying controls (identity
    /// changes, background moves) between the events they were posted between. Posts made
    /// during the round are left to the drain they scheduled (see ``drainAsRequested()``).
    func drain() {
        var rejected: [MalformedEventError] = []
        var (batch, controls) = inbox.buffers.nextRound(rejected: &rejected)
        for error in rejected { inbox.reject(error, alreadyCounted: true) }
        let events = batch.count + rejected.count
        var start = 0
        for control in controls {
            deliverSegment(&batch, start..<control.position)
            apply(control)
            start = control.position
        }
        deliverSegment(&batch, start..<batch.count)
        inbox.buffers.recycle(events: &batch)
        if events > 0 { inbox.finishInFlight(events) }
        // Posts given back to their threads: a next round releases what those threads do not
        // (one that stopped posting), even if nothing else is posted.
        if inbox.buffers.gaveBack { inbox.requestDrain() }
    }

    /// Stamps the events of `range` with identity, session and context, adds session events
    /// where sessions start or end (when configured), and delivers them.
    func deliverSegment(_ batch: inout [Pending], _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        var expanded: [Pending]?
        var sessionsStarted = 0
        for index in range {
            let (transition, problem) = attribution.stamp(&batch[index].event)
            if let problem { reportStoreProblem(problem) }
            if transition.started != nil { sessionsStarted += 1 }
            if !transition.isEmpty, configuration.sessions.emitsEvents {
                if expanded == nil { expanded = Array(batch[range.lowerBound..<index]) }
                let consent = batch[index].consentAtPost
                expanded!.append(
                    contentsOf: sessionEvents(for: transition).map {
                        Pending(event: $0, needsID: true, consentAtPost: consent)
                    })
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

    /// The events that say a session ended and another started, stamped as their sessions.
    func sessionEvents(for transition: SessionTimeline.Transition) -> [MeasurementEvent] {
        let rules = configuration.sessions
        var events: [MeasurementEvent] = []
        // The session id travels in the attribution (an Int64); no arg repeats it, so that
        // nothing needs an Int wider than 32 bits.
        if let ended = transition.ended {
            var event = MeasurementEvent(
                rules.endedEventName, type: .activity,
                args: ["duration_seconds": .double(max(0, ended.lastActivityAt.timeIntervalSince(ended.startedAt)))],
                id: MeasurementEvent.placeholderID, timestamp: ended.lastActivityAt)
            var endedAttribution = attribution.currentAttribution
            endedAttribution.sessionID = ended.id
            event.attribution = endedAttribution
            events.append(event)
        }
        if let started = transition.started {
            var event = MeasurementEvent(
                rules.startedEventName, type: .activity, id: MeasurementEvent.placeholderID,
                timestamp: started.startedAt)
            event.attribution = attribution.currentAttribution
            events.append(event)
        }
        return events
    }

    func deliverAll(_ batch: inout [Pending], _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        // The tracking plan, before the processors (see EventAggregator+Conformance.swift).
        if let checker = planChecker {
            if var replaced = checkingPlan(&batch, range, with: checker) {
                return deliverChecked(&replaced, 0..<replaced.count)
            }
        } else if PostSites.checkingAggregators.value > 0 {
            removingPostSites(&batch, range)
        }
        deliverChecked(&batch, range)
    }

    private func deliverChecked(_ batch: inout [Pending], _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        if let trackers = admitWhole(&batch, range) {
            // Passed `inout`: reading `batch[index].event` (or through a buffer pointer) copied
            // every field and destroyed the copy, per event; exclusive access needs no copy.
            for index in range { forward(&batch[index].event, to: trackers) }
        } else {
            for index in range { deliver(batch[index]) }
        }
    }

    /// In the usual state (consent granted, ready, nothing held, no processors) admits a whole
    /// batch under one lock, giving its events their ids, and returns the trackers; otherwise
    /// returns nil and admits nothing. Locking per event made the delivery thread contend
    /// with posting threads for the state lock four times per event.
    private func admitWhole(_ batch: inout [Pending], _ range: Range<Int>) -> [any EventTracker]? {
        // In place throughout: `batch[index]` copied the whole event to read one field.
        batch.withUnsafeMutableBufferPointer { batch in
            guard !range.contains(where: { batch[$0].consentAtPost.discards }) else { return nil }
            return state.withLock { state -> [any EventTracker]? in
                guard state.processors.isEmpty, inbox.consent == .granted, state.ready, state.held.isEmpty
                else { return nil }
                for index in range where batch[index].needsID {
                    batch[index].event.id = state.ids.next()
                    batch[index].needsID = false
                }
                state.diagnostics.forwarded += range.count
                return state.trackers
            }
        }
    }

    private func deliver(_ pending: Pending) {
        let (processors, assignedID) = state.withLock { state -> ([any EventProcessor], UUID?) in
            (state.processors, pending.needsID ? state.ids.next() : nil)
        }
        var event = pending.event
        if let assignedID { event.id = assignedID }
        for processor in processors {
            guard let processed = processor.process(event) else {
                state.withLock { $0.diagnostics.discarded += 1 }
                return
            }
            event = processed
        }
        if let trackers = admitOrHold(.event(event), consentAtPost: pending.consentAtPost) {
            forward(event, to: trackers)
        }
    }

    /// The trackers when `item` may go to them now; otherwise discards it (no consent) or holds
    /// it (not ready, consent pending) and returns nil.
    func admitOrHold(_ item: Held, consentAtPost: MeasurementEvents.Consent) -> [any EventTracker]? {
        var dropped: EventName?
        let isEvent: Bool
        if case .event = item { isEvent = true } else { isEvent = false }
        let trackers = state.withLock { state -> [any EventTracker]? in
            if consentAtPost.discards || inbox.consent.discards {
                if isEvent { state.diagnostics.discarded += 1 }
                return nil
            }
            // While held events wait for release, newer ones queue behind them to keep order.
            if inbox.consent == .granted && state.ready && state.held.isEmpty {
                if isEvent { state.diagnostics.forwarded += 1 }
                return state.trackers
            }
            dropped = hold(item, in: &state)
            return nil
        }
        // Outside the lock: the handler may read diagnostics or post.
        if let dropped { configuration.problemHandler?(.heldEventDropped(dropped)) }
        return trackers
    }

    func forward(_ event: borrowing MeasurementEvent, to trackers: [any EventTracker]) {
        var event = copy event
        forward(&event, to: trackers)
    }

    /// ``forward(_:to:)`` for an event the caller has exclusive access to: not copied.
    func forward(_ event: inout MeasurementEvent, to trackers: [any EventTracker]) {
        if let hashing = personalDataHashing, hashing.treatsArgs(of: event) {
            return forwardHashingPersonalData(event, with: hashing, to: trackers)
        }
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

    /// Holds `item`; returns the name of the oldest held event when the limit made it go.
    private func hold(_ item: Held, in state: inout State) -> EventName? {
        state.held.append(item)
        defer { state.diagnostics.held = state.held.count }
        guard state.held.count > max(configuration.heldEventLimit, 0) else { return nil }
        state.diagnostics.dropped += 1
        switch state.held.removeFirst() {
        case .event(let event): return event.name
        case .identity: return "(identity)"
        }
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
