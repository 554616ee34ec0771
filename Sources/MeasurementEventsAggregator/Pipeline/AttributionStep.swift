import Foundation
import MeasurementEvents

// The pipeline's first step: each event stamped with the identity, session and context in force
// when it was posted, and session events added where sessions start or end. Its state,
// `AttributionState`, is below the step. An event posted inside a request context
// (`MeasurementRequestContext`) comes with that context's identity and session already set
// (`PostedEvent.makeEvent()`, Posting.swift): it keeps them, gets the device, and leaves the
// aggregator's identity and sessions as they are.

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
    /// The store when it is a `FileIdentityStore` (with a hold of this aggregator's own): shared
    /// with the other aggregators of the process on its directory (see `takeSharedIdentity()`).
    private let fileStore: FileIdentityStore?
    /// `SharedIdentityDirectory.identityChanges` when this object last looked at its store's
    /// identity. An atomic although only the delivery context touches it: it is read every round,
    /// and a class's stored `var` paid the dynamic exclusivity check there (about 40 instructions).
    private let seenIdentityChanges: AtomicCounter
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
    /// The app's foreground time, moved by the lifecycle controls in posting order; events carry
    /// it in their storage (GA4's `engagement_time_msec`, see ForegroundClock.swift).
    private var foreground: ForegroundClock
    /// Shared by every event stamped until identity, session, context or the foreground clock
    /// changes.
    private var storage: AttributionStorage
    /// The latest request contexts' attributions met (`stampInRequestContext`), each with what
    /// it was stamped as and the device of `storage` then: shared by the events of one request,
    /// while those of a few requests come in turn.
    private var recentRequestContexts:
        [(given: AttributionStorage, stamped: AttributionStorage, device: AttributionStorage)] = []
    /// Which of `recentRequestContexts` the next one replaces once it is full: the oldest.
    private var nextRequestContext = 0
    /// How many request contexts `recentRequestContexts` remembers: a server's events come in
    /// runs of two or three of one request between those of the others posting at the same time
    /// (issue 49's benchmark, 8 tasks), and each request's events then share one attribution,
    /// made once, rather than one made at each turn.
    static let recentRequestContextCount = 16
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
    var heldUntilStoreReadable: HeldUntilStoreReadable? {
        didSet { holdsRounds.store(heldUntilStoreReadable == nil ? 0 : 1) }
    }
    /// 1 while ``heldUntilStoreReadable`` is set: what each round reads (with synchronous
    /// delivery, each post), where reading the property paid the dynamic exclusivity check.
    let holdsRounds = AtomicCounter()
    /// The consent the app set while the store could not be read: newer than the stored one.
    private var consentSetWhileUnreadable: Consent?
    /// The purposes' consents the app set meanwhile (`.some(nil)`: cleared), likewise.
    private var purposesSetWhileUnreadable: [String: Consent]??
    /// Whether `stop()` let the store go (`releaseStore()`): nothing is read from it or written
    /// to it until `start()` holds it again (`reattachStore()`).
    private(set) var isReleased = false
    /// Whether a change made since the release was reported as not saved (once a release).
    private var reportedChangeWhileReleased = false

    init(store: any IdentityStore, rules: SessionRules, context: EventContext, startedAt: Date) {
        let fileStore = (store as? FileIdentityStore)?.withOwnHold()
        self.fileStore = fileStore
        self.store = fileStore ?? store
        // Read before the load: a change saved meanwhile is looked at again.
        self.seenIdentityChanges = AtomicCounter(SharedIdentityDirectory.identityChanges.value)
        let loaded = Self.read(self.store)
        self.contents = loaded.contents
        self.lastSaved = loaded.lastSaved
        self.timeline = SessionTimeline(rules: rules, restored: loaded.contents.session)
        self.context = context
        // Taken to be in the foreground from the start, as the session timeline does.
        self.foreground = ForegroundClock(startingAt: startedAt)
        // A restored session that is still alive goes on: its events carry its id.
        let attribution = EventAttribution(
            identity: loaded.contents.identity, sessionID: loaded.contents.session?.id, context: context)
        self.storage = AttributionStorage(attribution, foreground: foreground)
        self.published = LockedValue(attribution)
        self.restored = loaded.restored
        self.heldUntilStoreReadable = loaded.isNotReadableYet ? HeldUntilStoreReadable() : nil
        holdsRounds.store(loaded.isNotReadableYet ? 1 : 0)
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
        if let purposes = purposesSetWhileUnreadable { contents.purposeConsents = purposes }
        rebuild()
        if let problem = save(), restored.problem == nil { restored.problem = problem }
        return (held, restored)
    }

    var currentAttribution: EventAttribution { storage.value }

    /// The salt of this install's personal-data hashes (made at init when the store had none).
    var personalDataSalt: String { contents.personalDataSalt ?? "" }

    /// Stamps `event` with the identity, session and context in force; returns what happened to
    /// sessions (and saves a session that started). An event of a request context (its
    /// attribution preset) keeps that context's identity and session instead, and changes no session.
    func stamp(_ event: inout MeasurementEvent) -> (SessionTimeline.Transition, IdentityStoreError?) {
        if let given = event.attributionStorage {
            event.attributionStorage = stampInRequestContext(given)
            return (SessionTimeline.Transition(), nil)
        }
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

    /// The attribution of an event posted in a request context: the context's identity and
    /// session (`given`), the device and app of the aggregator. The aggregator's own identity and
    /// session timeline are not touched: they are its own user's.
    private func stampInRequestContext(_ given: AttributionStorage) -> AttributionStorage {
        if let known = recentRequestContexts.first(where: { $0.given === given && $0.device === storage }) {
            return known.stamped
        }
        let stamped = AttributionStorage(
            EventAttribution(
                identity: given.value.identity, sessionID: given.value.sessionID, context: storage.value.context))
        // In place of the oldest once there are enough (replaced, not shifted: less code).
        if recentRequestContexts.count < Self.recentRequestContextCount {
            recentRequestContexts.append((given, stamped, storage))
        } else {
            recentRequestContexts[nextRequestContext] = (given, stamped, storage)
            nextRequestContext = (nextRequestContext + 1) % Self.recentRequestContextCount
        }
        return stamped
    }

    /// How stale the session's saved last activity may grow while events keep coming: one
    /// store write a minute at most.
    static let activitySaveInterval: TimeInterval = 60

    /// Applies an identity change made at `date`; returns it as trackers receive it.
    func apply(_ change: IdentityChange, at date: Date, id: UUID) -> (IdentityEvent, IdentityStoreError?) {
        let previous = contents.identity
        contents.identity = previous.applying(change)
        // A new anonymous user: its foreground time starts now.
        if contents.identity.anonymousID != previous.anonymousID { foreground.restart(at: date) }
        rebuild()
        let problem = save("the identity change")
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
        return save("the purposes' consents")
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
        return save("the consent (\(consent.rawValue))")
    }

    /// Forgets the user (see `EventAggregator.forgetUser()`) at `date`: a new anonymous id and
    /// salt, no user, no session, foreground time from zero; consent and the app's release stay,
    /// as they are the install's. Saved at once.
    func forgetUser(at date: Date) -> IdentityStoreError? {
        contents.identity = .anonymous()
        foreground.restart(at: date)
        // The old salt would let the new anonymous user's hashes be joined with the old one's.
        contents.personalDataSalt = PersonalDataProcessor.newSalt()
        timeline = SessionTimeline(rules: timeline.rules)
        rebuild()
        if !isReleased { fileStore?.removeSetAside() }
        return save("forgetting the user (a new anonymous id and salt)")
    }

    func enterBackground(at date: Date) -> IdentityStoreError? {
        timeline.enterBackground(at: date)
        foreground.enterBackground(at: date)
        rebuild()
        return save()
    }

    /// Returns the session that spent too long in the background, now ended.
    func enterForeground(at date: Date, context newContext: EventContext?) -> (Session?, IdentityStoreError?) {
        let transition = timeline.enterForeground(at: date)
        foreground.enterForeground(at: date)
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
        seenIdentityChanges.store(SharedIdentityDirectory.identityChanges.value)
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
        if mine.purposeConsents == base.purposeConsents { merged.purposeConsents = stored.purposeConsents }
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
        // The counter first: it is all a round reads while nothing changed.
        let changes = SharedIdentityDirectory.identityChanges.value
        guard changes != seenIdentityChanges.value, let fileStore, heldUntilStoreReadable == nil, !isReleased else {
            return
        }
        seenIdentityChanges.store(changes)
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
            storage = AttributionStorage(attribution, foreground: foreground)
            published.withLock { $0 = attribution }
        } else if foreground != storage.foreground {
            storage = AttributionStorage(attribution, foreground: foreground)
        }
    }
}
