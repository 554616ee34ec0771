import Dispatch
import Foundation
import MeasurementEvents

// The delivery pipeline: what happens to a round of posted events. Its order is one function,
// `run(_:from:trackers:)`, over the aggregator's `pipeline` of steps; every step is in this
// file, and so is the state of the first (`AttributionState`). Everything here runs in the
// delivery context (the aggregator's queue, or the posting thread under the
// synchronous-delivery lock).
//
//   deliver / deliverNow   a round from the inbox (its `drain`): events in posting order,
//                          controls (identity changes, moves to the background) applied at their
//                          places between segments of events; each segment goes through the
//                          steps as a batch
//   1. attribution         `stampAttribution`: identity, session and context stamped by
//                          `AttributionState.stamp` (below the step); session events added where
//                          sessions start or end
//   2. the tracking plan   `checkPlan`: args omitted, events blocked, violations counted,
//                          reported and (by policy) forwarded as `plan/violation` events
//   3. the app's processors  `process(_:with:)`, in order (a step only when there are any)
//   4. consent, readiness, holding  `admit`: the batch goes on now (the usual case: one lock),
//                          or its events are held or discarded (`admitOrHold`). Both rest on
//                          `State.forwardsNow(consent:)`, the one decision; held events come
//                          back after this step (`releaseHeldEvents`)
//   5. personal data       `hashPersonalData`: `pii` args hashed; the clear event is kept for
//                          the trackers that take it in clear
//   6. the trackers        `forward`: each event to each tracker in order, then the trail's
//                          entry (`forwardRecording`, only with a trail); `didReceive(_:)`
//                          just before them
//
// The steps are of one kind (`PipelineStep`, each a function of the batch), and the app's
// processors are one of them: processors inserted after steps 1, 2, 3 and 5
// (`Configuration.processorsAfter`) are steps of that same kind, which is how the tests see an
// event as each step left it. Every step that ends an event (blocked, discarded, held and
// dropped, forwarded) records its `EventTrailEntry` when a trail is set.

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

/// One step of the delivery pipeline (see the head of this file), in the order of
/// `EventAggregator.pipeline`.
enum PipelineStep {
    case attribution
    case plan
    /// Processors, in order: the app's, or those a test inserted after a built-in step.
    case processors([any EventProcessor])
    case admission
    case personalData

    /// The steps in their order, with the app's `processors` (a step only when there are any)
    /// and the processors inserted after each built-in step.
    static func pipeline(
        processors: [any EventProcessor], inserted: [DeliveryStep: [any EventProcessor]]
    ) -> [PipelineStep] {
        func after(_ step: DeliveryStep) -> [PipelineStep] {
            guard let processors = inserted[step], !processors.isEmpty else { return [] }
            return [.processors(processors)]
        }
        return [.attribution] + after(.attribution) + [.plan] + after(.plan)
            + (processors.isEmpty ? [] : [.processors(processors)]) + after(.processors)
            + [.admission, .personalData] + after(.personalData)
    }
}

/// What goes through the pipeline: a segment of a round's events, in order, and what the steps
/// found on each.
struct DeliveryBatch {
    var events: [MeasurementEvent]
    /// The plan's findings on each event, by its place in `events`: only with a trail, and only
    /// once the plan found something in the batch.
    var violations: [[PlanViolation]]?
    /// Each event as it was before its personal data was hashed (nil for those with none), for
    /// the trackers that take it in clear; nil while no event was hashed.
    var clear: [MeasurementEvent?]?

    init(_ events: [MeasurementEvent] = []) { self.events = events }

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

    /// The inbox, and what it calls: the three functions below, reached through `delivery`,
    /// which holds the aggregator weakly (the observers hold the inbox, and must not keep the
    /// aggregator alive); the initialiser sets it.
    static func makeInbox(
        filter: EventFilter?, consent: MeasurementEventsAggregator.Consent, configuration: Configuration,
        delivery: WeakAggregator
    ) -> Inbox {
        Inbox(
            filter: filter, consent: consent, configuration: configuration,
            schedule: { drain in delivery.aggregator?.schedule(drain) },
            deliver: { round in delivery.aggregator?.deliver(&round) },
            deliverNow: { round in delivery.aggregator?.deliverNow(&round) })
    }

    /// The inbox's `schedule`: its `drain` on the queue, after the coalescing delay. The block
    /// holds the aggregator until the drain has delivered.
    func schedule(_ drain: @escaping @Sendable () -> Void) {
        let delay = configuration.deliveryCoalescing
        if delay > 0 {
            queue.asyncAfter(deadline: .now() + delay) { withExtendedLifetime(self, drain) }
        } else {
            queue.async { withExtendedLifetime(self, drain) }
        }
    }

    /// The inbox's `deliverNow` (synchronous delivery): one event or control, on the posting
    /// thread, under the synchronous-delivery lock. (Nothing to finish: no buffer, no bound.)
    func deliverNow(_ round: inout Inbox.Round) {
        synchronousDelivery.lock()
        defer { synchronousDelivery.unlock() }
        deliver(&round)
    }

    /// The inbox's `deliver`: a round through the pipeline, in the delivery context.
    func deliver(_ round: inout Inbox.Round) {
        // While the identity store cannot be read yet, nothing is stamped: the round waits.
        if attribution.heldUntilStoreReadable != nil, !resumeIfStoreReadable() {
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
    /// as the step before left it, then to the trackers. Held events come back after the
    /// admission (`trackers`: those they were admitted to), session events after attribution.
    ///
    /// Not inlined into its three callers: it runs once a batch, and inlined it added about
    /// 5 KB to an app.
    @inline(never)
    func run(_ batch: inout DeliveryBatch, from start: Int = 0, trackers admitted: [any EventTracker]? = nil) {
        var trackers = admitted
        for step in pipeline[start...] {
            guard !batch.events.isEmpty else { return }
            switch step {
            case .attribution:
                stampAttribution(&batch)  // 1
            case .plan:
                checkPlan(&batch)  // 2
            case .processors(let processors):
                process(&batch, with: processors)  // 3, and any inserted after a step
            case .admission:
                trackers = admit(&batch)  // 4
                guard trackers != nil else { return }
            case .personalData:
                hashPersonalData(&batch)  // 5
            }
        }
        guard let trackers, !batch.events.isEmpty else { return }
        forward(&batch, to: trackers)  // 6
    }

    // MARK: 1. Attribution

    /// Stamps the events with identity, session and context, and adds session events where
    /// sessions start or end (when configured).
    func stampAttribution(_ batch: inout DeliveryBatch) {
        var expanded: [MeasurementEvent]?
        var sessionsStarted = 0
        for index in batch.events.indices {
            let (transition, problem) = attribution.stamp(&batch.events[index])
            if let problem { reportStoreProblem(problem) }
            if transition.started != nil { sessionsStarted += 1 }
            if !transition.isEmpty, configuration.sessions.emitsEvents {
                if expanded == nil { expanded = Array(batch.events[..<index]) }
                expanded!.append(contentsOf: sessionEvents(for: transition))
            }
            expanded?.append(batch.events[index])
        }
        if sessionsStarted > 0 { state.withLock { $0.diagnostics.sessionsStarted += sessionsStarted } }
        if let expanded { batch.events = expanded }
    }

    /// Events already stamped (a session's end and start when the app comes back to the
    /// foreground) through the pipeline after attribution.
    func deliverStamped(_ events: [MeasurementEvent]) {
        var batch = DeliveryBatch(events)
        run(&batch, from: afterAttribution)
    }
}

// MARK: 1. Attribution: its state

/// The aggregator's delivery-side knowledge of who, which session and where: it stamps each
/// event as it is delivered, in posting order with identity changes and lifecycle moves, and
/// keeps the identity store up to date.
///
/// Only touched in the aggregator's delivery context (its queue, or the synchronous-delivery
/// lock), one call at a time; ``published`` is what other threads may read.
final class AttributionState: @unchecked Sendable {
    // @unchecked: every mutable property is touched in the delivery context only (see above);
    // `published` has its own lock.
    private let store: any IdentityStore
    /// The store when it is a `FileIdentityStore` (with a hold of this aggregator's own): shared
    /// with the other aggregators of the process on its directory (see `takeSharedIdentity()`).
    private let fileStore: FileIdentityStore?
    /// `SharedIdentityDirectory.identityChanges` when this object last looked at its store's
    /// identity.
    private var seenIdentityChanges: Int64
    private var contents: IdentityStoreContents
    /// What the store holds, as far as this object knows: a save of the same contents is
    /// skipped (the store is app code, and may be slow, like the Keychain). With a shared
    /// `FileIdentityStore`, what this aggregator last saved or read: a field it did not change
    /// since is left as the store holds it (see `merged(_:base:over:)`).
    private var lastSaved: IdentityStoreContents?
    // Unchecked: the dynamic exclusivity check of the mutation each stamp makes cost about 80
    // instructions an event on the delivery thread. Invariant: touched in the delivery context
    // only, one call at a time (above), and `SessionTimeline`'s methods call out to nothing.
    @exclusivity(unchecked) private var timeline: SessionTimeline
    private var context: EventContext
    /// Shared by every event stamped until identity, session or context changes.
    private var storage: AttributionStorage
    /// The latest attribution, for readers on any thread.
    let published: LockedValue<EventAttribution>

    /// What loading found: the consent to start with, and a problem to report.
    struct Restored {
        var consent: Consent?
        var problem: IdentityStoreError?
    }

    private(set) var restored: Restored
    /// While the store may not be read yet (``IdentityStoreError/isNotReadableYet``): what was
    /// delivered meanwhile, held in posting order; `nil` once the store was read. Nothing is
    /// stamped from, or written over, the store until then (see `HeldUntilStoreReadable`).
    var heldUntilStoreReadable: HeldUntilStoreReadable?
    /// The consent the app set while the store could not be read: newer than the stored one.
    private var consentSetWhileUnreadable: Consent?
    /// Whether `stop()` let the store go (`releaseStore()`): nothing is read from it or written
    /// to it until `start()` holds it again (`reattachStore()`).
    private(set) var isReleased = false
    /// Whether a change made since the release was reported as not saved (once a release).
    private var reportedChangeWhileReleased = false

    init(store: any IdentityStore, rules: SessionRules, context: EventContext) {
        let fileStore = (store as? FileIdentityStore)?.withOwnHold()
        self.fileStore = fileStore
        self.store = fileStore ?? store
        // Read before the load: a change saved meanwhile is looked at again.
        self.seenIdentityChanges = SharedIdentityDirectory.identityChanges.value
        let loaded = Self.read(self.store)
        self.contents = loaded.contents
        self.lastSaved = loaded.lastSaved
        self.timeline = SessionTimeline(rules: rules, restored: loaded.contents.session)
        self.context = context
        // A restored session that is still alive goes on: its events carry its id.
        let attribution = EventAttribution(
            identity: loaded.contents.identity, sessionID: loaded.contents.session?.id, context: context)
        self.storage = AttributionStorage(attribution)
        self.published = LockedValue(attribution)
        self.restored = loaded.restored
        self.heldUntilStoreReadable = loaded.isNotReadableYet ? HeldUntilStoreReadable() : nil
        // The anonymous id is made once per install: keep it from the first launch on.
        if !loaded.isNotReadableYet, loaded.lastSaved == nil, let problem = save(), self.restored.problem == nil {
            self.restored.problem = problem
        }
    }

    /// What reading the store gave: the contents to start from (what it held, what could be
    /// recovered from it, or a new identity), what it held as far as a save is concerned (`nil`:
    /// write at once), and what to report.
    private struct Loaded {
        var contents: IdentityStoreContents
        var lastSaved: IdentityStoreContents?
        var restored = Restored()
        /// The store may not be read yet: `contents` is a stand-in, never stamped nor saved.
        var isNotReadableYet = false
    }

    private static func read(_ store: any IdentityStore) -> Loaded {
        var restored = Restored()
        var loaded: IdentityStoreContents?
        do {
            loaded = try store.load()
        } catch let error as IdentityStoreError {
            restored.problem = error
            if error.isNotReadableYet {
                return Loaded(
                    contents: IdentityStoreContents(identity: .anonymous()), restored: restored, isNotReadableYet: true)
            }
            // A damaged store's anonymous id, when it survived: one install keeps one id.
            loaded = error.recovered
        } catch {
            restored.problem = IdentityStoreError(path: "\(type(of: store))", problem: "cannot be read (\(error))")
        }
        // Nothing stored, or a damaged store moved aside: write the identity in force at once.
        var isNew = loaded == nil || restored.problem != nil
        var contents = loaded ?? IdentityStoreContents(identity: .anonymous())
        // The install's salt is made with its identity (or at the first launch of 3.0.0).
        if contents.personalDataSalt == nil {
            contents.personalDataSalt = PersonalDataProcessor.newSalt()
            isNew = true
        }
        restored.consent = contents.consent
        return Loaded(contents: contents, lastSaved: isNew ? nil : loaded, restored: restored)
    }

    /// While the store could not be read: reads it again. When it can be read now, starts from
    /// what it holds (the consent the app set meanwhile replacing the stored one) and returns
    /// what was held with what it found: the consent to put in force (the stored one, else
    /// `configuredConsent`; `nil` when the app set one meanwhile) and a problem to report. `nil`
    /// while it still cannot be read.
    func readStoreAgain(configuredConsent: Consent) -> (held: HeldUntilStoreReadable, restored: Restored)? {
        guard let held = heldUntilStoreReadable, !isReleased else { return nil }
        let loaded = Self.read(store)
        guard !loaded.isNotReadableYet else { return nil }
        heldUntilStoreReadable = nil
        contents = loaded.contents
        lastSaved = loaded.lastSaved
        timeline = SessionTimeline(rules: timeline.rules, restored: contents.session)
        var restored = loaded.restored
        restored.consent = restored.consent ?? configuredConsent
        if let consent = consentSetWhileUnreadable {
            contents.consent = consent
            restored.consent = nil
        }
        rebuild()
        if let problem = save(), restored.problem == nil { restored.problem = problem }
        return (held, restored)
    }

    var currentAttribution: EventAttribution { storage.value }

    /// The salt of this install's personal-data hashes (made at init when the store had none).
    var personalDataSalt: String { contents.personalDataSalt ?? "" }

    /// Stamps `event` with the identity, session and context in force; returns what happened to
    /// sessions (and saves a session that started).
    func stamp(_ event: inout MeasurementEvent) -> (SessionTimeline.Transition, IdentityStoreError?) {
        let transition = timeline.event(at: event.timestamp)
        var problem: IdentityStoreError?
        if !transition.isEmpty {
            rebuild()
            problem = save()
        } else if let saved = contents.session?.lastActivityAt, let last = timeline.current?.lastActivityAt,
            last.timeIntervalSince(saved) >= Self.activitySaveInterval
        {
            // So that a relaunch after a crash (no trip to the background) continues the session.
            problem = save()
        }
        event.attributionStorage = storage
        return (transition, problem)
    }

    /// How stale the session's saved last activity may grow while events keep coming: one
    /// store write a minute at most.
    static let activitySaveInterval: TimeInterval = 60

    /// Applies an identity change made at `date`; returns it as trackers receive it.
    func apply(_ change: IdentityChange, at date: Date, id: UUID) -> (IdentityEvent, IdentityStoreError?) {
        let previous = contents.identity
        contents.identity = previous.applying(change)
        rebuild()
        let problem = save("the identity change")
        return (
            IdentityEvent(
                change: change, id: id, timestamp: date, attribution: storage.value, previousIdentity: previous),
            problem
        )
    }

    func setConsent(_ consent: Consent) -> IdentityStoreError? {
        guard heldUntilStoreReadable == nil else {
            consentSetWhileUnreadable = consent
            return nil
        }
        guard contents.consent != consent else { return nil }
        contents.consent = consent
        return save("the consent (\(consent.rawValue))")
    }

    /// Forgets the user (see `EventAggregator.forgetUser()`): a new anonymous id and salt, no
    /// user, no session; consent and the app's release stay, as they are the install's. Saved at once.
    func forgetUser() -> IdentityStoreError? {
        contents.identity = .anonymous()
        // The old salt would let the new anonymous user's hashes be joined with the old one's.
        contents.personalDataSalt = PersonalDataProcessor.newSalt()
        timeline = SessionTimeline(rules: timeline.rules)
        rebuild()
        if !isReleased { fileStore?.removeSetAside() }
        return save("forgetting the user (a new anonymous id and salt)")
    }

    func enterBackground(at date: Date) -> IdentityStoreError? {
        timeline.enterBackground(at: date)
        return save()
    }

    /// Returns the session that spent too long in the background, now ended.
    func enterForeground(at date: Date, context newContext: EventContext?) -> (Session?, IdentityStoreError?) {
        let transition = timeline.enterForeground(at: date)
        if let newContext { context = newContext }
        rebuild()
        return (transition.ended, transition.ended == nil ? nil : save())
    }

    func replaceContext(_ newContext: EventContext) {
        context = newContext
        rebuild()
    }

    /// Records the app's version and build, and says how they compare with the previous
    /// launch's. A missing version or build is kept as "", so that a launch is always recorded.
    func recordAppRelease(version: String?, build: String?) -> (EventAggregator.AppRelease, IdentityStoreError?) {
        let (version, build) = (version ?? "", build ?? "")
        let hadLaunched = contents.appVersion != nil || contents.appBuild != nil
        if hadLaunched, contents.appVersion == version, contents.appBuild == build { return (.unchanged, nil) }
        let release: EventAggregator.AppRelease =
            hadLaunched
            ? .updated(
                previousVersion: contents.appVersion.flatMap { $0.isEmpty ? nil : $0 },
                previousBuild: contents.appBuild.flatMap { $0.isEmpty ? nil : $0 })
            : .installed
        contents.appVersion = version
        contents.appBuild = build
        return (release, save("the app's release"))
    }

    /// Saves the current state, unless the store already holds it; the session's last activity
    /// is saved with it. After `stop()` nothing is saved: the first `change` made since (in
    /// words) is reported as not saved.
    func save(_ change: String? = nil) -> IdentityStoreError? {
        // Never over a store not read yet: it holds the install's identity.
        guard heldUntilStoreReadable == nil else { return nil }
        contents.session = timeline.current
        if isReleased { return notSavedWhileReleased(change) }
        if contents == lastSaved { return nil }
        do {
            if let fileStore {
                let (mine, base) = (contents, lastSaved)
                take(try fileStore.save { stored in Self.merged(mine, base: base, over: stored) })
            } else {
                try store.save(contents)
            }
            lastSaved = contents
            return nil
        } catch let error as IdentityStoreError {
            return error
        } catch {
            return IdentityStoreError(path: "\(type(of: store))", problem: "cannot be written (\(error))")
        }
    }

    // MARK: Stopped and started again

    /// `stop()`, once what was received was delivered: saves what is not saved yet, then lets
    /// the store go (a `FileIdentityStore`'s hold on its directory, released before `stop()`
    /// returns), so that an aggregator made next on the same store, in this process or another,
    /// takes it up at once. From then on nothing is read from the store or written to it.
    func releaseStore() -> IdentityStoreError? {
        guard !isReleased else { return nil }
        let problem = save()
        isReleased = true
        reportedChangeWhileReleased = false
        fileStore?.release()
        return problem
    }

    /// `start()` after `stop()`: holds the store again and takes the identity and salt saved
    /// meanwhile (by an aggregator that replaced this one, say); what the store cannot give is
    /// reported, and this aggregator goes on with what it has.
    func reattachStore() -> IdentityStoreError? {
        guard isReleased else { return nil }
        isReleased = false
        guard heldUntilStoreReadable == nil else { return nil }
        seenIdentityChanges = SharedIdentityDirectory.identityChanges.value
        do {
            guard let stored = try store.load() else {
                // Nothing there any more: the next save writes everything.
                lastSaved = nil
                return nil
            }
            takeIdentity(storedIn: stored)
            return nil
        } catch let error as IdentityStoreError {
            return error
        } catch {
            return IdentityStoreError(path: "\(type(of: store))", problem: "cannot be read (\(error))")
        }
    }

    /// The report of the first `change` made after `stop()` let the store go: it holds for this
    /// aggregator's own events and is not saved.
    private func notSavedWhileReleased(_ change: String?) -> IdentityStoreError? {
        guard let change, !reportedChangeWhileReleased else { return nil }
        reportedChangeWhileReleased = true
        return IdentityStoreError(
            path: fileStore?.directory.path ?? "\(type(of: store))",
            problem: "is not written by this aggregator any more: stop() let it go, so \(change) holds for the "
                + "events it still delivers and is not saved; make changes on the aggregator in use, or start() "
                + "this one again (later changes are not reported)")
    }

    // MARK: Aggregators sharing a FileIdentityStore

    /// What a save of this aggregator's `mine` writes over what a shared `FileIdentityStore`
    /// holds (`stored`, saved last by any aggregator of the process on its directory): the
    /// fields this aggregator changed since it last saved or read the store (`base`) are its
    /// own; the others stay as they are stored, so that no aggregator undoes another's consent,
    /// release or identity. The identity and the salt go together, and when this aggregator
    /// never read the store (`base` is nil: it was empty or damaged) the stored ones stay: the
    /// first saved is the install's.
    static func merged(
        _ mine: IdentityStoreContents, base: IdentityStoreContents?, over stored: IdentityStoreContents?
    ) -> IdentityStoreContents {
        guard let stored else { return mine }
        var merged = mine
        let keepsStoredIdentity =
            base.map { mine.identity == $0.identity && mine.personalDataSalt == $0.personalDataSalt }
            ?? (stored.personalDataSalt != nil)
        if keepsStoredIdentity {
            merged.identity = stored.identity
            merged.personalDataSalt = stored.personalDataSalt
        }
        guard let base else { return merged }
        if mine.consent == base.consent { merged.consent = stored.consent }
        if mine.session == base.session { merged.session = stored.session }
        if mine.appVersion == base.appVersion, mine.appBuild == base.appBuild {
            merged.appVersion = stored.appVersion
            merged.appBuild = stored.appBuild
        }
        return merged
    }

    /// Takes the identity and salt of what was saved, when the merge kept another aggregator's.
    private func take(_ saved: IdentityStoreContents) {
        guard saved.identity != contents.identity || saved.personalDataSalt != contents.personalDataSalt else {
            return
        }
        contents.identity = saved.identity
        contents.personalDataSalt = saved.personalDataSalt
        rebuild()
    }

    /// Takes the identity and salt another aggregator of the process saved in the shared
    /// `FileIdentityStore` since this one last looked (a reset, an identify or `forgetUser()`
    /// made on that aggregator), unless this one changed its own since it last saved. Called at
    /// the start of every round: one atomic load while nothing changed. The install keeps one
    /// anonymous id and one salt; each aggregator still applies the changes posted on its own
    /// center in order with its events.
    func takeSharedIdentity() {
        guard let fileStore, heldUntilStoreReadable == nil, !isReleased else { return }
        let changes = SharedIdentityDirectory.identityChanges.value
        guard changes != seenIdentityChanges else { return }
        seenIdentityChanges = changes
        if let stored = fileStore.stored { takeIdentity(storedIn: stored) }
    }

    /// Takes the identity and salt of `stored` when another aggregator changed them since this
    /// one last saved or read the store, and this one has no change of its own still to save.
    private func takeIdentity(storedIn stored: IdentityStoreContents) {
        guard let base = lastSaved, contents.identity == base.identity,
            contents.personalDataSalt == base.personalDataSalt,
            stored.identity != base.identity || stored.personalDataSalt != base.personalDataSalt
        else { return }
        lastSaved?.identity = stored.identity
        lastSaved?.personalDataSalt = stored.personalDataSalt
        take(stored)
    }

    private func rebuild() {
        let attribution = EventAttribution(
            identity: contents.identity, sessionID: timeline.current?.id, context: context)
        if attribution != storage.value {
            storage = AttributionStorage(attribution)
            published.withLock { $0 = attribution }
        }
    }
}

extension EventAggregator {
    // MARK: 2. The tracking plan

    /// Checks the events against the plan, omitting args in place as the policy says, leaving
    /// blocked events out and adding `plan/violation` events after the event they describe.
    /// With a trail, the batch keeps each event's violations, and blocked events are recorded
    /// with theirs. Without a plan, only removes the posting sites another aggregator's plan
    /// made the posts carry (see PostSites).
    func checkPlan(_ batch: inout DeliveryBatch) {
        guard let planCheck else {
            // Sites travel only while an aggregator records them.
            guard PostSites.checkingAggregators.value > 0 else { return }
            for index in batch.events.indices { _ = PostSites.take(from: &batch.events[index]) }
            return
        }
        planCheck(self, &batch)
    }

    /// ``checkPlan(_:)`` with a plan: `checker`'s findings applied to the batch. Reached only
    /// through `planCheck`, which `register(_:)` makes.
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

    // MARK: 3. The app's processors

    /// Each event through `processors` in order (the events given their ids first); one that a
    /// processor discards leaves the batch there (counted, and recorded in the trail).
    func process(_ batch: inout DeliveryBatch, with processors: [any EventProcessor]) {
        assignIDs(&batch)
        var discarded = 0
        batch.compactMap { event, violations in
            var event = event
            for processor in processors {
                guard let processed = processor.process(event) else {
                    discarded += 1
                    inbox.trail?.record(
                        EventTrailEntry(event: event, fate: .discardedByProcessor, violations: violations))
                    return nil
                }
                event = processed
            }
            return event
        }
        if discarded > 0 { state.withLock { $0.diagnostics.discarded += discarded } }
    }

    /// Gives the events that have none their ids, in order.
    private func assignIDs(_ batch: inout DeliveryBatch) {
        state.withLock { batch.assignIDs(from: &$0.ids) }
    }
}

// MARK: 4. Consent, readiness and holding

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
    /// The trackers the batch goes to now, in the usual state (consent granted, ready, nothing
    /// held): the whole batch admitted under one lock, its events given their ids. Otherwise
    /// each event is discarded or held (``admitOrHold(_:postedWithoutConsent:violations:)``)
    /// and leaves the batch; nil when none is left. (Locking per event made the delivery thread
    /// contend for the state lock four times per event.)
    func admit(_ batch: inout DeliveryBatch) -> [any EventTracker]? {
        let trackers = state.withLock { state -> [any EventTracker]? in
            guard state.forwardsNow(consent: inbox.consent) else { return nil }
            batch.assignIDs(from: &state.ids)
            state.diagnostics.forwarded += batch.events.count
            return state.trackers
        }
        if let trackers { return trackers }
        assignIDs(&batch)
        var admitted: [any EventTracker]?
        batch.compactMap { event, violations in
            guard let trackers = admitOrHold(.event(event), violations: violations) else {
                return nil
            }
            admitted = trackers
            return event
        }
        return admitted
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
            // The events, in order, through the steps after the admission; identity changes
            // between them.
            var batch = DeliveryBatch()
            for item in items {
                switch item {
                case .event(let event):
                    batch.events.append(event)
                case .identity(let event):
                    self.run(&batch, from: self.afterAdmission, trackers: trackers)
                    batch = DeliveryBatch()
                    self.forward(event, to: trackers)
                }
            }
            self.run(&batch, from: self.afterAdmission, trackers: trackers)
        }
    }

    // MARK: 5. Personal data

    /// The ``Configuration/catalogs`` registered: merged, the processor that hashes their
    /// personal args (minus those sent in clear; none when nothing is left to hash), and the
    /// plan's checker with its step. Reached only through `Configuration.registering`, which
    /// setting the catalogs sets: an app that registers none links none of it.
    static func register(_ configuration: Configuration) -> RegisteredSupport {
        var registered = RegisteredSupport(catalogs: RegisteredCatalogs(configuration.catalogs))
        var args = registered.catalogs.personalDataArgs
        for (name, inClear) in configuration.personalDataSentInClear {
            args[name]?.subtract(inClear)
            if args[name]?.isEmpty == true { args[name] = nil }
        }
        if !args.isEmpty {
            // Without an app-wide salt, the install's salt is used at delivery (see below).
            let salt = configuration.personalDataSalt ?? ""
            registered.personalDataHashing = PersonalDataProcessor(
                personalArgsByEvent: args, treatment: .hash(salt: salt))
        }
        if let checker = PlanChecker(registered.catalogs, policy: configuration.planConformance) {
            registered.planChecker = checker
            registered.planCheck = { aggregator, batch in aggregator.checkPlan(&batch, with: checker) }
        }
        return registered
    }

    /// Hashes the personal args of the events that have any, keeping each of them as it was
    /// for the trackers that take personal data in clear (``PersonalDataInClearTracker``).
    func hashPersonalData(_ batch: inout DeliveryBatch) {
        guard let hashing = personalDataHashing else { return }
        // Without an app-wide salt, the install's (delivery context: the attribution's own).
        let salted =
            configuration.personalDataSalt != nil
            ? hashing
            : PersonalDataProcessor(
                personalArgsByEvent: hashing.personalArgsByEvent, treatment: .hash(salt: attribution.personalDataSalt))
        for index in batch.events.indices where hashing.treatsArgs(of: batch.events[index]) {
            if batch.clear == nil { batch.clear = Array(repeating: nil, count: batch.events.count) }
            batch.clear![index] = batch.events[index]
            // A hashing processor never discards.
            if let hashed = salted.process(batch.events[index]) { batch.events[index] = hashed }
        }
    }

    // MARK: 6. The trackers

    /// Each event to each tracker, in order: in clear to those that take personal data in
    /// clear, and, with a trail, recorded with each tracker's outcome.
    func forward(_ batch: inout DeliveryBatch, to trackers: [any EventTracker]) {
        if batch.clear == nil, !inbox.recordsTrail {
            for index in batch.events.indices { forward(&batch.events[index], to: trackers) }
            return
        }
        for index in batch.events.indices {
            let clear = batch.clear?[index]
            if inbox.recordsTrail {
                forwardRecording(
                    clear ?? batch.events[index], batch.events[index], to: trackers,
                    violations: batch.violations(at: index))
            } else if let clear {
                forward(batch.events[index], clear: clear, to: trackers)
            } else {
                forward(&batch.events[index], to: trackers)
            }
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

    /// `hashed` to each tracker, except `clear` to those that take personal data in clear.
    func forward(_ hashed: MeasurementEvent, clear: MeasurementEvent, to trackers: [any EventTracker]) {
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

/// What registering the catalogs gave an aggregator (`EventAggregator.register(_:)`): nothing
/// to check or hash without catalogs.
struct RegisteredSupport {
    var catalogs = RegisteredCatalogs()
    var personalDataHashing: PersonalDataProcessor?
    var planChecker: PlanChecker?
    var planCheck: ((EventAggregator, inout DeliveryBatch) -> Void)?
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

/// The aggregator, weakly, for the inbox's closures (`EventAggregator.makeInbox`).
final class WeakAggregator: @unchecked Sendable {
    // @unchecked: `aggregator` is written once, in the aggregator's initialiser, before the
    // closures that read it can run (no observer exists yet).
    weak var aggregator: EventAggregator?
}
