import Foundation
import MeasurementEvents

// Consent by purpose, per destination (issue 46).
//
// The aggregator's single consent (`setConsent(_:)`) still decides whether events go on at all
// (the admission step). Beside it, each purpose (`ConsentPurpose`) may have a consent of its own
// (`setConsent(_:for:)`); a purpose without one follows the single consent. A destination that
// needs purposes (`Destination.purposes`) receives an event only if every one of them is granted
// for it, decided when the event reaches the destinations in posting order:
//   - a change is applied in the delivery context after everything posted before the call was
//     delivered (`onDeliveryContext` then `inbox.drain()`), so the events posted before it go
//     out under the purposes in force when they were posted, and those posted after it under
//     the new ones;
//   - a purpose denied (or pending-discarding) keeps the events from the destinations that need
//     it, and those trackers hear `.denied` and `discardPending()` (an `HTTPTracker` deletes its
//     queue, on disk too, after the request on the wire) before the call returns; the others are
//     not told and keep their queues;
//   - a purpose pending-holding holds the events of the destinations that need it, in order
//     (at most `heldEventLimit`, the oldest dropped and counted), until it is granted (they go
//     out) or denied (they are dropped).
// The purposes' consents are remembered in the identity store with the single consent.

extension EventAggregator {
    /// Sets the consent of each purpose in `consents`, as a consent platform reports them (a
    /// ``ConsentPurpose`` not named keeps what it had). Everything posted before the call is
    /// delivered first, under the purposes in force until now. A denial returns once the
    /// trackers of the destinations that need the purpose have discarded what they hold and no
    /// request of theirs is on the wire.
    ///
    /// ```swift
    /// aggregator.setConsents([.analytics: .granted, .advertising: .denied])
    /// ```
    ///
    /// - Parameter consents: the consent of each purpose.
    public func setConsents(_ consents: [ConsentPurpose: MeasurementEventsAggregator.Consent]) {
        consentDecision.decided()
        onDeliveryContext {
            self.inbox.drain()
            self.applyPurposes(consents)
        }
    }

    /// Sets the consent of `purposes` (``setConsents(_:)`` with the same consent for each).
    ///
    /// ```swift
    /// aggregator.setConsent(.denied, for: [.advertising, .personalization])
    /// ```
    ///
    /// - Parameters:
    ///   - consent: the consent.
    ///   - purposes: the purposes it applies to.
    public func setConsent(_ consent: MeasurementEventsAggregator.Consent, for purposes: Set<ConsentPurpose>) {
        setConsents(Dictionary(uniqueKeysWithValues: purposes.map { ($0, consent) }))
    }

    /// The consent in force for `purpose`: its own, or the aggregator's ``consent`` when it has
    /// none.
    ///
    /// - Parameter purpose: a purpose.
    /// - Returns: its consent.
    public func consent(for purpose: ConsentPurpose) -> MeasurementEventsAggregator.Consent {
        state.withLock { $0.purposes[purpose] } ?? consent
    }

    /// The purposes that have a consent of their own, with it.
    public var purposeConsents: [ConsentPurpose: MeasurementEventsAggregator.Consent] {
        state.withLock { $0.purposes }
    }

    /// Applies `changes` in the delivery context (`nil`: no purpose keeps a consent of its own
    /// any more): each destination whose purposes' consent changed hears it (and discards what it
    /// holds on a denial); what it held goes out or is dropped; the store remembers them.
    func applyPurposes(_ changes: [ConsentPurpose: MeasurementEventsAggregator.Consent]?) {
        let global = inbox.consent
        let (told, released, purposes) = state.withLock {
            state -> (
                [(any EventTracker, MeasurementEventsAggregator.Consent)], [(Int, MeasurementEvent)],
                [ConsentPurpose: MeasurementEventsAggregator.Consent]
            ) in
            let before = state.destinations.all.map { $0.consent(purposes: state.purposes, global: global) }
            if let changes {
                for (purpose, consent) in changes { state.purposes[purpose] = consent }
            } else {
                state.purposes = [:]
            }
            hasPurposes.store(state.purposes.isEmpty ? 0 : 1)
            var told: [(any EventTracker, MeasurementEventsAggregator.Consent)] = []
            for (index, destination) in state.destinations.all.enumerated() {
                let now = destination.consent(purposes: state.purposes, global: global)
                if now != before[index] { told.append((destination.tracker, now)) }
            }
            // What destinations held for a purpose: out once all theirs are granted, dropped
            // once one discards, kept otherwise.
            var released: [(Int, MeasurementEvent)] = []
            var kept: [(Int, MeasurementEvent)] = []
            var dropped = 0
            for (index, event) in state.heldForPurposes {
                let (consent, purpose) = state.destinations.all[index].deciding(
                    purposes: state.purposes, global: global)
                switch consent {
                case .granted: released.append((index, event))
                case .pendingHolding: kept.append((index, event))
                case .denied, .pendingDiscarding:
                    dropped += 1
                    if let purpose { state.diagnostics.withheldByPurpose[purpose, default: 0] += 1 }
                }
            }
            state.heldForPurposes = kept
            state.diagnostics.heldForPurposes = kept.count
            state.diagnostics.discarded += dropped
            return (told, released, state.purposes)
        }
        if let problem = attribution.setPurposes(purposes) { reportStoreProblem(problem) }
        // Outside the lock: trackers are the app's code.
        for (tracker, consent) in told {
            call(tracker, on: nil) { try $0.consentDidChange(to: consent) }
            if consent == .denied { call(tracker, on: nil) { try $0.discardPending() } }
        }
        let destinations = state.withLock { $0.destinations.all }
        for (index, event) in released {
            call(destinations[index].tracker, on: event.name) { try $0.track(event) }
        }
    }

    /// Holds `event` (the destination's copy, decided on) for the destination at `index` until
    /// its purposes are granted; returns the oldest held event dropped to keep to
    /// ``Configuration-swift.struct/heldEventLimit``.
    func holdForPurposes(_ event: MeasurementEvent, destination index: Int) -> MeasurementEvent? {
        state.withLock { state in
            state.heldForPurposes.append((index, event))
            defer { state.diagnostics.heldForPurposes = state.heldForPurposes.count }
            guard state.heldForPurposes.count > max(configuration.heldEventLimit, 0) else { return nil }
            state.diagnostics.dropped += 1
            return state.heldForPurposes.removeFirst().1
        }
    }

    /// Counts a destination's copy withheld because `purpose` was denied (`nil`: the
    /// aggregator's consent, counted by the admission step instead).
    func withheld(for purpose: ConsentPurpose?) {
        guard let purpose else { return }
        state.withLock { $0.diagnostics.withheldByPurpose[purpose, default: 0] += 1 }
    }
}

/// What the purposes' consents mean for each destination in one round of delivery, worked out
/// once per round rather than per event: the consent each destination is under, with the purpose
/// that decides it (`Destination.deciding`), and the purposes' consents its copies carry
/// (`EventAttribution.purposeConsents`). A copy's attribution is replaced by one that adds them,
/// shared by the copies of one destination that shared an attribution (every event of a session
/// with one identity), so that stamping costs one allocation per destination and identity, not
/// one per event.
struct PurposeStamps {
    /// Per destination: the consent it is under this round, and the purpose that decides it.
    let decisions: [(consent: MeasurementEventsAggregator.Consent, purpose: ConsentPurpose?)]
    private let stamps: [[String: Bool]]
    /// Per destination: the last attribution stamped and what it became.
    private var last: [(source: AttributionStorage, stamped: AttributionStorage)?]

    init(
        _ destinations: Destinations, purposes: [ConsentPurpose: MeasurementEventsAggregator.Consent],
        global: MeasurementEventsAggregator.Consent
    ) {
        decisions = destinations.all.map { $0.deciding(purposes: purposes, global: global) }
        stamps = destinations.all.map { $0.purposeConsents(purposes, global: global) }
        last = Array(repeating: nil, count: destinations.all.count)
    }

    /// Adds the purposes' consents of the destination at `index` to `event`'s attribution.
    mutating func stamp(_ event: inout MeasurementEvent, for index: Int) {
        guard let source = event.attributionStorage else {
            var attribution = EventAttribution(identity: EventIdentity(anonymousID: ""))
            attribution.purposeConsents = stamps[index]
            event.attribution = attribution
            return
        }
        if let last = last[index], last.source === source {
            event.attributionStorage = last.stamped
            return
        }
        var attribution = source.value
        attribution.purposeConsents = stamps[index]
        let stamped = AttributionStorage(attribution)
        last[index] = (source, stamped)
        event.attributionStorage = stamped
    }
}
