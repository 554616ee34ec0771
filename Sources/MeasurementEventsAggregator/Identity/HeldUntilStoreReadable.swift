import Foundation
import MeasurementEvents

// Events wait while the identity store cannot be read yet.
//
// iOS launches apps in the background before the user first unlocks the device after a reboot
// (a push, a background fetch or processing task, location, prewarming). Files of the
// protection class `completeUntilFirstUserAuthentication` cannot be opened then, and the store
// says so (`IdentityStoreError.isNotReadableYet`). That is not damage: stamping events with a
// new anonymous id, or writing one over the stored file, would count one install as two users.
// So the aggregator stamps nothing until the store is read. Rounds are held as they come
// (events, identity changes and lifecycle moves in posting order, at most `heldEventLimit`
// events, the oldest dropped and counted), and so are `forgetUser()` and the recording of the
// app's release. At every delivery, at `applicationWillEnterForeground()` (a round too) and at
// `protectedDataDidBecomeAvailable()` the store is read again. Once it is read, the consent it
// holds is put in force (unless the app set one meanwhile) and the held round is delivered
// first, in order, stamped with the stored identity.

/// What the aggregator delivered while its identity store could not be read yet: one round
/// that grows, in posting order. Touched in the delivery context only (it is the attribution's).
/// A class: whether there is one is asked at the start of every round (with synchronous
/// delivery, every post), and the optional of a struct was copied to be compared with `nil`
/// (two retains and two releases each time).
final class HeldUntilStoreReadable {
    /// Events and controls, each control applied before `events[position]`.
    private(set) var round = Inbox.Round()

    /// Appends `other` (its controls keep their places among its events) and empties it for
    /// reuse. Keeps at most `limit` events: returns the oldest ones dropped to keep to it.
    func append(_ other: inout Inbox.Round, limit: Int) -> [MeasurementEvent] {
        let offset = round.events.count
        for var control in other.controls {
            control.position += offset
            round.controls.append(control)
        }
        round.events.append(contentsOf: other.events)
        other.events.removeAll(keepingCapacity: true)
        other.controls.removeAll()
        let excess = round.events.count - max(limit, 0)
        guard excess > 0 else { return [] }
        let dropped = Array(round.events[..<excess])
        round.events.removeFirst(excess)
        for index in round.controls.indices {
            round.controls[index].position = max(0, round.controls[index].position - excess)
        }
        return dropped
    }

    /// Appends a control after everything held.
    func append(_ action: Inbox.Control.Action, at timestamp: Date, consent: Consent) {
        round.controls.append(
            Inbox.Control(action: action, timestamp: timestamp, consentAtPost: consent, position: round.events.count))
    }
}

extension EventAggregator {
    /// Call when the device's protected data becomes available (`AppLifecycleObserver` does, on
    /// UIKit's and AppKit's notification): an identity store that could not be read yet (a
    /// launch before the first unlock) is read now, and the events held meanwhile are delivered.
    /// Nothing happens when the store was read already. Returns at once with asynchronous
    /// delivery (the store is read on the delivery queue: the main thread never waits for it).
    public func protectedDataDidBecomeAvailable() {
        let resume: @Sendable () -> Void = {
            if self.attribution.heldUntilStoreReadable != nil { _ = self.resumeIfStoreReadable() }
        }
        switch configuration.delivery {
        case .asynchronous: queue.async(execute: resume)
        case .synchronous: onDeliveryContext(resume)
        }
    }

    /// Holds `round` until the store can be read (see the head of this file); the events get
    /// their ids now, so that the trail can show them held.
    @inline(never)
    func holdUntilStoreReadable(_ round: inout Inbox.Round) {
        if inbox.recordsTrail, let trail = inbox.trail {
            state.withLock { state in
                for index in round.events.indices where round.events[index].id == MeasurementEvent.placeholderID {
                    round.events[index].id = state.ids.next()
                }
            }
            for event in round.events { trail.record(EventTrailEntry(event: event, fate: .held)) }
        }
        let dropped = attribution.heldUntilStoreReadable?.append(&round, limit: configuration.heldEventLimit) ?? []
        let count = attribution.heldUntilStoreReadable?.round.events.count ?? 0
        state.withLock { state in
            state.diagnostics.heldUntilStoreReadable = count
            state.diagnostics.dropped += dropped.count
        }
        // Outside the lock: the handler and the trail's observer are the app's code.
        for event in dropped {
            configuration.problemHandler?(.heldEventDropped(event.name))
            inbox.trail?.record(EventTrailEntry(event: event, fate: .dropped(reason: Self.heldLimitReason)))
        }
    }

    /// Holds `action` after what is held when the store cannot be read yet; false when it was
    /// read (the caller acts now).
    func holdsUntilStoreReadable(_ action: Inbox.Control.Action) -> Bool {
        guard attribution.heldUntilStoreReadable != nil else { return false }
        attribution.heldUntilStoreReadable?.append(action, at: inbox.now(), consent: inbox.consent)
        return true
    }

    /// Reads the store again while it could not be read; when it can be now, puts its consent
    /// in force and delivers what was held, in order, and returns true.
    @inline(never)
    func resumeIfStoreReadable() -> Bool {
        guard let (held, restored) = attribution.readStoreAgain(configuredConsent: configuration.consent) else {
            return false
        }
        state.withLock { state in
            state.diagnostics.heldUntilStoreReadable = 0
            state.storeNotReadableYet = false
        }
        // A store that turned out damaged once readable is reported as at any launch.
        if let problem = restored.problem { reportStoreProblem(problem) }
        // The consent remembered (or configured), unless the app set one meanwhile: it was
        // pending while the store could not be read, so that nothing left before it was known.
        let purposes = attribution.restoredPurposes
        state.withLock { state in
            state.purposes = purposes
            hasPurposes.store(purposes.isEmpty ? 0 : 1)
        }
        if let consent = restored.consent, consent != inbox.consent || !purposes.isEmpty {
            inbox.setConsent(consent)
            tellDestinations()
        }
        var round = held.round
        deliver(&round)
        return true
    }
}
