import Foundation

/// The posting path: what runs on the posting thread, inside the observer, for every post.
/// It takes no lock but its own thread's buffer's (and the state lock only on a cache miss).
extension Inbox {
    /// Receives one notification: the post in progress on this thread when it is that post,
    /// otherwise decoded from its userInfo.
    func receive(_ notification: Notification, keys: NotificationKeys) {
        let thread = PostingThread.current
        if keys.isStandard, let post = PostInProgress.current(for: notification, on: thread) {
            return receive(post, from: notification, slot: postingSlot(on: thread))
        }
        let fields: NotificationFields
        do {
            fields = try keys.readFields(notification)
        } catch {
            return reject(error)
        }
        let slot = postingSlot(on: thread)
        guard let consent = admit(fields.name, decision(on: fields.name, cachedIn: slot.decisions)) else { return }
        let event: MeasurementEvent
        do {
            event = try MeasurementEvent(fields: fields, receivedAt: now(), assignsID: false)
        } catch {
            return reject(error, alreadyCounted: true)
        }
        enqueue(
            EventAggregator.Pending(
                event: event, needsID: event.id == MeasurementEvent.placeholderID, consentAtPost: consent),
            in: slot)
    }

    func reject(_ error: MalformedEventError, alreadyCounted: Bool = false) {
        if !alreadyCounted { received.add(1) }
        state.withLock { state in
            state.diagnostics.malformed += 1
            state.diagnostics.recentMalformed.append(error)
            if state.diagnostics.recentMalformed.count > 20 { state.diagnostics.recentMalformed.removeFirst() }
        }
        configuration.problemHandler?(.malformedNotification(error))
    }

    /// A post made by `MeasurementEvent.post` on this thread: its fields are already typed,
    /// and its args are converted on the delivery queue rather than here.
    ///
    /// The name is checked after the filter: a name that no filter keeps costs nothing more
    /// (it is counted as filtered out, and listed in `filteredOutNames`).
    @inline(__always)
    func receive(
        _ post: UnsafePointer<PostInProgress>, from notification: borrowing Notification, slot: PostingThread.Slot
    ) {
        let decision = decision(on: post.pointee.name, cachedIn: slot.decisions)
        guard let consent = admit(post.pointee.name, decision) else { return }
        if !decision.isValid, let problem = post.pointee.name.validationFailure {
            return reject(
                MalformedEventError(
                    .invalidName(name: post.pointee.name.rawValue, problem: problem),
                    notificationName: notification.name),
                alreadyCounted: true)
        }
        let timestamp = now()
        let makePosted = {
            EventAggregator.PostedEvent(
                name: post.pointee.name, type: post.pointee.type, category: post.pointee.category,
                args: post.pointee.args, timestamp: timestamp, consentAtPost: consent)
        }
        switch configuration.delivery {
        case .asynchronous:
            guard admitInFlight() else { return }
            followUp(slot.buffer.append(numberedBy: buffers.sequence, makePosted), in: slot.buffer)
        case .synchronous:
            do {
                owner?.deliverNow(try makePosted().makePending())
            } catch {
                reject(error, alreadyCounted: true)
            }
        }
    }

    /// This thread's buffer and decision cache for this aggregator.
    @inline(__always)
    func postingSlot(on thread: PostingThread = .current) -> PostingThread.Slot {
        thread.slot(for: serial) { buffers.register($0) }
    }

    /// Whether the filter keeps `name` and whether the name is valid: from this thread's cache,
    /// or worked out (under the state lock for the filter) and remembered.
    @inline(__always)
    func decision(on name: EventName, cachedIn cache: NameDecisionCache) -> NameDecisionCache.Decision {
        if let decision = cache.decision(for: name.rawValue, generation: filterGeneration.value) {
            return decision
        }
        return decideAndRemember(name, in: cache)
    }

    @inline(never)
    private func decideAndRemember(_ name: EventName, in cache: NameDecisionCache)
        -> NameDecisionCache.Decision
    {
        // The generation is read with the filter it belongs to: a change bumps it under the lock.
        let (filter, generation) = state.withLock { ($0.filter, filterGeneration.value) }
        let decision = NameDecisionCache.Decision(
            allowed: filter?.allows(name.rawValue) == true, isValid: name.validationFailure == nil)
        cache.remember(decision, for: name.rawValue, generation: generation)
        // Reported once per name, the first time any thread decides it: later posts of the
        // name hit the cache and never come here (a cache collision comes back, and finds the
        // name reported). Outside the lock: the handler is user code.
        if !decision.allowed, configuration.problemHandler != nil,
            state.withLock({ $0.reportedFilteredOut.insert(name).inserted })
        {
            configuration.problemHandler?(.filteredOut(name))
        }
        return decision
    }

    /// Counts a received event; the consent in force when the filter keeps it.
    @inline(__always)
    func admit(_ name: EventName, _ decision: NameDecisionCache.Decision) -> Consent? {
        received.add(1)
        if decision.allowed { return consent }
        filteredOut.add(1)
        if configuration.recordsFilteredOutNames {
            state.withLock { $0.diagnostics.filteredOutNames[name, default: 0] += 1 }
        }
        return nil
    }

    /// Queues an event decoded from a notification, or delivers it at once with synchronous
    /// delivery.
    func enqueue(_ pending: EventAggregator.Pending, in slot: PostingThread.Slot) {
        switch configuration.delivery {
        case .asynchronous:
            guard admitInFlight() else { return }
            followUp(slot.buffer.append(pending, numberedBy: buffers.sequence), in: slot.buffer)
        case .synchronous:
            owner?.deliverNow(pending)
        }
    }

    /// What an append asks for: a drain, and releasing some of this thread's delivered posts
    /// (64 at most, so that no post pays for a whole round).
    @inline(__always)
    func followUp(_ appended: PostingBuffer.Appended, in buffer: PostingBuffer) {
        if appended.requestsDrain { requestDrain() }
        if appended.hasDelivered { buffer.releaseDelivered(upTo: 64) }
    }

    /// Schedules a drain unless one is scheduled and has not started swapping yet; called by
    /// the first append to a buffer since a drain last took it. The scheduled drain clears the
    /// flag (an exchange, so that it sees every item appended before the flag was set) before
    /// it swaps the buffers.
    @inline(__always)
    func requestDrain() {
        if drainRequested.exchange(1) == 0 { scheduleDrain() }
    }

    @inline(never)
    private func scheduleDrain() {
        drainsScheduled.add(1)
        owner?.scheduleDrain()
    }

    /// Whether one more event may wait for delivery; otherwise drops it (the newest), counts
    /// it, and reports the first drop of an episode to the problem handler.
    @inline(__always)
    private func admitInFlight() -> Bool {
        let limit = Int64(clamping: configuration.maximumInFlightEvents)
        if inFlight.add(1) < limit { return true }
        inFlight.add(-1)
        droppedInFlight.add(1)
        if overflowing.exchange(1) == 0 {
            // On the posting thread, outside every lock: the handler is user code.
            configuration.problemHandler?(.inFlightLimitReached(limit: configuration.maximumInFlightEvents))
        }
        return false
    }

    /// After a drain round: `events` were handed to delivery. An overflow episode ends once
    /// the backlog is under half the limit.
    func finishInFlight(_ events: Int) {
        let remaining = inFlight.add(Int64(-events)) - Int64(events)
        if remaining < Int64(clamping: configuration.maximumInFlightEvents) / 2, overflowing.value != 0 {
            overflowing.store(0)
        }
    }

    /// The counters kept outside the state lock, added to the ones kept under it.
    func postingCounters(added diagnostics: EventAggregator.Diagnostics) -> EventAggregator.Diagnostics {
        var diagnostics = diagnostics
        diagnostics.received += Int(clamping: received.value)
        diagnostics.filteredOut += Int(clamping: filteredOut.value)
        diagnostics.droppedInFlight += Int(clamping: droppedInFlight.value)
        return diagnostics
    }
}
