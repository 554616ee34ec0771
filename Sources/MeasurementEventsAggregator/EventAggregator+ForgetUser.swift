import Foundation
import MeasurementEvents

extension EventAggregator {
    /// Deletes what the package keeps about the current user on this device, for a "delete my
    /// data" request, and starts afresh as a new anonymous user:
    ///
    /// - events posted before the call are delivered first, then every tracker's undelivered
    ///   events are deleted (`discardPending()`: an `HTTPTracker` deletes its queue on disk);
    ///   events held while consent (or a destination's purpose) is pending are dropped;
    /// - the identity is replaced by a new anonymous id with no user, traits or group, the
    ///   session ends, and the identity store is overwritten at once (a `FileIdentityStore` also
    ///   deletes the damaged copy it may have set aside).
    ///
    /// While the identity store cannot be read yet (a launch before the device's first unlock),
    /// all of this happens once it is read, after the events posted before the call.
    ///
    /// Consent and the app's release stay: they belong to the install. What vendors already
    /// received stays on their servers: deleting it takes each vendor's own deletion API (see the
    /// article "Privacy and consent").
    ///
    /// ```swift
    /// aggregator.forgetUser()
    /// ```
    public func forgetUser() {
        waitUntilDelivered()
        onDeliveryContext {
            if !self.holdsUntilStoreReadable(.forgetUser) { self.forgetUserNow() }
        }
    }

    /// ``forgetUser()`` in the delivery context, once what was posted before it was delivered.
    func forgetUserNow() {
        let (trackers, discarded) = state.withLock { state -> ([any EventTracker], [Held]) in
            state.diagnostics.discarded += state.held.count + state.heldForPurposes.count
            let discarded = inbox.recordsTrail ? state.held : []
            state.held.removeAll()
            state.diagnostics.held = 0
            // Destinations' copies waiting for their purposes are the user's events too.
            state.heldForPurposes.removeAll()
            state.diagnostics.heldForPurposes = 0
            return (state.trackers, discarded)
        }
        recordDiscarded(discarded, .dropped(reason: "discarded by forgetUser()"))
        if let problem = attribution.forgetUser(at: configuration.clock?.now() ?? Date()) {
            reportStoreProblem(problem)
        }
        for tracker in trackers { call(tracker, on: nil) { try $0.discardPending() } }
    }
}
