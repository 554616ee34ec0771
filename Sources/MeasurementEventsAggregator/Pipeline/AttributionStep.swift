import Foundation
import MeasurementEvents

// The pipeline's first step: each event stamped with the identity, session and context in force
// when it was posted, and session events added where sessions start or end. Its state,
// `AttributionState`, is below the step.

/// The attribution step (``EventAggregator/BuiltInStep/attribution``).
struct AttributionStep: DeliveryStep {
    func run(_ batch: inout DeliveryBatch, for aggregator: EventAggregator) {
        aggregator.stampAttribution(&batch)
    }
}

extension EventAggregator {
    /// Stamps the events with identity, session and context, and adds session events where
    /// sessions start or end (when configured).
    func stampAttribution(_ batch: inout DeliveryBatch) {
        // Without a plan of its own, the sites another aggregator's plan made the posts carry
        // (PostSites) go here, before anything else sees the event; the plan's step takes them
        // otherwise. Sites travel only while an aggregator records them.
        if !hasPlanStep, PostSites.checkingAggregators.value > 0 {
            for index in batch.events.indices { _ = PostSites.take(from: &batch.events[index]) }
        }
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
        run(&batch, from: pipeline.afterAttribution)
    }
}

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
    private var contents: IdentityStoreContents
    /// What the store holds, as far as this object knows: a save of the same contents is
    /// skipped (the store is app code, and may be slow, like the Keychain).
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
    /// The purposes' consents the app set meanwhile (`.some(nil)`: cleared), likewise.
    private var purposesSetWhileUnreadable: [String: Consent]??

    init(store: any IdentityStore, rules: SessionRules, context: EventContext) {
        self.store = store
        let loaded = Self.read(store)
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
        guard let held = heldUntilStoreReadable else { return nil }
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
        if let purposes = purposesSetWhileUnreadable { contents.purposeConsents = purposes }
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
        let problem = save()
        return (
            IdentityEvent(
                change: change, id: id, timestamp: date, attribution: storage.value, previousIdentity: previous),
            problem
        )
    }

    /// Remembers the purposes' consents (delivery context).
    func setPurposes(_ purposes: [ConsentPurpose: Consent]) -> IdentityStoreError? {
        let named =
            purposes.isEmpty ? nil : Dictionary(uniqueKeysWithValues: purposes.map { ($0.key.rawValue, $0.value) })
        guard heldUntilStoreReadable == nil else {
            purposesSetWhileUnreadable = named
            return nil
        }
        guard contents.purposeConsents != named else { return nil }
        contents.purposeConsents = named
        return save()
    }

    /// The purposes' consents the store remembers.
    var restoredPurposes: [ConsentPurpose: Consent] {
        Dictionary(
            uniqueKeysWithValues: (contents.purposeConsents ?? [:]).map { (ConsentPurpose(rawValue: $0.key), $0.value) }
        )
    }

    func setConsent(_ consent: Consent) -> IdentityStoreError? {
        guard heldUntilStoreReadable == nil else {
            consentSetWhileUnreadable = consent
            return nil
        }
        guard contents.consent != consent else { return nil }
        contents.consent = consent
        return save()
    }

    /// Forgets the user (see `EventAggregator.forgetUser()`): a new anonymous id and salt, no
    /// user, no session; consent and the app's release stay, as they are the install's. Saved at once.
    func forgetUser() -> IdentityStoreError? {
        contents.identity = .anonymous()
        // The old salt would let the new anonymous user's hashes be joined with the old one's.
        contents.personalDataSalt = PersonalDataProcessor.newSalt()
        timeline = SessionTimeline(rules: timeline.rules)
        rebuild()
        (store as? FileIdentityStore)?.removeSetAside()
        return save()
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
        return (release, save())
    }

    /// Saves the current state, unless the store already holds it; the session's last activity
    /// is saved with it.
    func save() -> IdentityStoreError? {
        // Never over a store not read yet: it holds the install's identity.
        guard heldUntilStoreReadable == nil else { return nil }
        contents.session = timeline.current
        if contents == lastSaved { return nil }
        do {
            try store.save(contents)
            lastSaved = contents
            return nil
        } catch let error as IdentityStoreError {
            return error
        } catch {
            return IdentityStoreError(path: "\(type(of: store))", problem: "cannot be written (\(error))")
        }
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
