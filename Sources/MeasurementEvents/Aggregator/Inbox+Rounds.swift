import Foundation

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

    /// Takes the next round: everything posted before the call, in order, with the records
    /// whose args are not valid counted and reported. `asRequested`: the drain that
    /// `roundWaiting` asked for, which lets the next post ask again.
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
        if trail != nil { recordFilteredOut(name) }
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
        if trail != nil { recordMalformed(error, name: name) }
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
        diagnostics.discarded += Int(clamping: discardedAtPost.value)
        diagnostics.malformed += posting.malformed
        diagnostics.recentMalformed = posting.recentMalformed
        diagnostics.filteredOutNames = posting.filteredOutNames
        diagnostics.identityChanges += posting.identityChanges
        diagnostics.malformedIdentityChanges += posting.malformedIdentityChanges
        return diagnostics
    }
}

extension Consent {
    /// The consent's number in an atomic.
    var code: Int64 {
        switch self {
        case .granted: return 0
        case .pendingHolding: return 1
        case .pendingDiscarding: return 2
        case .denied: return 3
        }
    }

    init(code: Int64) {
        switch code {
        case 0: self = .granted
        case 1: self = .pendingHolding
        case 2: self = .pendingDiscarding
        default: self = .denied
        }
    }
}
