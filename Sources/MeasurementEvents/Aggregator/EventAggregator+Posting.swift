import Foundation

/// The posting path: what runs on the posting thread, inside the observer, for every post.
/// It takes no lock but its own thread's buffer's (and the state lock only on a cache miss).
extension EventAggregator {
    /// A post made by `MeasurementEvent.post` on this thread: its fields are already typed,
    /// and its args are converted on the delivery queue rather than here.
    ///
    /// The name is checked after the filter: a name that no filter keeps costs nothing more
    /// (it is counted as filtered out, and listed in `filteredOutNames`).
    @inline(__always)
    func receive(_ post: UnsafePointer<PostInProgress>, notificationName: Notification.Name, slot: PostingThread.Slot) {
        let decision = decision(on: post.pointee.name.pointee, cachedIn: slot.decisions)
        guard let consent = admit(post.pointee.name.pointee, decision) else { return }
        if !decision.isValid, let problem = post.pointee.name.pointee.validationFailure {
            return reject(
                MalformedEventError(
                    .invalidName(name: post.pointee.name.pointee.rawValue, problem: problem),
                    notificationName: notificationName),
                alreadyCounted: true)
        }
        let timestamp = now()
        let makePosted = {
            PostedEvent(
                name: post.pointee.name.pointee, type: post.pointee.type, category: post.pointee.category.pointee,
                args: post.pointee.args.pointee, timestamp: timestamp, consentAtPost: consent)
        }
        switch configuration.delivery {
        case .asynchronous:
            guard admitInFlight() else { return }
            slot.buffer.append(numberedBy: posting.buffers.sequence, makePosted)
            requestDrain()
        case .synchronous:
            do {
                deliverNow(try makePosted().makePending())
            } catch {
                reject(error, alreadyCounted: true)
            }
        }
    }

    /// This thread's buffer and decision cache for this aggregator.
    @inline(__always)
    func postingSlot() -> PostingThread.Slot {
        PostingThread.withCurrent { thread in
            thread.slot(for: posting.serial) { posting.buffers.register($0) }
        }
    }

    /// Whether the filter keeps `name` and whether the name is valid: from this thread's cache,
    /// or worked out (under the state lock for the filter) and remembered.
    @inline(__always)
    func decision(on name: EventName, cachedIn cache: borrowing NameDecisionCache) -> NameDecisionCache.Decision {
        if let decision = cache.decision(for: name.rawValue, generation: posting.filterGeneration.value) {
            return decision
        }
        return decideAndRemember(name, in: cache)
    }

    @inline(never)
    private func decideAndRemember(_ name: EventName, in cache: borrowing NameDecisionCache)
        -> NameDecisionCache.Decision
    {
        // The generation is read with the filter it belongs to: a change bumps it under the lock.
        let (filter, generation) = state.withLock { ($0.filter, posting.filterGeneration.value) }
        let decision = NameDecisionCache.Decision(
            allowed: filter?.allows(name.rawValue) == true, isValid: name.validationFailure == nil)
        cache.remember(decision, for: name.rawValue, generation: generation)
        return decision
    }

    /// Counts a received event; the consent in force when the filter keeps it.
    @inline(__always)
    func admit(_ name: EventName, _ decision: NameDecisionCache.Decision) -> Consent? {
        posting.received.add(1)
        if decision.allowed { return posting.consent }
        posting.filteredOut.add(1)
        if configuration.recordsFilteredOutNames {
            state.withLock { $0.diagnostics.filteredOutNames[name, default: 0] += 1 }
        }
        return nil
    }

    /// Queues an event decoded from a notification, or delivers it at once with synchronous
    /// delivery.
    func enqueue(_ pending: Pending, in slot: PostingThread.Slot) {
        switch configuration.delivery {
        case .asynchronous:
            guard admitInFlight() else { return }
            slot.buffer.append(pending, numberedBy: posting.buffers.sequence)
            requestDrain()
        case .synchronous:
            deliverNow(pending)
        }
    }

    private func deliverNow(_ pending: Pending) {
        var batch = [pending]
        synchronousDelivery.lock()
        defer { synchronousDelivery.unlock() }
        deliverSegment(&batch, 0..<batch.count)
    }

    /// Schedules a drain unless one is scheduled and has not started swapping yet. The drain
    /// clears the flag (an exchange, so that it sees every item appended before the flag was
    /// set) before it swaps the buffers.
    @inline(__always)
    func requestDrain() {
        if posting.drainRequested.exchange(1) == 0 { scheduleDrain() }
    }

    /// Whether one more event may wait for delivery; otherwise drops it (the newest), counts
    /// it, and reports the first drop of an episode to the problem handler.
    @inline(__always)
    private func admitInFlight() -> Bool {
        let limit = Int64(clamping: configuration.maximumInFlightEvents)
        if posting.inFlight.add(1) < limit { return true }
        posting.inFlight.add(-1)
        posting.droppedInFlight.add(1)
        if posting.overflowing.exchange(1) == 0 {
            // On the posting thread, outside every lock: the handler is user code.
            configuration.problemHandler?(.inFlightLimitReached(limit: configuration.maximumInFlightEvents))
        }
        return false
    }

    /// After a drain round: `events` were handed to delivery. An overflow episode ends once
    /// the backlog is under half the limit.
    func finishInFlight(_ events: Int) {
        let remaining = posting.inFlight.add(Int64(-events)) - Int64(events)
        if remaining < Int64(clamping: configuration.maximumInFlightEvents) / 2, posting.overflowing.value != 0 {
            posting.overflowing.store(0)
        }
    }

    /// The counters kept outside the state lock, added to the ones kept under it.
    func postingCounters(added diagnostics: Diagnostics) -> Diagnostics {
        var diagnostics = diagnostics
        diagnostics.received += Int(clamping: posting.received.value)
        diagnostics.filteredOut += Int(clamping: posting.filteredOut.value)
        diagnostics.droppedInFlight += Int(clamping: posting.droppedInFlight.value)
        return diagnostics
    }
}
