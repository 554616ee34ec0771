import Foundation
import MeasurementEvents

// The pipeline's fourth step: whether events go on now, wait or go. One decision,
// `State.forwardsNow(consent:)`: consent granted, the trackers ready, nothing held. Held events
// (`State.held`, under the state lock with the trackers and readiness they depend on) come back
// after this step, in order, when it opens (`releaseHeldEvents`).

/// The admission step (``EventAggregator/BuiltInStep/admission``): consent, readiness and holding.
struct AdmissionStep: DeliveryStep {
    func run(_ batch: inout DeliveryBatch, for aggregator: EventAggregator) {
        aggregator.admit(&batch)
    }
}

extension EventAggregator.State {
    /// The one decision of whether events may reach the trackers: consent granted and the
    /// trackers ready. Events go to them now only when nothing is held either (newer events
    /// queue behind held ones, to keep order); otherwise they are held, or discarded when
    /// `consent` discards.
    func isOpen(consent: MeasurementEventsAggregator.Consent) -> Bool { consent == .granted && ready }

    /// ``isOpen(consent:)`` with nothing held: an event may go to the trackers now.
    func forwardsNow(consent: MeasurementEventsAggregator.Consent) -> Bool {
        isOpen(consent: consent) && held.isEmpty
    }
}

extension EventAggregator {
    /// Sets the destinations the batch goes to now, in the usual state (consent granted, ready,
    /// nothing held): the whole batch admitted under one lock, its events given their ids.
    /// Otherwise each event is discarded or held (``admitOrHold(_:postedWithoutConsent:violations:)``)
    /// and leaves the batch. (Locking per event made the delivery thread contend for the state
    /// lock four times per event.)
    func admit(_ batch: inout DeliveryBatch) {
        let destinations = state.withLock { state -> Destinations? in
            guard state.forwardsNow(consent: inbox.consent) else { return nil }
            batch.assignIDs(from: &state.ids)
            state.diagnostics.forwarded += batch.events.count
            return state.destinations
        }
        if let destinations {
            batch.destinations = destinations
            return
        }
        state.withLock { batch.assignIDs(from: &$0.ids) }
        var admitted: Destinations?
        batch.compactMap { event, violations in
            guard let destinations = admitOrHold(.event(event), violations: violations) else {
                return nil
            }
            admitted = destinations
            return event
        }
        batch.destinations = admitted
    }

    /// The destinations when `item` may go to them now; otherwise discards it (no consent now, or
    /// none when it was posted) or holds it (not ready, consent pending) and returns nil.
    /// (Events posted without consent never get here: the inbox discards them.)
    ///
    /// - Parameter violations: the plan's findings on the event, for the trail.
    func admitOrHold(
        _ item: Held, postedWithoutConsent: Bool = false, violations: [PlanViolation] = []
    ) -> Destinations? {
        var dropped: Held?
        var fate: EventTrailEntry.Fate?
        let isEvent: Bool
        if case .event = item { isEvent = true } else { isEvent = false }
        let destinations = state.withLock { state -> Destinations? in
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
                return state.destinations
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
        return destinations
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
            let (items, destinations) = self.state.withLock { state -> ([Held], Destinations) in
                guard state.isOpen(consent: self.inbox.consent) else { return ([], Destinations()) }
                defer {
                    state.diagnostics.forwarded +=
                        state.held.filter { if case .event = $0 { true } else { false } }.count
                    state.held.removeAll()
                    state.diagnostics.held = 0
                }
                return (state.held, state.destinations)
            }
            // The events, in order, through the steps after the admission; identity changes
            // between them.
            var batch = DeliveryBatch()
            batch.destinations = destinations
            for item in items {
                switch item {
                case .event(let event):
                    batch.events.append(event)
                case .identity(let event):
                    self.run(&batch, from: self.pipeline.afterAdmission)
                    batch = DeliveryBatch()
                    batch.destinations = destinations
                    self.forward(event, to: destinations.trackers)
                }
            }
            self.run(&batch, from: self.pipeline.afterAdmission)
        }
    }
}

extension EventAggregator {
    /// What waits while consent is pending or the trackers are not ready. Indirect: an event
    /// or identity change held is boxed (rare, and one allocation), so that the code that
    /// copies a `Held` is a retain rather than every field of the larger of the two (5 KB less
    /// in an app).
    indirect enum Held {
        case event(MeasurementEvent)
        case identity(IdentityEvent)
    }
}
