import Dispatch
import Foundation
import MeasurementEvents

// The delivery pipeline: what happens to a round of posted events. Its order is one loop,
// `run(_:from:)`, over the aggregator's `pipeline`: values of one protocol (`DeliveryStep`),
// the built-in ones and those the app inserted around them, then the destinations. Everything
// here runs in the delivery context (the aggregator's queue, or the posting thread under the
// synchronous-delivery lock).
//
//   deliver / deliverNow   a round from the inbox (its `drain`): events in posting order,
//                          controls (identity changes, moves to the background) applied at their
//                          places between segments of events; each segment goes through the
//                          steps as a batch. While the identity store cannot be read yet, rounds
//                          wait (Identity/HeldUntilStoreReadable.swift)
//   1. attribution         Pipeline/AttributionStep.swift: identity, session and context
//                          stamped by `AttributionState` (in that file); session events added
//   2. the tracking plan   Pipeline/PlanStep.swift (only with catalogs): args omitted, events
//                          blocked, violations counted, reported and (by policy) forwarded
//   3. the app's processors  Pipeline/ProcessorsStep.swift (only with processors)
//   4. admission           Pipeline/AdmissionStep.swift: consent and readiness; the batch goes
//                          on now (the usual case: one lock) with the destinations in force, or
//                          its events are held or discarded; held events come back after it
//   5. personal data       Pipeline/PersonalDataStep.swift (only with personal args to hash)
//   6. the destinations    `forward`, below: each event to each destination in order (its
//                          routing, filter, sampling and processors, Destination.swift), then
//                          the trail's entry (`forwardRecording`, only with a trail);
//                          `didReceive(_:)` just before them
//
// After each step, what it discarded is counted and recorded (`DeliveryBatch.process`). Every
// step that ends an event (blocked, discarded, held and dropped, forwarded) records its
// `EventTrailEntry` when a trail is set.

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

    /// The inbox, and what it calls: its drain scheduled on `queue` (Inbox.swift), and the two
    /// functions below, reached through `delivery`,
    /// which holds the aggregator weakly (the observers hold the inbox, and must not keep the
    /// aggregator alive); the initialiser sets it.
    static func makeInbox(
        filter: EventFilter?, consent: MeasurementEventsAggregator.Consent, configuration: Configuration,
        queue: DispatchQueue, delivery: WeakAggregator
    ) -> Inbox {
        Inbox(
            filter: filter, consent: consent, configuration: configuration,
            schedule: Inbox.scheduling(on: queue, after: configuration.deliveryCoalescing, holding: delivery),
            deliver: { round in delivery.aggregator?.deliver(&round) },
            deliverNow: { round in delivery.aggregator?.deliverNow(&round) })
    }

    /// The inbox's `deliverNow` (synchronous delivery): one event or control, on the posting
    /// thread, under the synchronous-delivery lock. (Nothing to finish: no buffer, no bound.)
    ///
    /// An event is refused here once the shutdown began, under the lock: the inbox's own check
    /// comes before the lock (and before the app's clock), and a post that passed it just before
    /// ``shutdown(deadline:)`` refused posts would otherwise reach its trackers after the
    /// shutdown's drain and flush, which take this lock after refusing.
    func deliverNow(_ round: inout Inbox.Round) {
        synchronousDelivery.lock()
        defer { synchronousDelivery.unlock() }
        if !round.events.isEmpty, inbox.refusesPosts.value != 0 {
            for event in round.events { inbox.refuseAfterShutdown(event.name, leavingInFlight: false) }
            round.events = []
            guard !round.controls.isEmpty else { return }
        }
        deliver(&round)
    }

    /// The inbox's `deliver`: a round through the pipeline, in the delivery context.
    func deliver(_ round: inout Inbox.Round) {
        // While the identity store cannot be read yet, nothing is stamped: the round waits.
        if attribution.holdsRounds.value != 0, !resumeIfStoreReadable() {
            holdUntilStoreReadable(&round)
            return
        }
        // What another aggregator of the process on the same store changed: before this round.
        attribution.takeSharedIdentity()
        // Usually no control: the round's array goes through the pipeline as it is (no copy),
        // and comes back to the inbox for its capacity.
        guard !round.controls.isEmpty else {
            var batch = DeliveryBatch()
            swap(&batch.events, &round.events)
            run(&batch)
            swap(&batch.events, &round.events)
            return
        }
        var start = 0
        for control in round.controls {
            var batch = DeliveryBatch(Array(round.events[start..<control.position]))
            run(&batch)
            apply(control)
            start = control.position
        }
        var batch = DeliveryBatch(Array(round.events[start...]))
        run(&batch)
    }

    // MARK: The pipeline

    /// The pipeline: `batch` through the steps from `start` on, in order, each taking the batch
    /// as the step before left it, then to the destinations the admission step set. Held events
    /// come back after the admission (with the destinations they were admitted to), session
    /// events after attribution.
    ///
    /// Not inlined into its three callers: it runs once a batch, and inlined it added about
    /// 5 KB to an app.
    ///
    /// Each step is called where it is in the array: `for step in` copied each one (a retain and
    /// a release per step and round; with synchronous delivery, per post).
    @inline(never)
    func run(_ batch: inout DeliveryBatch, from start: Int = 0) {
        pipeline.steps.withUnsafeBufferPointer { steps in
            for index in start..<steps.count {
                guard !batch.events.isEmpty else { return }
                steps[index].run(&batch, for: self)
                if !batch.discarded.isEmpty { countDiscarded(&batch) }
            }
        }
        guard let destinations = batch.destinations, !batch.events.isEmpty else { return }
        forward(&batch, to: destinations)  // 6
    }

    /// Counts and records what the last step discarded.
    @inline(never)
    func countDiscarded(_ batch: inout DeliveryBatch) {
        let discarded = batch.discarded
        batch.discarded = []
        state.withLock { $0.diagnostics.discarded += discarded.count }
        guard let trail = inbox.trail else { return }
        for (event, violations) in discarded {
            trail.record(EventTrailEntry(event: event, fate: .discardedByProcessor, violations: violations))
        }
    }

    // MARK: 6. The destinations

    /// Each event to each destination, in order. In the usual case (every destination plain, no
    /// catalog routing, no personal data hashed, no trail) each event goes to each tracker as it
    /// is; otherwise each destination decides on its own copy
    /// (``forward(_:clear:to:routes:violations:)``).
    func forward(_ batch: inout DeliveryBatch, to destinations: Destinations) {
        // The purposes' consents, read once: they change only in this context, after what was
        // posted before the change was delivered (ConsentByPurpose.swift). No lock while no
        // purpose has a consent of its own.
        let hasPurposes = hasPurposes.value != 0
        if destinations.arePlain, !hasPurposes, batch.clear == nil, !inbox.recordsTrail, routes.isEmpty {
            let trackers = destinations.trackers
            for index in batch.events.indices { forward(&batch.events[index], to: trackers) }
            return
        }
        let purposes = hasPurposes ? state.withLock { $0.purposes } : [:]
        var stamps = purposes.isEmpty ? nil : PurposeStamps(destinations, purposes: purposes, global: inbox.consent)
        for index in batch.events.indices {
            let hashed = batch.events[index]
            forward(
                hashed, clear: batch.clear?[index] ?? hashed, to: destinations, routes: routes[hashed.name],
                purposes: purposes, stamps: &stamps, violations: batch.violations(at: index))
        }
    }

    /// One event to each tracker, in order. Passed `inout`: reading `batch[index]` (or through
    /// a buffer pointer) copied every field and destroyed the copy, per event; exclusive access
    /// needs no copy.
    func forward(_ event: inout MeasurementEvent, to trackers: [any EventTracker]) {
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

    /// One event to each destination, which decides on its own copy (`Destination.decide`):
    /// `clear` to the trackers that take personal data in clear, `hashed` to the others; each
    /// copy that goes out carries the purposes' consents (`stamps`, when the app set some); with
    /// a trail, each destination's decision, its tracker's outcome and the vendor body recorded
    /// with the event.
    ///
    /// - Parameter routes: the destinations the event's catalog routes it to, if it names any.
    /// - Parameter purposes: the purposes' consents in force.
    @inline(never)
    func forward(
        _ hashed: MeasurementEvent, clear: MeasurementEvent, to destinations: Destinations, routes: Set<String>?,
        purposes: [ConsentPurpose: MeasurementEventsAggregator.Consent], stamps: inout PurposeStamps?,
        violations: [PlanViolation]
    ) {
        didReceive(hashed)
        let recordsTrail = inbox.recordsTrail
        var outcomes: [EventTrailEntry.TrackerOutcome] = []
        for (index, destination) in destinations.all.enumerated() {
            let tracker = destination.tracker
            let given = tracker is PersonalDataInClearTracker ? clear : hashed
            var (copy, decision) =
                destination.isPlain && routes == nil ? (given, .forwarded) : destination.decide(given, routes: routes)
            if var decided = copy, stamps != nil {
                stamps!.stamp(&decided, for: index)
                copy = decided
                let (consent, purpose) = stamps!.decisions[index]
                switch consent {
                case .granted:
                    break
                case .pendingHolding:
                    (copy, decision) = (nil, .waitingForConsent(purpose))
                    if let dropped = holdForPurposes(decided, destination: index) {
                        configuration.problemHandler?(.heldEventDropped(dropped.name))
                    }
                case .denied, .pendingDiscarding:
                    (copy, decision) = (nil, .withoutConsent(purpose))
                    withheld(for: purpose)
                }
            }
            var error: String?
            if let copy {
                do {
                    try tracker.track(copy)
                } catch let thrown {
                    trackerFailed(tracker, on: copy.name, thrown)
                    error = "\(thrown)"
                }
            }
            guard recordsTrail else { continue }
            var outcome = EventTrailEntry.TrackerOutcome(
                tracker: String(describing: type(of: tracker)), destination: destination.name, decision: decision,
                error: error)
            if let copy, let describing = tracker as? any EventBodyDescribing {
                outcome.body = describing.describeBody(for: copy)
            }
            outcomes.append(outcome)
        }
        if recordsTrail {
            var entry = EventTrailEntry(event: hashed, fate: .forwarded, violations: violations, trackers: outcomes)
            entry.purposeConsents = purposes
            inbox.trail?.record(entry)
        }
    }

    func forward(_ event: IdentityEvent, to trackers: [any EventTracker]) {
        didChangeIdentity(event)
        for tracker in trackers {
            call(tracker, on: "(identity)") { try $0.identify(event) }
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

/// The aggregator, weakly, for the inbox's closures (`EventAggregator.makeInbox`).
final class WeakAggregator: @unchecked Sendable {
    // @unchecked: `aggregator` is written once, in the aggregator's initialiser, before the
    // closures that read it can run (no observer exists yet).
    weak var aggregator: EventAggregator?
}
