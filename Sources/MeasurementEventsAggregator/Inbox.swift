import Foundation
import MeasurementEvents

// The posting path: concurrency map
//
// An event's way, file by file in the order it is read (the three below, then each step's file
// in Pipeline/, and the tracker's):
//   1. MeasurementEvents/Posting.swift: `MeasurementEvent.post` builds the userInfo and the
//      event's one record (`PostedEvent`, with `makeEvent()`, the public event a drain makes of
//      it, its args checked once); the record's `post` publishes it in this thread's state
//      (`PostedEvent.thisThread`) and posts. Further down: decoding any other notification.
//   2. Inbox.swift (this file): the observer takes the published record (`publishedRecord`,
//      `take`; or decodes one); `admit` counts and filters it with the thread's decision cache,
//      `enqueue` appends it to the thread's buffer, with the poster's request context if any
//      (`requestContext()`, read here on the posting thread), and schedules a drain in the
//      delivery context (`requestRound`, `scheduling(on:after:holding:)`: on the aggregator's
//      queue). `drain`
//      takes the next round
//      (`nextRound` merges every thread's buffer in posting order and makes each record its
//      public event) and hands it to `deliver`: the aggregator's pipeline. At the end of the
//      file, the per-thread buffers, slots and decision caches (`PostingThread`,
//      `PostingBuffer`, `NameDecisionCache`).
//   3. EventAggregator+Delivery.swift: `deliver` and `run` take the round through the delivery
//      pipeline, a loop over its steps (`DeliveryStep` values, each in Pipeline/ with its state:
//      attribution with `AttributionState`, plan, processors, admission with held events,
//      personal data; the app's own around them), then to each destination's tracker. While the
//      identity store cannot be read yet, `deliver` holds rounds (Identity/HeldUntilStoreReadable.swift).
//
// Locks (all `LockedValue`, non-recursive, never held while user code runs, except 1), in the
// order they may be taken; a lock further down is never held while one further up is taken:
//   1. `EventAggregator.synchronousDelivery` (NSRecursiveLock, synchronous delivery only):
//      the delivery context of a `.synchronous` aggregator. It is held while trackers,
//      processors and `didReceive` run, on purpose: it stands for the delivery queue, which
//      an asynchronous aggregator uses instead. Recursive so that a tracker may post.
//   2. `EventAggregator.state`: destinations (with their trackers), observers, readiness, held
//      events, event ids, the diagnostics counted in delivery, whether the identity store could
//      not be read yet. Posting threads never take it.
//   Leaves, each taken alone (no other lock of this list is taken while one is held):
//   3. `Inbox.posting`: the filter and what the posting path counts under a lock (malformed
//      notifications, filtered-out names, identity changes). Taken by a post only on a
//      decision-cache miss, a malformed notification, or with `recordsFilteredOutNames`; by
//      every identity change notification (counted) on its posting thread; by the trail, to
//      read the filter for a filtered-out event's reason (only with a trail).
//   4. `PostingBuffer.guarded` (one per posting thread and aggregator): that thread's records
//      and controls not yet taken, its delivered records to release, its flags.
//   5. `PostingBufferRegistry.buffers`: the list of buffers.
//   6. `AttributionState.published` (Pipeline/AttributionStep.swift): written in the delivery
//      context only, but read from any thread by the public `EventAggregator.currentAttribution`;
//      and the identity store's own locks (delivery context only, or the app's own call of a
//      store): `FileIdentityStore.saveFailing`; `IdentityStoreOwnership.held`, under which
//      `SharedIdentityDirectory.registry` (the process's directories) is taken to claim one,
//      and alone to release one (IdentityStoreOwnership.swift); `SharedIdentityDirectory.file`,
//      taken alone around each read and write of `identity.json`, so that the aggregators of a
//      process on one directory take turns (a write's `fsync` runs under it).
//   7. `PostSites.centers` (a post takes it only while an aggregator checks a plan with post
//      sites) and `StartCheck`'s two locks (until `start()` removes its observer);
//      `StartedCenters.entries` (by `start()`, and by a `StartCheck` reporting).
//   8. `EventIDGenerator.shared`: the ids of events made with `MeasurementEvent.init`'s default
//      id, on any thread (the aggregator's own ids come from `State.ids`, under lock 2).
//      `InFlightRoom.condition` (InFlightRoom.swift): posts waiting for room under the in-flight
//      bound, tasks suspended for it; taken by a post over the bound only, by each round's
//      `finish` and by the shutdown; only atomics are touched under it. `Inbox.isDeliveryContext`:
//      set once by the aggregator, read by a post over the bound.
//   9. `MeasurementRequestContext.state` (the core's MeasurementRequestContext.swift): a context's
//      identity and attributes, taken alone by a post inside that context (`requestContext()`,
//      on the posting thread) and by an identity call inside it.
//  10. Processors' and trackers' own locks, taken inside their calls, under lock 1 with
//      synchronous delivery and under none otherwise: `SamplingProcessor.decisions`,
//      `JSONLinesFileTracker.lock`, each HTTP tracker's (see the map at the head of
//      HTTPTracker.swift); none of them takes a lock of this list.
//
// User code (trackers, processors, `didReceive`, the problem handler, the trail's
// `EventTrailObserver`) is never called under locks 2 to 9. The trail is recorded on the posting
// thread for what a post decided (filtered out, malformed, discarded, dropped in flight) and in
// the delivery context for everything else.
//
// Atomics (C11, `AtomicCounter`), none of which orders anything but what is said here:
//   `received`, `filteredOut`, `discardedAtPost`, `droppedInFlight`, `trimmedContexts`: counters
//     (relaxed).
//   `inFlight`, `overflowing`: the in-flight bound and its episode flag.
//   `refusesPosts`, `PostingBufferRegistry.refusesAppends`: 1 once the shutdown began (see
//     `refusePosts()`: the buffers' flags, under lock 4, are what decide); `refusedAfterShutdown`
//     and `reportedRefusal`: the refused posts and whether the first was reported.
//   `drainRequested` (acquire-release exchange): 1 while a scheduled drain has not started;
//     at most one drain is scheduled at a time.
//   `filterGeneration`: bumped under lock 3 when the filter changes; a cached decision of an
//     older generation is a miss.
//   `consentCode`: the consent in force, the aggregator's one record of it; written only in
//     the delivery context (so a delivery never sees it change), read by posts without a lock.
//   `PostingBufferRegistry.sequence`: every item's number, taken inside its buffer's lock 4.
//   `PostSites.checkingAggregators`: whether a post carries its site (one load per post).
//   `MeasurementRequestContext.live` (static): how many request contexts exist; while 0, a post
//     reads no task-local (one load per post). A bound context is alive, so it is never missed.
//   `MeasurementRequestContext.Snapshot.reported` (exchange): a trimmed context reported once.
//   `Inbox.serials` (static): inbox numbers, never reused.
//   `SharedIdentityDirectory.identityChanges` (static): bumped under `SharedIdentityDirectory.file`
//     by a save that changes a stored identity or salt; loaded once a round by each aggregator
//     on a `FileIdentityStore` (`AttributionState.takeSharedIdentity()`), which then reads the
//     store's under that lock.
//   `me_observer_handoff` (static, C): bumped (acquire-release) before each observer of ours is
//     added, loaded (acquire) first thing in that observer: what `init` and `start()` wrote
//     (this inbox's fields, the start check's state) happens before the observer reads it,
//     visibly to ThreadSanitizer (`NotificationCenter.addObserverHandingOff`).
//
// Queues: `EventAggregator.queue` (serial): the delivery context of an asynchronous
// aggregator; drains, tracker calls, identity and consent changes run there.
//
// Who owns what:
//   - The posting thread: its `PostedEvent.PostingThreadState` (the published record, and the
//     `PostingThread` with its slots and decision caches), reached through one pthread key (the
//     core's); nothing else touches it (the key's exit destructor releases it). An inbox that
//     keeps the published record moves it out of the poster's frame (`Inbox.take`) and
//     unpublishes it, so a second aggregator on the same center decodes that post.
//   - The delivery context (queue or lock 1): `PostingBufferRegistry`'s carry and spare arrays,
//     `AttributionState` (with what is held until the identity store can be read), the order in
//     which trackers see events.
//
// Invariants:
//   - Exactly once: a record is appended to one buffer under lock 4, taken by exactly one drain
//     (the swap empties the buffer), handed out once (records above a round's limit are
//     carried, not handed out), or counted as filtered out, malformed, discarded or dropped in
//     flight, each in one place (`admit`, `enqueue`, `reject`).
//   - Per-thread order: one thread appends to its buffer in posting order, and numbers from
//     `sequence` grow in that order; a round hands items out merged by number.
//   - Identity between the events it was posted between: an identity change is a control in
//     the same buffer and the same numbering; the round applies it at its place among the events.
//   - No post waits for delivery: a post takes lock 4 of its own thread only (lock 3 on a
//     decision-cache miss), and the drain holds lock 4 only to swap arrays. The one exception is
//     chosen by the app: over the in-flight bound with `InFlightLimitBehavior.wait`, a post
//     waits (bounded) for a round to make room, never in the delivery context.
//   - After the shutdown began, no record is appended: a buffer refuses under lock 4, so a post
//     either appended before (and the shutdown's drain takes it) or is refused and counted.

/// The posting path, one per aggregator, with a two-sided interface. Posting threads hand it
/// notifications (``receive(_:legacyAQS:)``) and controls (``receive(_:)``: identity changes, moves to
/// the background); in the delivery context its ``drain(asRequested:)`` takes a round of work
/// (``nextRound(asRequested:)``) and hands it to the pipeline.
///
/// It owns the posting threads' buffers and their registry, the decision caches' generation,
/// the filter, the consent in force, the in-flight bound and the posting path's counters. It
/// knows nothing of the aggregator: it reaches it through the closures given at init (run a
/// drain in the delivery context; deliver a round; with synchronous delivery, deliver one event
/// now), which `EventAggregator.makeInbox` makes (EventAggregator+Delivery.swift).
final class Inbox: Sendable {
    private static let serials = AtomicCounter()

    let configuration: EventAggregator.Configuration
    /// ``EventAggregator/Configuration/trail``, checked once wherever an event's fate is known.
    let trail: (any EventTrailObserver)?
    /// Whether there is a trail: the one check on every path, a flag since comparing the
    /// optional existential with `nil` copied it (a retain and a release per post).
    let recordsTrail: Bool
    let posting: LockedValue<Posting>
    private let schedule: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let deliver: @Sendable (inout Round) -> Void
    private let deliverNow: @Sendable (inout Round) -> Void
    /// Whether there is no clock: checked first, since copying the optional existential costs
    /// more than reading the time.
    let usesSystemClock: Bool

    /// This inbox's number, for the posting threads' slots.
    let serial = Inbox.serials.add(1)
    let buffers = PostingBufferRegistry()

    let received = AtomicCounter()
    let filteredOut = AtomicCounter()
    /// Admitted while the consent in force discarded events: never queued.
    let discardedAtPost = AtomicCounter()
    let droppedInFlight = AtomicCounter()
    /// Request contexts over their limits, reported.
    let trimmedContexts = AtomicCounter()
    /// Records queued (asynchronous delivery) and not yet handed out by a round.
    let inFlight = AtomicCounter()
    /// 1 from the first drop of an overflow episode until the in-flight count is back under
    /// half the limit: a problem is reported once per episode.
    let overflowing = AtomicCounter()
    /// 1 while a drain is scheduled and has not yet started its round.
    let drainRequested = AtomicCounter()
    /// Posts waiting for room under the in-flight bound (InFlightRoom.swift).
    let room = InFlightRoom()
    /// 1 once `EventAggregator.shutdown(deadline:)` began: posts are refused (asynchronous
    /// delivery: by their buffers, see ``refusePosts()``; synchronous: here).
    let refusesPosts = AtomicCounter()
    /// Posts refused since then, and whether the first was reported.
    let refusedAfterShutdown = AtomicCounter()
    private let reportedRefusal = AtomicCounter()
    /// Whether the calling thread is the aggregator's delivery context (set by the aggregator,
    /// read by a post over the bound only): a post made there never waits for room, since only
    /// the delivery context makes it.
    let isDeliveryContext = LockedValue<@Sendable () -> Bool>({ false })
    /// Bumped whenever the filter changes: cached decisions of older generations are misses.
    let filterGeneration = AtomicCounter()
    let consentCode: AtomicCounter

    /// - Parameters:
    ///   - schedule: runs a drain in the delivery context after the coalescing delay, called on a
    ///     posting thread when a round is waiting and no drain is scheduled (an aggregator's:
    ///     ``scheduling(on:after:holding:)``).
    ///   - deliver: what a drain hands its round to, in the delivery context: the aggregator's
    ///     pipeline (`EventAggregator.deliver(_:)`, EventAggregator+Delivery.swift).
    ///   - deliverNow: synchronous delivery: each round of one event or control, on the
    ///     posting thread (`EventAggregator.deliverNow(_:)`: `deliver` under its lock).
    init(
        filter: EventFilter?, consent: Consent, configuration: EventAggregator.Configuration,
        schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
        deliver: @escaping @Sendable (inout Round) -> Void,
        deliverNow: @escaping @Sendable (inout Round) -> Void
    ) {
        posting = LockedValue(Posting(filter: filter))
        consentCode = AtomicCounter(consent.code)
        self.configuration = configuration
        trail = configuration.trail
        recordsTrail = configuration.trail != nil
        self.schedule = schedule
        self.deliver = deliver
        self.deliverNow = deliverNow
        usesSystemClock = configuration.clock == nil
    }

    // MARK: Posting side

    /// Observes `center`: events (and, if `legacyAQS`, the Objective-C library's notifications)
    /// and identity changes, each handed to ``receive(_:legacyAQS:)`` or ``receiveIdentity(_:)`` on
    /// the posting thread. No queue: on Linux one makes the poster wait for it to drain. The
    /// observers hold the inbox, which does not keep the aggregator alive.
    ///
    /// - Returns: the observers, for `removeObserver`.
    /// Each observer acquires what this thread published (``ObserverHandOff``) before it reads
    /// anything of the inbox: the two calls are written in place rather than through
    /// `addObserverHandingOff`, whose extra closure cost 16 instructions a post.
    func observe(_ center: NotificationCenter, legacyAQS: Bool) -> [any NSObjectProtocol] {
        ObserverHandOff.publish()
        var observers = [
            center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { [self] in
                ObserverHandOff.receive()
                receive($0, legacyAQS: false)
            },
            center.addObserver(forName: .measurementIdentity, object: nil, queue: nil) { [self] in
                ObserverHandOff.receive()
                receiveIdentity($0)
            },
        ]
        if legacyAQS {
            observers.append(
                center.addObserver(forName: .legacyAQSEvent, object: nil, queue: nil) { [self] in
                    ObserverHandOff.receive()
                    receive($0, legacyAQS: true)
                })
        }
        return observers
    }

    /// Receives one notification: the record its poster published on this thread when it is
    /// that post (nothing to decode), otherwise the record decoded from its userInfo. Either
    /// way, `admit` and `enqueue` do the rest.
    func receive(_ notification: Notification, legacyAQS: Bool) {
        let state = PostedEvent.thisThread
        let thread = PostingThread.of(state)
        if !legacyAQS, let record = Self.publishedRecord(in: state, carrying: notification) {
            // Read in place: the record is copied only when it is kept.
            guard let slot = admit(record.pointee.name, isLegacyAQS: false, on: thread) else { return }
            return enqueue(in: slot, record.pointee.name) { Self.take(record, publishedIn: state) }
        }
        receiveDecoding(notification, legacyAQS: legacyAQS, on: thread)
    }

    /// The record that the post in progress on the thread of `state` published
    /// (`PostedEvent.post(_:identifiedBy:to:)`, Posting.swift), if `notification` carries the
    /// very userInfo that post is posting; otherwise nil, and the caller decodes the
    /// notification, which gives the same record. Valid only while the observer runs; read in
    /// place (a copy retains and releases every field).
    ///
    /// Invariant (the poster's): it holds its userInfo until `post` returns, so while it is
    /// published no other dictionary storage can have its identity; a dictionary with the same
    /// identity shares its storage, hence its contents. A copy of the userInfo (same storage)
    /// matches; one bridged to or from `NSDictionary`, or rebuilt, does not, and is decoded.
    @inline(__always)
    private static func publishedRecord(
        in state: UnsafeMutablePointer<PostedEvent.PostingThreadState>, carrying notification: borrowing Notification
    ) -> UnsafeMutablePointer<PostedEvent>? {
        guard let record = state.pointee.published.record else { return nil }
        // The identity without binding a copy of the dictionary (a retain and a release).
        guard notification.userInfo.map({ PostedEvent.identity(of: $0) }) == state.pointee.published.userInfo else {
            return nil
        }
        return record
    }

    /// Takes the published `record` out of the poster's frame, to keep it: moved, not copied (a
    /// copy retained every field, which the poster then released: about 250 instructions a kept
    /// post). The poster is left with an empty record to destroy, and nothing is published any
    /// more on the thread of `state`, so that another aggregator observing the same post decodes
    /// its userInfo, which gives the same record.
    @inline(__always)
    private static func take(
        _ record: UnsafeMutablePointer<PostedEvent>,
        publishedIn state: UnsafeMutablePointer<PostedEvent.PostingThreadState>
    ) -> PostedEvent {
        state.pointee.published.record = nil
        var taken = PostedEvent.empty
        swap(&taken, &record.pointee)
        return taken
    }

    /// ``receive(_:legacyAQS:)`` of a notification whose poster published no record. Not
    /// inlined, like the synchronous delivery and the trail's records below: kept out of
    /// `receive`, they leave the code a published post runs together, and a post misses the
    /// instruction cache less (cachegrind's model: 111 misses a filtered-out post before, 81
    /// after; allowed 174, 150; the same instructions). Benchmarks/README.md, "What an app does
    /// not call".
    @inline(never)
    private func receiveDecoding(_ notification: Notification, legacyAQS: Bool, on thread: PostingThread) {
        // Any other notification: its name is read and filtered first, then the rest decoded.
        // The keys only now: passing them to every call copied their two strings (170
        // instructions a post).
        let keys: NotificationKeys = legacyAQS ? .legacyAQS : .standard
        let name: EventName
        let rest: NotificationKeys.Values
        do {
            (name, rest) = try PostedEvent.readName(of: notification, keys: keys)
        } catch {
            return reject(error)
        }
        guard let slot = admit(name, isLegacyAQS: legacyAQS, on: thread) else { return }
        do {
            let record = try PostedEvent(name: name, rest: rest, keys: keys, notificationName: notification.name)
            enqueue(in: slot, name) { record }
        } catch {
            reject(error, alreadyCounted: true, name: name)
        }
    }

    /// Receives an identity change notification: decoded, counted, and queued as a control.
    func receiveIdentity(_ notification: Notification) {
        let change: IdentityChange
        do {
            change = try IdentityChange(notification: notification)
        } catch {
            posting.withLock { $0.malformedIdentityChanges += 1 }
            configuration.problemHandler?(.malformedIdentityChange(error))
            return
        }
        posting.withLock { $0.identityChanges += 1 }
        // Inside a request context (a raw notification: `IdentityChange.post` posts none there),
        // the change is the context's, not this aggregator's.
        if let context = MeasurementRequestContext.current { return context.apply(change) }
        receive(.identity(change))
    }

    /// Queues `action` behind the events received so far on this thread, in the same numbering,
    /// or hands it over at once with synchronous delivery.
    func receive(_ action: Control.Action) {
        let control = Control(action: action, timestamp: now(), consentAtPost: consent)
        switch configuration.delivery {
        case .asynchronous:
            let buffer = postingSlot(on: .of(PostedEvent.thisThread)).buffer
            followUp(buffer.append(control, numberedBy: buffers.sequence), in: buffer)
        case .synchronous:
            var round = Round(controls: [control])
            deliverNow(&round)
        }
    }

    /// The one place a record is counted, filtered and admitted, by its name: returns this
    /// thread's slot when the record is to be queued.
    @inline(__always)
    private func admit(_ name: EventName, isLegacyAQS: Bool, on thread: PostingThread) -> PostingThread.Slot? {
        let slot = postingSlot(on: thread)
        let decision = decision(on: name, cachedIn: slot.decisions)
        received.add(1)
        // A decoded record's name was checked by decoding; a published one's is checked here.
        guard decision.isValid else {
            rejectInvalidName(name, notificationName: isLegacyAQS ? .legacyAQSEvent : .measurementEvent)
            return nil
        }
        guard decision.allowed else {
            filterOut(name)
            return nil
        }
        guard !consent.discards else {
            discardedAtPost.add(1)
            if recordsTrail { record(name, .discardedWithoutConsent) }
            return nil
        }
        return slot
    }

    /// The one place an admitted record is queued (or delivered at once), stamped with the
    /// time it was received unless it carries one.
    @inline(__always)
    private func enqueue(in slot: PostingThread.Slot, _ name: EventName, _ record: () -> PostedEvent) {
        switch configuration.delivery {
        case .asynchronous:
            guard admitInFlight(in: slot) else {
                if recordsTrail { recordDroppedInFlight(name) }
                return
            }
            // Read before the buffer's lock: a configured clock is the app's code.
            let time = now()
            let context = requestContext()
            let appended = slot.buffer.append(numberedBy: buffers.sequence, receivedAt: time, in: context, record)
            if appended.refused { return refuseAfterShutdown(name, leavingInFlight: true) }
            followUp(appended, in: slot.buffer)
        case .synchronous:
            deliverAtOnce(record(), name, in: requestContext())
        }
    }

    /// The request context of the post in progress, read here, on the posting thread, since
    /// delivery runs later elsewhere; what it left out is reported the first time. Outside every
    /// context (an app), one atomic load (`MeasurementRequestContext.current`).
    @inline(__always)
    private func requestContext() -> MeasurementRequestContext.Snapshot? {
        guard let context = MeasurementRequestContext.current else { return nil }
        return snapshot(of: context)
    }

    @inline(never)
    private func snapshot(of context: MeasurementRequestContext) -> MeasurementRequestContext.Snapshot {
        let snapshot = context.snapshot
        if let trimmed = snapshot.takeTrimmed() {
            trimmedContexts.add(1)
            // On the posting thread, outside every lock: the handler is user code.
            configuration.problemHandler?(.requestContextTrimmed(trimmed))
        }
        return snapshot
    }

    /// Delivers `record` at once (synchronous delivery); not inlined (see `receiveDecoding`).
    /// `consuming`: passed by value, the record was copied field by field (about 300
    /// instructions a synchronous post).
    @inline(never)
    private func deliverAtOnce(
        _ record: consuming PostedEvent, _ name: EventName, in context: MeasurementRequestContext.Snapshot?
    ) {
        if refusesPosts.value != 0 { return refuseAfterShutdown(name, leavingInFlight: false) }
        if record.timestamp == nil { record.timestamp = now() }
        if let context { record.requestContext = context }
        do {
            var round = Round(events: [try record.makeEvent()])
            deliverNow(&round)
        } catch {
            reject(error, alreadyCounted: true, name: name)
        }
    }

    /// The trail of a post dropped by the in-flight bound; not inlined (see `receiveDecoding`).
    @inline(never)
    private func recordDroppedInFlight(_ name: EventName) {
        record(name, .dropped(reason: "more than \(configuration.maximumInFlightEvents) events in flight"))
    }

    /// This thread's buffer and decision cache for this inbox.
    @inline(__always)
    private func postingSlot(on thread: PostingThread) -> PostingThread.Slot {
        thread.slot(for: serial) { buffers.register($0) }
    }

    /// Whether the filter keeps `name` and whether the name is valid: from this thread's cache,
    /// or worked out (under the posting lock, for the filter) and remembered.
    @inline(__always)
    private func decision(on name: EventName, cachedIn cache: NameDecisionCache) -> NameDecisionCache.Decision {
        if let decision = cache.decision(for: name.rawValue, generation: filterGeneration.value) {
            return decision
        }
        return decideAndRemember(name, in: cache)
    }

    @inline(never)
    private func decideAndRemember(_ name: EventName, in cache: NameDecisionCache) -> NameDecisionCache.Decision {
        // The generation is read with the filter it belongs to: a change bumps it under the lock.
        let (filter, generation) = posting.withLock { ($0.filter, filterGeneration.value) }
        let decision = NameDecisionCache.Decision(
            allowed: filter?.allows(name.rawValue) == true, isValid: name.validationFailure == nil)
        cache.remember(decision, for: name.rawValue, generation: generation)
        // Reported once per name, the first time any thread decides it: later posts of the
        // name hit the cache and never come here (a cache collision comes back, and finds the
        // name reported). Outside the lock: the handler is user code.
        if decision.isValid, !decision.allowed, configuration.problemHandler != nil,
            posting.withLock({ $0.reportedFilteredOut.insert(name).inserted })
        {
            configuration.problemHandler?(.filteredOut(name))
        }
        return decision
    }

    /// What an append asks for: a round, and releasing some of this thread's delivered records
    /// (64 at most, so that no post pays for a whole round).
    @inline(__always)
    private func followUp(_ appended: PostingBuffer.Appended, in buffer: PostingBuffer) {
        if appended.requestsDrain { requestRound() }
        if appended.hasDelivered { buffer.releaseDelivered(upTo: 64) }
    }

    /// Schedules a drain (``drain(asRequested:)``, in the delivery context), unless one is
    /// scheduled and has not started its round yet: that drain clears the flag (an exchange, so
    /// that it sees every item appended before the flag was set) before it takes the buffers.
    @inline(__always)
    func requestRound() {
        if drainRequested.exchange(1) == 0 { scheduleDrain() }
    }

    /// Not inlined (see `receiveDecoding`): the closure it makes stays out of `receive`.
    @inline(never)
    private func scheduleDrain() {
        schedule { [self] in drain(asRequested: true) }
    }

    /// An aggregator's `schedule`: `drain` on its delivery `queue` after `delay`. The block holds
    /// the aggregator until the drain has delivered (the inbox holds it only weakly); nothing is
    /// scheduled once it is gone.
    static func scheduling(
        on queue: DispatchQueue, after delay: TimeInterval, holding delivery: WeakAggregator
    ) -> @Sendable (@escaping @Sendable () -> Void) -> Void {
        { drain in
            guard let aggregator = delivery.aggregator else { return }
            let block: @Sendable () -> Void = { withExtendedLifetime(aggregator, drain) }
            if delay > 0 {
                queue.asyncAfter(deadline: .now() + delay, execute: block)
            } else {
                queue.async(execute: block)
            }
        }
    }

    /// Whether one more record may wait for delivery; otherwise see ``admitOverLimit(in:)``.
    @inline(__always)
    private func admitInFlight(in slot: PostingThread.Slot) -> Bool {
        if inFlight.add(1) < Int64(clamping: configuration.maximumInFlightEvents) { return true }
        inFlight.add(-1)
        return admitOverLimit(in: slot)
    }

    /// A post over the in-flight bound: admitted on the room an `async` post reserved for it
    /// (``postHoldingReservedRoom(_:)``), or once there is room if the configuration waits
    /// (``EventAggregator/InFlightLimitBehavior``); otherwise dropped (the newest), counted,
    /// and the first drop of an episode reported to the problem handler. Not inlined: only
    /// a post over the bound comes here.
    @inline(never)
    private func admitOverLimit(in slot: PostingThread.Slot) -> Bool {
        if slot.holdsReservedRoom {
            // The reservation's count becomes this record's.
            slot.holdsReservedRoom = false
            return true
        }
        if case .wait(let seconds) = configuration.whenInFlightLimitIsReached,
            !isDeliveryContext.withLock({ $0 })(),
            room.wait(
                until: Date().addingTimeInterval(seconds),
                tryAdmit: { closed in
                    // Closed: admitted, for its buffer to refuse and count it.
                    guard closed else { return reserveRoom() }
                    inFlight.add(1)
                    return true
                })
        {
            return true
        }
        droppedInFlight.add(1)
        if overflowing.exchange(1) == 0 {
            // On the posting thread, outside every lock: the handler is user code.
            configuration.problemHandler?(.inFlightLimitReached(limit: configuration.maximumInFlightEvents))
        }
        return false
    }

    /// Counts one more record in flight if that keeps the count under the bound.
    func reserveRoom() -> Bool {
        if inFlight.add(1) < Int64(clamping: configuration.maximumInFlightEvents) { return true }
        inFlight.add(-1)
        return false
    }

    /// An `async` post's wait (`EventAggregator.post(_:type:category:args:file:line:)`):
    /// suspends until one more record fits under the bound, and counts it (the caller then
    /// posts with ``postHoldingReservedRoom(_:)``). Returns `false`, reserving nothing, once
    /// posts are refused. Synchronous delivery has no bound: returns at once.
    func reserveRoomWaiting() async -> Bool {
        guard configuration.delivery == .asynchronous else { return refusesPosts.value == 0 }
        let limit = Int64(clamping: configuration.maximumInFlightEvents)
        while refusesPosts.value == 0 {
            if reserveRoom() { return true }
            if await room.suspend(unlessRoom: { [self] in inFlight.value < limit }) { return false }
        }
        return false
    }

    /// Runs `post` (one post on this thread) with the room ``reserveRoomWaiting()`` reserved:
    /// that post is admitted on it if the bound is reached meanwhile; otherwise the reservation
    /// is given back.
    func postHoldingReservedRoom(_ post: () -> Void) {
        guard configuration.delivery == .asynchronous else { return post() }
        let slot = postingSlot(on: .of(PostedEvent.thisThread))
        slot.holdsReservedRoom = true
        post()
        guard slot.holdsReservedRoom else { return }
        slot.holdsReservedRoom = false
        inFlight.add(-1)
        room.madeRoom()
    }

    /// Stops accepting posts (`EventAggregator.shutdown(deadline:)`): every buffer refuses
    /// appends from now on (a post's append is inside its buffer's lock, so a post either
    /// appended before this returns, and a drain takes it, or is refused and counted), and
    /// waiting posts wake up to be refused.
    func refusePosts() {
        refusesPosts.store(1)
        buffers.refuseAppends()
        room.close()
    }

    /// Counts a post made after ``refusePosts()``; the first is reported. `leavingInFlight`: its
    /// record was counted in flight.
    @inline(never)
    func refuseAfterShutdown(_ name: EventName, leavingInFlight: Bool) {
        if leavingInFlight { inFlight.add(-1) }
        refusedAfterShutdown.add(1)
        if reportedRefusal.exchange(1) == 0 { configuration.problemHandler?(.postedAfterShutdown(name)) }
        if recordsTrail { record(name, .dropped(reason: "posted after the aggregator's shutdown began")) }
    }
}

/// The inbox's delivery side, what the delivery context takes from it (a round of work, in
/// posting order); the settings it is given (filter, consent); and its counters.
extension Inbox {
    /// Events in posting order, made from their records, and the controls to apply among them.
    struct Round {
        var events: [MeasurementEvent] = []
        /// In posting order; each is applied before `events[position]`.
        var controls: [Control] = []
        /// Records taken from the buffers, events and rejected ones (for the in-flight bound).
        var handedOut = 0
    }

    /// Something applied between two events, in posting order: an identity change or a move to
    /// or from the background.
    struct Control {
        enum Action {
            case identity(IdentityChange)
            case enterBackground
            case enterForeground
            case refreshContext
            /// `EventAggregator.forgetUser()` and the recording of the app's release, held
            /// while the identity store could not be read yet (`HeldUntilStoreReadable`): never
            /// posted, applied where they were held.
            case forgetUser
            case recordRelease(
                version: String?, build: String?, whenKnown: @Sendable (EventAggregator.AppRelease) -> Void)
        }

        var action: Action
        var timestamp: Date
        /// Consent as it was when the control was posted: an identity change made without
        /// consent is applied but never sent.
        var consentAtPost: Consent
        /// The place in the aggregator's sequence (asynchronous delivery), set by its buffer.
        var sequence: Int64 = 0
        /// Applied before `events[position]` of its round.
        var position = 0
    }

    // MARK: Delivery side (the delivery context only)

    /// Delivers everything posted before the call, in order, applying controls (identity
    /// changes, background moves) between the events they were posted between: the next round,
    /// handed to `deliver` (the aggregator's pipeline), then finished. Posts made during the
    /// round are left to the drain they scheduled.
    ///
    /// Only the drain a post scheduled (`asRequested`) lets posts schedule another, and it
    /// drains one round: when every drain did (those of `waitUntilDelivered` too) and looped
    /// until the buffers were empty, a busy poster scheduled one more timer every few dozen
    /// posts (a dispatch source and four allocations each), and the timers multiplied.
    ///
    /// Not inlined: it runs once a round, and inlined into its callers (`waitUntilDelivered`
    /// among them) it added 2.5 KB to an app.
    @inline(never)
    func drain(asRequested: Bool = false) {
        var round = nextRound(asRequested: asRequested)
        deliver(&round)
        finish(&round)
    }

    /// Takes the next round: everything posted before the call, in order, with the records
    /// whose args are not valid counted and reported. `asRequested`: the drain that
    /// ``requestRound()`` scheduled, which lets the next post ask again.
    func nextRound(asRequested: Bool) -> Round {
        if asRequested { drainRequested.exchange(0) }
        var rejected: [(MalformedEventError, EventName)] = []
        let round = buffers.nextRound(rejected: &rejected)
        for (error, name) in rejected { reject(error, alreadyCounted: true, name: name) }
        return round
    }

    /// After a round of asynchronous delivery was delivered: its records leave the in-flight
    /// count (an overflow episode ends once the backlog is under half the limit), and the arrays
    /// are kept for reuse.
    func finish(_ round: inout Round) {
        buffers.recycle(events: &round.events)
        if round.handedOut > 0 {
            let remaining = inFlight.add(Int64(-round.handedOut)) - Int64(round.handedOut)
            if remaining < Int64(clamping: configuration.maximumInFlightEvents) / 2, overflowing.value != 0 {
                overflowing.store(0)
            }
            // Posts waiting for room try again (a lock a round, none a post).
            room.madeRoom()
        }
        // Records given back to their threads: a next round releases what those threads do not
        // (one that stopped posting), even if nothing else is posted.
        if buffers.gaveBack { requestRound() }
    }

    // MARK: Settings and counters

    /// What the posting path keeps under its own lock.
    struct Posting {
        var filter: EventFilter?
        /// The names reported as filtered out (``EventAggregator/Problem/filteredOut(_:)``), once each.
        var reportedFilteredOut: Set<EventName> = []
        var malformed = 0
        var recentMalformed: [MalformedEventError] = []
        var filteredOutNames: [EventName: Int] = [:]
        var identityChanges = 0
        var malformedIdentityChanges = 0
    }

    /// The time, from the configured clock.
    @inline(__always)
    func now() -> Date {
        if usesSystemClock { return Date() }
        return configuration.clock?.now() ?? Date()
    }

    /// The filter in force; `nil` until one is set.
    var filter: EventFilter? { posting.withLock { $0.filter } }

    /// Replaces the filter (or sets it only when there is none); takes effect for the next post.
    /// Returns the filter in force.
    @discardableResult
    func setFilter(_ filter: EventFilter?, onlyIfNone: Bool = false) -> EventFilter? {
        posting.withLock { posting in
            if !onlyIfNone || posting.filter == nil {
                posting.filter = filter
                filterGeneration.add(1)
            }
            return posting.filter
        }
    }

    /// The consent in force: the aggregator's one record of it. Read without a lock by posts;
    /// changed only in the delivery context (``setConsent(_:)``), so a delivery never sees it
    /// change under it.
    var consent: Consent { Consent(code: consentCode.value) }

    func setConsent(_ consent: Consent) { consentCode.store(consent.code) }

    /// Counts a post the filter does not keep.
    func filterOut(_ name: EventName) {
        filteredOut.add(1)
        if configuration.recordsFilteredOutNames {
            posting.withLock { $0.filteredOutNames[name, default: 0] += 1 }
        }
        if recordsTrail { recordFilteredOut(name) }
    }

    /// The trail of a post the filter did not keep, with the filter's reason.
    @inline(never)
    private func recordFilteredOut(_ name: EventName) {
        let filter = posting.withLock { $0.filter }
        // Outside the lock: the observer is user code.
        record(name, .filteredOut(reason: filter?.reasonForDropping(name.rawValue) ?? "no filter is set"))
    }

    /// Records the trail of a post that ended on the posting side, known by its name only.
    @inline(never)
    func record(_ name: EventName, _ fate: EventTrailEntry.Fate) {
        trail?.record(
            EventTrailEntry(
                event: MeasurementEvent(name, id: MeasurementEvent.placeholderID, timestamp: now()), fate: fate))
    }

    @inline(never)
    func rejectInvalidName(_ name: EventName, notificationName: Notification.Name) {
        let problem = name.validationFailure ?? ""
        reject(
            MalformedEventError(
                .invalidName(name: name.rawValue, problem: problem), notificationName: notificationName),
            alreadyCounted: true, name: name)
    }

    /// Counts and reports a notification that is not an event; `name`, when it carried one, for
    /// the trail.
    func reject(_ error: MalformedEventError, alreadyCounted: Bool = false, name: EventName? = nil) {
        if !alreadyCounted { received.add(1) }
        posting.withLock { posting in
            posting.malformed += 1
            posting.recentMalformed.append(error)
            if posting.recentMalformed.count > 20 { posting.recentMalformed.removeFirst() }
        }
        configuration.problemHandler?(.malformedNotification(error))
        if recordsTrail { recordMalformed(error, name: name) }
    }

    /// The trail of a malformed notification that carried a name (a readable one, or the
    /// invalid name it was rejected for).
    @inline(never)
    private func recordMalformed(_ error: MalformedEventError, name: EventName?) {
        var name = name
        if name == nil, case .invalidName(let invalid, _) = error.reason { name = EventName(invalid) }
        if let name { record(name, .malformed(reason: error.description)) }
    }

    /// The counters of the posting path, added to the ones kept in delivery.
    func counters(added diagnostics: EventAggregator.Diagnostics) -> EventAggregator.Diagnostics {
        var diagnostics = diagnostics
        let posting = self.posting.withLock { $0 }
        diagnostics.received += Int(clamping: received.value)
        diagnostics.filteredOut += Int(clamping: filteredOut.value)
        diagnostics.droppedInFlight += Int(clamping: droppedInFlight.value)
        diagnostics.postsThatWaitedForRoom += Int(clamping: room.postsThatWaited.value)
        diagnostics.postsThatSuspendedForRoom += Int(clamping: room.postsThatSuspended.value)
        diagnostics.postedAfterShutdown += Int(clamping: refusedAfterShutdown.value)
        diagnostics.discarded += Int(clamping: discardedAtPost.value)
        diagnostics.malformed += posting.malformed
        diagnostics.recentMalformed = posting.recentMalformed
        diagnostics.filteredOutNames = posting.filteredOutNames
        diagnostics.identityChanges += posting.identityChanges
        diagnostics.malformedIdentityChanges += posting.malformedIdentityChanges
        diagnostics.requestContextsTrimmed += Int(clamping: trimmedContexts.value)
        return diagnostics
    }
}

/// An aggregator's posting buffers (one per posting thread), and the drain's merge of them
/// into one sequence.
///
/// Every item carries a number from one counter, taken inside its buffer's lock. A round swaps
/// every buffer out twice: `M`, the largest number seen by the end of the first pass (carry-over
/// included), is such that every item numbered `M` or less was inside its buffer's lock before
/// the first pass ended, so the second pass has it. The round hands out, merged by number,
/// every item up to `M`, and keeps the rest for the next round. An item posted after (in the
/// happens-before sense) another item, on any thread, has a larger number: cross-thread order
/// between an identity change and an event is kept.
final class PostingBufferRegistry: @unchecked Sendable {
    // @unchecked: `buffers` is behind its lock; the other mutable properties are used by the
    // drain only, which runs in the delivery context, one at a time.
    let sequence = AtomicCounter()
    let buffers = LockedValue<[PostingBuffer]>([])
    /// What a round took but numbered above its limit: the first source of the next round.
    private var carry = PostingBuffer.Contents()
    /// Emptied record arrays, kept with their capacity so that buffers do not regrow every round.
    private var spares: [[PostedEvent]] = []
    /// The last round's sources, emptied, kept for their capacity: a round allocates none.
    private var spareSources: [PostingBuffer.Contents] = []
    /// Emptied event arrays of delivered rounds, kept for their capacity.
    private var spareEvents: [[MeasurementEvent]] = []
    /// Whether the last round gave records back: then a next round must come, to release what
    /// their threads do not (see ``PostingBuffer/take(into:untaken:)``).
    private(set) var gaveBack = false

    /// 1 once appends are refused (``refuseAppends()``).
    private let refusesAppends = AtomicCounter()

    func register(_ buffer: PostingBuffer) {
        buffers.withLock { $0.append(buffer) }
        // Registered after `refuseAppends` read the list: the flag, stored before that read, is
        // seen here.
        if refusesAppends.value != 0 { buffer.refuseAppends() }
    }

    /// Every buffer, and every one registered later, refuses appends from now on.
    func refuseAppends() {
        refusesAppends.store(1)
        for buffer in buffers.withLock({ $0 }) { buffer.refuseAppends() }
    }

    /// At the aggregator's end: threads may forget its buffers.
    func close() {
        // What the buffers held is released here, outside their locks.
        let held = buffers.withLock({ $0 }).map { $0.markAggregatorGone() }
        withExtendedLifetime(held) {}
    }

    /// The next round: the events posted so far in sequence order, made from their records, and
    /// the controls with their positions among them; empty when nothing is waiting. Records
    /// whose args are not valid are left out, and their errors added to `rejected`.
    func nextRound(rejected: inout [(MalformedEventError, EventName)]) -> Inbox.Round {
        let buffers = self.buffers.withLock { $0 }
        gaveBack = false
        var sources = spareSources
        spareSources = []
        defer {
            sources.removeAll(keepingCapacity: true)
            spareSources = sources
        }
        if !carry.isEmpty {
            sources.append(carry)
            carry = PostingBuffer.Contents()
        }
        var finished: [ObjectIdentifier] = []
        takeAll(from: buffers, into: &sources, finished: &finished)
        let limit = sources.reduce(Int64.min) { max($0, $1.lastSequence) }
        takeAll(from: buffers, into: &sources, finished: &finished)
        if !finished.isEmpty {
            self.buffers.withLock { $0.removeAll { finished.contains(ObjectIdentifier($0)) } }
        }
        guard !sources.isEmpty else { return Inbox.Round() }

        // Only the second pass has numbers above the limit: a suffix of its sources, carried.
        // Found from the end: usually nothing is carried (and `firstIndex(where:)` copied every record).
        let ends = sources.map { source in
            var end = source.records.count
            while end > 0, source.records[end - 1].sequence > limit { end -= 1 }
            return end
        }
        var controls = sources.count == 1 ? sources[0].controls : sources.flatMap(\.controls)
        if sources.count > 1 { controls.sort { $0.sequence < $1.sequence } }
        if let cut = controls.firstIndex(where: { $0.sequence > limit }) {
            carry.controls = Array(controls[cut...])
            controls.removeSubrange(cut...)
        }
        for index in sources.indices where ends[index] < sources[index].records.count {
            carry.records += sources[index].records[ends[index]...]
        }
        if sources.count > 1, !carry.records.isEmpty { carry.records.sort { $0.sequence < $1.sequence } }

        var round = Inbox.Round(events: Self.largest(from: &spareEvents), controls: controls)
        round.events.reserveCapacity(ends.reduce(0, +))
        var nextControl = 0
        /// Appends the event of record `index` of `source`, after the controls numbered before it.
        func take(_ index: Int, of source: Int) {
            while nextControl < round.controls.count,
                round.controls[nextControl].sequence < sources[source].records[index].sequence
            {
                round.controls[nextControl].position = round.events.count
                nextControl += 1
            }
            do throws(MalformedEventError) {
                // Through `inout`: reading `sources[source].records[index]` copied the record.
                round.events.append(try Self.event(of: &sources[source].records[index]))
            } catch {
                rejected.append((error, sources[source].records[index].name))
            }
        }
        if sources.count == 1 {
            // One posting thread (the usual case): in order already.
            for index in 0..<ends[0] { take(index, of: 0) }
        } else {
            // Merged by number: each source is in order already.
            var cursors = [Int](repeating: 0, count: sources.count)
            while true {
                var next = -1
                var nextSequence = Int64.max
                for source in sources.indices where cursors[source] < ends[source] {
                    let sequence = sources[source].records[cursors[source]].sequence
                    if sequence < nextSequence { (next, nextSequence) = (source, sequence) }
                }
                guard next >= 0 else { break }
                take(cursors[next], of: next)
                cursors[next] += 1
            }
        }
        for index in round.controls.indices[nextControl...] { round.controls[index].position = round.events.count }
        round.handedOut = ends.reduce(0, +)
        for index in sources.indices { giveBack(&sources[index]) }
        return round
    }

    /// The record's event, the record reached through `inout`: read through the two nested array
    /// subscripts instead, it was copied (a retain and a release per field) for each event.
    @inline(__always)
    private static func event(of record: inout PostedEvent) throws(MalformedEventError) -> MeasurementEvent {
        try record.makeEvent()
    }

    /// After a round: the source's records go back to their posting thread, which releases the
    /// args it allocated there (what it has not released by the next round, that round
    /// releases); the carry's are released here.
    private func giveBack(_ source: inout PostingBuffer.Contents) {
        if let buffer = source.buffer {
            buffer.giveBack(&source.records)
            gaveBack = true
        }
        // An emptied array from the buffer, or (when the thread was behind) the records,
        // released here.
        recycle(&source.records)
    }

    /// Takes back a delivered round's events, for the array's capacity.
    func recycle(events: inout [MeasurementEvent]) {
        Self.keep(&events, in: &spareEvents)
    }

    /// Takes back an emptied array of records, for its capacity.
    private func recycle(_ records: inout [PostedEvent]) {
        Self.keep(&records, in: &spares)
    }

    /// Empties `array` and keeps it in `pool` for its capacity: a few arrays (two a posting
    /// thread), the largest, none larger than a busy round needs (a burst's capacity is let go).
    private static func keep<Element>(_ array: inout [Element], in pool: inout [[Element]]) {
        array.removeAll(keepingCapacity: true)
        if array.capacity > 0, array.capacity <= PostingBuffer.largestKeptCapacity {
            if pool.count < 8 {
                pool.append(array)
            } else if let smallest = pool.indices.min(by: { pool[$0].capacity < pool[$1].capacity }),
                pool[smallest].capacity < array.capacity
            {
                swap(&pool[smallest], &array)
            }
        }
        array = []
    }

    /// The array in `pool` with the most capacity (one given a small one grows it again).
    private static func largest<Element>(from pool: inout [[Element]]) -> [Element] {
        guard let largest = pool.indices.max(by: { pool[$0].capacity < pool[$1].capacity }) else { return [] }
        return pool.remove(at: largest)
    }

    private func takeAll(
        from buffers: [PostingBuffer], into sources: inout [PostingBuffer.Contents], finished: inout [ObjectIdentifier]
    ) {
        var untaken: [PostedEvent] = []
        // Released here, outside the buffers' locks (a value's deinitialiser may run).
        defer { untaken.removeAll() }
        for buffer in buffers {
            var contents = PostingBuffer.Contents(records: Self.largest(from: &spares))
            if buffer.take(into: &contents, untaken: &untaken) {
                finished.append(ObjectIdentifier(buffer))
            } else if !contents.isEmpty {
                contents.buffer = buffer
                sources.append(contents)
                continue
            }
            recycle(&contents.records)
        }
    }
}

// MARK: - Each posting thread's buffers and decision caches

/// What a posting thread keeps for each aggregator it posts to: its buffer and its cache of
/// filter decisions. Reached through one thread-specific slot, so a post touches no state that
/// another thread writes (except the buffer's lock while the drain swaps it).
final class PostingThread {
    // Not Sendable: used by its own thread only (and released by the thread-exit destructor).
    final class Slot {
        /// ``EventAggregator``'s serial number: never reused, unlike an object's address.
        let aggregatorSerial: Int64
        let buffer: PostingBuffer
        let decisions = NameDecisionCache()
        /// An `async` post on this thread holds room under the in-flight bound for the post it
        /// is making (`Inbox.postHoldingReservedRoom(_:)`).
        var holdsReservedRoom = false

        init(aggregatorSerial: Int64, buffer: PostingBuffer) {
            self.aggregatorSerial = aggregatorSerial
            self.buffer = buffer
        }
    }

    private var slots: [Slot] = []
    /// The slot of the aggregator this thread posted to last (also in `slots`).
    private var lastUsed: Slot?
    /// Runs when the thread exits (the core's per-thread state releases this object): the
    /// thread's buffers will get no more items, and the drain drops them once it has emptied them.
    deinit {
        for slot in slots { slot.buffer.markThreadExited() }
    }

    /// The object of the thread whose state is `thread` (``PostedEvent/thisThread``), made on its
    /// first post to an aggregator; the thread keeps it alive until it exits.
    @inline(__always)
    static func of(_ thread: UnsafeMutablePointer<PostedEvent.PostingThreadState>) -> PostingThread {
        // Invariant: only `make(in:)` sets the state's `aggregators`, to a PostingThread.
        if let object = thread.pointee.aggregators { return unsafeDowncast(object, to: PostingThread.self) }
        return make(in: thread)
    }

    @inline(never)
    private static func make(in thread: UnsafeMutablePointer<PostedEvent.PostingThreadState>) -> PostingThread {
        let object = PostingThread()
        thread.pointee.aggregators = object
        return object
    }

    // MARK: Slots

    /// The slot for the aggregator numbered `serial`; `register` is called with a new buffer
    /// the first time this thread posts to it.
    @inline(__always)
    func slot(for serial: Int64, register: (PostingBuffer) -> Void) -> Slot {
        if let slot = lastUsed, slot.aggregatorSerial == serial { return slot }
        return findSlot(for: serial, register: register)
    }

    private func findSlot(for serial: Int64, register: (PostingBuffer) -> Void) -> Slot {
        if let slot = slots.first(where: { $0.aggregatorSerial == serial }) {
            lastUsed = slot
            return slot
        }
        // Rare (a new aggregator): forget the slots of aggregators that are gone. They are
        // released at the end, once `slots` and `lastUsed` are consistent: releasing one may
        // run a deinitialiser that posts on this thread.
        let gone = slots.filter { $0.buffer.isAggregatorGone }
        if !gone.isEmpty {
            lastUsed = nil
            // By identity: an aggregator that goes meanwhile must not lose its slot's last
            // reference inside the removal.
            slots.removeAll { slot in gone.contains { $0 === slot } }
        }
        let slot = Slot(aggregatorSerial: serial, buffer: PostingBuffer())
        register(slot.buffer)
        slots.append(slot)
        lastUsed = slot
        withExtendedLifetime(gone) {}
        return slot
    }
}

/// What one posting thread has posted to one aggregator and the delivery queue has not taken
/// yet: events and controls, each numbered in the aggregator's single sequence.
///
/// Only the posting thread appends and only the drain takes, so the lock is uncontended
/// except while the drain swaps the contents out.
///
/// Records come back once the drain has made events of them (``giveBack(_:)``), so that
/// the posting thread releases their args (``releaseDelivered(upTo:)``): the args dictionary is
/// the one thing a post allocates that the delivery thread would otherwise free, and freeing
/// memory of another thread's malloc arena made the delivery thread wait for that arena's
/// lock (over half of its context switches with two posting threads). What the posting thread
/// has not released by the next round, the drain releases (``take(into:untaken:)``).
final class PostingBuffer: Sendable {
    struct Contents {
        /// Posted events, in sequence order.
        var records: [PostedEvent] = []
        /// Identity changes and lifecycle moves, in sequence order.
        var controls: [Inbox.Control] = []
        /// The buffer the contents came from, to give the records back to.
        var buffer: PostingBuffer?
        var isEmpty: Bool { records.isEmpty && controls.isEmpty }
        var lastSequence: Int64 { max(records.last?.sequence ?? .min, controls.last?.sequence ?? .min) }
    }

    struct Guarded {
        var contents = Contents()
        /// The posting thread exited: nothing more will be appended.
        var threadExited = false
        /// The aggregator is gone: the thread may forget this buffer.
        var aggregatorGone = false
        /// Something was appended since the drain last took the contents, and that append
        /// requested a drain: later appends need not (see ``append(numberedBy:_:)``).
        var drainRequested = false
        /// The aggregator is shutting down: appends are refused (``refuseAppends()``).
        var refusesAppends = false
        /// Posts made into events, given back for the posting thread to release. Always here
        /// (not in the thread's own state) so that a drain round can release what is left.
        /// Once they are released the empty array stays, with its capacity, for reuse.
        var delivered: [PostedEvent] = []
    }

    /// What an append tells the posting thread to do next.
    struct Appended {
        /// Request a drain (see ``append(numberedBy:_:)``).
        var requestsDrain: Bool
        /// Release some delivered posts (see ``releaseDelivered(upTo:)``).
        var hasDelivered: Bool
        /// Nothing was appended: the aggregator is shutting down.
        var refused = false
    }

    let guarded = LockedValue(Guarded())

    /// Appends a record numbered by `sequence`, stamped with `time` unless it carries a
    /// timestamp (a re-posted event), and with the request `context` it was posted in. The
    /// number is taken inside the lock, so that a drain which has seen a number has seen, or
    /// will see in its next pass, every smaller one (see ``PostingBufferRegistry``).
    ///
    /// Returns what the caller must do next (``Appended``). It requests a drain only for the
    /// first append since the drain last took the contents: the ones after it will be taken by
    /// the same drain, which takes the contents after this lock is released. A shared atomic
    /// flag set on every post was a contended write per post between posting threads.
    @inline(__always)
    func append(
        numberedBy sequence: borrowing AtomicCounter, receivedAt time: Date,
        in context: MeasurementRequestContext.Snapshot?, _ record: () -> PostedEvent
    ) -> Appended {
        guarded.withLock { guarded in
            if guarded.refusesAppends { return Appended(requestsDrain: false, hasDelivered: false, refused: true) }
            // Made in place: the record is copied once, into the array.
            guarded.contents.records.append(record())
            let last = guarded.contents.records.count - 1
            guarded.contents.records[last].sequence = sequence.add(1)
            if guarded.contents.records[last].timestamp == nil { guarded.contents.records[last].timestamp = time }
            if let context { guarded.contents.records[last].requestContext = context }
            return guarded.appended()
        }
    }

    func append(_ control: Inbox.Control, numberedBy sequence: borrowing AtomicCounter) -> Appended {
        guarded.withLock { guarded in
            var control = control
            control.sequence = sequence.add(1)
            guarded.contents.controls.append(control)
            return guarded.appended()
        }
    }

    /// Swaps what was appended into `contents` (which must be empty); returns whether the
    /// buffer is finished: empty, and its thread gone.
    ///
    /// Delivered posts still here were given back by an earlier round (a round gives back only
    /// after both its passes) and not released by the posting thread (it has not posted since,
    /// or not enough): they are moved to `untaken`, for the drain to release. A thread that
    /// stops posting does not keep them.
    func take(into contents: inout Contents, untaken: inout [PostedEvent]) -> Bool {
        guarded.withLock { guarded in
            // Nothing appended (the round's second pass, usually): the buffer keeps its array.
            if !guarded.contents.isEmpty { swap(&contents, &guarded.contents) }
            guarded.drainRequested = false
            if guarded.delivered.isEmpty {
                if guarded.delivered.capacity > Self.largestKeptCapacity {
                    // A burst's capacity is let go (storage only: no value is released here).
                    guarded.delivered = []
                } else if guarded.delivered.capacity > guarded.contents.records.capacity {
                    // The emptied array of released posts, larger than the drain's spare: appends
                    // do not grow it again. The spare goes back at the next give-back.
                    swap(&guarded.delivered, &guarded.contents.records)
                }
            } else if untaken.isEmpty {
                swap(&untaken, &guarded.delivered)
            } else {
                // Copies: the values stay alive in `untaken`, released outside the lock.
                untaken += guarded.delivered
                guarded.delivered = []
            }
            // Room for as many posts as this round took, allocated once, rather than grown
            // step by step while the thread posts.
            let taken = contents.records.count
            if guarded.contents.records.capacity < taken, taken <= Self.largestKeptCapacity {
                guarded.contents.records.reserveCapacity(taken)
            }
            return guarded.threadExited && contents.isEmpty
        }
    }

    /// The largest array a buffer keeps for reuse: more than a busy round needs.
    static let largestKeptCapacity = 4_096

    /// Drain: takes back `posts`, made into events, for the posting thread to release, and
    /// returns in `posts` an emptied array to reuse. When the thread still holds posts to
    /// release (it is behind, or this is the round's second pass), or the aggregator is gone,
    /// nothing is taken: `posts` stays with the drain, which releases them itself.
    func giveBack(_ posts: inout [PostedEvent]) {
        guarded.withLock { guarded in
            guard guarded.delivered.isEmpty, !guarded.aggregatorGone else { return }
            swap(&guarded.delivered, &posts)
        }
    }

    /// Posting thread: releases up to `limit` delivered posts (a few per post, so that no post
    /// pays for a whole round), outside the lock; the rest, or the emptied array, go back.
    ///
    /// The posts are out of the buffer while they are released: a value's deinitialiser may
    /// post again, on this thread, and then finds nothing half released.
    func releaseDelivered(upTo limit: Int) {
        var posts: [PostedEvent] = []
        guarded.withLock { swap(&posts, &$0.delivered) }
        posts.removeLast(Swift.min(limit, posts.count))
        let putBack = guarded.withLock { guarded -> Bool in
            guard guarded.delivered.isEmpty, !guarded.aggregatorGone else { return false }
            swap(&posts, &guarded.delivered)
            return true
        }
        // The drain gave other posts back meanwhile, or the aggregator is gone (rare): these are
        // released here, at once.
        if !putBack { posts.removeAll() }
    }

    /// Marks the aggregator gone, and returns the posts the buffer still holds, for the caller
    /// to release outside the lock.
    func markAggregatorGone() -> [PostedEvent] {
        guarded.withLock { guarded in
            guarded.aggregatorGone = true
            defer { guarded.delivered = [] }
            return guarded.delivered
        }
    }

    func markThreadExited() { guarded.withLock { $0.threadExited = true } }
    func refuseAppends() { guarded.withLock { $0.refusesAppends = true } }
    var isAggregatorGone: Bool { guarded.withLock { $0.aggregatorGone } }
}

extension PostingBuffer.Guarded {
    /// After an append: a drain is requested by the first append since the contents were taken
    /// (and marked requested), and delivered posts wait to be released.
    @inline(__always)
    fileprivate mutating func appended() -> PostingBuffer.Appended {
        defer { drainRequested = true }
        return PostingBuffer.Appended(requestsDrain: !drainRequested, hasDelivered: !delivered.isEmpty)
    }
}

/// What the filter and the name rules said about a name, remembered per posting thread.
///
/// A module posts a few hundred constant names, so the same names come back again and again.
/// A direct-mapped table indexed by a few of the name's UTF-8 bytes (its length, its middle and
/// last bytes: constant time for a native string) answers without hashing every character;
/// `==` on the entry confirms it, so a collision is only a miss, never a wrong answer.
/// Entries are valid for one filter generation; any filter change makes them all misses.
final class NameDecisionCache {
    // Not Sendable: each instance belongs to one posting thread.
    /// Two flags, no reference: reading one from the cache retains nothing.
    struct Decision {
        var allowed: Bool
        /// Whether the bus accepts the name (``EventName/validationFailure`` is nil); the
        /// reason is worked out again for the rare name it rejects.
        var isValid: Bool
    }

    private struct Entry {
        var name: String
        var generation: Int64
        var decision: Decision
    }

    private static let indexBits = 6
    // Generation -1 never matches: generations start at 0.
    // Unchecked: the dynamic exclusivity check of every read cost 76 instructions a post (on a
    // filtered-out post, 0.7%). Invariant: one thread uses the cache, and neither method
    // accesses `entries` while the other does (no call out of either while it is accessed).
    @exclusivity(unchecked) private var entries = [Entry](
        repeating: Entry(name: "", generation: -1, decision: Decision(allowed: false, isValid: false)),
        count: 1 << indexBits)

    /// The decision remembered for `name` under the filter generation `generation`.
    @inline(__always)
    func decision(for name: String, generation: Int64) -> Decision? {
        let index = Self.index(of: name)
        guard entries[index].generation == generation, entries[index].name == name else { return nil }
        return entries[index].decision
    }

    func remember(_ decision: Decision, for name: String, generation: Int64) {
        entries[Self.index(of: name)] = Entry(name: name, generation: generation, decision: decision)
    }

    @inline(__always)
    private static func index(of name: String) -> Int {
        let utf8 = name.utf8
        let count = utf8.count
        guard count > 0 else { return 0 }
        let middle = utf8[utf8.index(utf8.startIndex, offsetBy: count / 2)]
        let last = utf8[utf8.index(before: utf8.endIndex)]
        let mixed = (UInt(truncatingIfNeeded: count) &* 31 &+ UInt(middle)) &* 31 &+ UInt(last)
        return Int(truncatingIfNeeded: mixed & UInt((1 << indexBits) - 1))
    }
}
