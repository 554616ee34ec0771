import Dispatch
import Foundation
import MeasurementEvents

/// Identity, consent, sessions and app lifecycle: what the aggregator applies between events.
extension EventAggregator {
    // MARK: Identity

    /// The identity, session and context as of the latest delivered event or identity change.
    public var currentAttribution: EventAttribution { attribution.published.withLock { $0 } }

    /// Applies a control in the delivery context.
    func apply(_ control: Inbox.Control) {
        switch control.action {
        case .identity(let change):
            let id = state.withLock { $0.ids.next() }
            let (event, problem) = attribution.apply(change, at: control.timestamp, id: id)
            if let problem { reportStoreProblem(problem) }
            if let destinations = admitOrHold(.identity(event), postedWithoutConsent: control.consentAtPost.discards) {
                forward(event, to: destinations.trackers)
            }
        case .enterBackground:
            if let problem = attribution.enterBackground(at: control.timestamp) { reportStoreProblem(problem) }
        case .enterForeground:
            let (ended, problem) = attribution.enterForeground(
                at: control.timestamp, context: configuration.makeContext())
            if let problem { reportStoreProblem(problem) }
            if let ended, configuration.sessions.emitsEvents, !control.consentAtPost.discards {
                deliverStamped(sessionEvents(for: SessionTimeline.Transition(ended: ended)))
            }
        case .refreshContext:
            attribution.replaceContext(configuration.makeContext())
        case .forgetUser:
            forgetUserNow()
        case .recordRelease(let version, let build, let whenKnown):
            whenKnown(recordAppReleaseNow(version: version, build: build))
        }
    }

    /// The events that say a session ended and another started, stamped as their sessions.
    func sessionEvents(for transition: SessionTimeline.Transition) -> [MeasurementEvent] {
        let rules = configuration.sessions
        var events: [MeasurementEvent] = []
        // The session id travels in the attribution (an Int64); no arg repeats it, so that
        // nothing needs an Int wider than 32 bits.
        if let ended = transition.ended {
            var event = MeasurementEvent(
                rules.endedEventName, type: .activity,
                args: ["duration_seconds": .double(max(0, ended.lastActivityAt.timeIntervalSince(ended.startedAt)))],
                id: MeasurementEvent.placeholderID, timestamp: ended.lastActivityAt)
            var endedAttribution = attribution.currentAttribution
            endedAttribution.sessionID = ended.id
            event.attribution = endedAttribution
            events.append(event)
        }
        if let started = transition.started {
            var event = MeasurementEvent(
                rules.startedEventName, type: .activity, id: MeasurementEvent.placeholderID,
                timestamp: started.startedAt)
            event.attribution = attribution.currentAttribution
            events.append(event)
        }
        return events
    }

    // MARK: App lifecycle

    /// Call when the app goes to the background (the lifecycle observer does): the session's
    /// inactivity counts from now, and every tracker is flushed on the delivery queue, after
    /// the events posted before this call, never on the caller's thread.
    public func applicationDidEnterBackground() {
        inbox.receive(.enterBackground)
        switch configuration.delivery {
        case .asynchronous:
            queue.async {
                self.inbox.drain()
                self.flushTrackers()
            }
        case .synchronous:
            DispatchQueue.global().async { self.onDeliveryContext { self.flushTrackers() } }
        }
    }

    /// Call when the app returns to the foreground (the lifecycle observer does): a session
    /// that spent ``SessionRules/timeout`` or longer in the background has ended, and the
    /// context is collected again.
    public func applicationWillEnterForeground() {
        inbox.receive(.enterForeground)
    }

    /// Collects the context again (``Configuration/context``) for the events posted from now on.
    public func refreshContext() {
        inbox.receive(.refreshContext)
    }

    /// What a launch is, compared with the previous one the identity store remembers.
    public enum AppRelease: Sendable, Equatable {
        /// No launch was ever recorded.
        case installed
        /// The version or build differ from the previous launch's.
        case updated(previousVersion: String?, previousBuild: String?)
        /// The same version and build as the previous launch.
        case unchanged
    }

    /// Records this launch's app version and build in the identity store and says how they
    /// compare with the previous launch's. Waits for the delivery queue.
    ///
    /// While the identity store cannot be read yet (a launch before the device's first unlock,
    /// see ``IdentityStoreError/isNotReadableYet``) it returns ``AppRelease/unchanged`` and the
    /// release is recorded once the store is read; `AppLifecycleObserver` then posts
    /// `app/installed` or `app/updated`, so that a launch in the background is never taken for
    /// an install.
    ///
    /// - Parameters:
    ///   - version: this launch's `CFBundleShortVersionString`.
    ///   - build: this launch's `CFBundleVersion`.
    /// - Returns: whether this launch is an install, an update or neither.
    public func recordAppRelease(version: String?, build: String?) -> AppRelease {
        recordAppRelease(version: version, build: build, whenKnown: { _ in }) ?? .unchanged
    }

    /// ``recordAppRelease(version:build:)``, or, while the identity store cannot be read yet,
    /// `nil` now and `whenKnown` called in the delivery context once it is read.
    package func recordAppRelease(
        version: String?, build: String?, whenKnown: @escaping @Sendable (AppRelease) -> Void
    ) -> AppRelease? {
        let result = LockedValue<AppRelease?>(nil)
        onDeliveryContext {
            if self.holdsUntilStoreReadable(.recordRelease(version: version, build: build, whenKnown: whenKnown)) {
                return
            }
            let release = self.recordAppReleaseNow(version: version, build: build)
            result.withLock { $0 = release }
        }
        return result.withLock { $0 }
    }

    /// Records the release in the store (delivery context).
    func recordAppReleaseNow(version: String?, build: String?) -> AppRelease {
        let (release, problem) = attribution.recordAppRelease(version: version, build: build)
        if let problem { reportStoreProblem(problem) }
        return release
    }

    // MARK: Consent

    /// Changes consent, and remembers it in the identity store. Granting delivers what was
    /// held; denying discards what is held here and asks every tracker to
    /// ``EventTracker/discardPending()``. Every tracker hears of it
    /// (``EventTracker/consentDidChange(to:)``) first.
    ///
    /// A denial returns once the trackers have stopped sending: an `HTTPTracker` waits for a
    /// request already on the wire to complete (at most its request timeout, 30 s by default),
    /// so that no byte leaves after this returns. Where an upload may be under way, call it off
    /// the main thread.
    ///
    /// - Parameter consent: the user's choice.
    public func setConsent(_ consent: MeasurementEventsAggregator.Consent) {
        consentDecision.decided()
        // In the delivery context, so that a denial and its discardPending() are one step that
        // no delivery (and no concurrent change of consent) can come between.
        onDeliveryContext { self.putInForce(consent) }
        if consent == .granted { releaseHeldEvents() }
    }

    /// Makes `consent` the one in force (in the delivery context): what is held is discarded
    /// when it discards, the identity store remembers it, and every tracker hears of it.
    func putInForce(_ consent: MeasurementEventsAggregator.Consent) {
        // The one record of the consent in force, changed in the delivery context only.
        inbox.setConsent(consent)
        let (hadPurposes, discarded) = state.withLock { state -> (Bool, [Held]) in
            var discarded: [Held] = []
            if consent.discards {
                state.diagnostics.discarded += state.held.count
                if inbox.recordsTrail { discarded = state.held }
                state.held.removeAll()
                state.diagnostics.held = 0
            }
            return (!state.purposes.isEmpty || !state.heldForPurposes.isEmpty, discarded)
        }
        recordDiscarded(discarded, .discardedWithoutConsent)
        if let problem = attribution.setConsent(consent) { reportStoreProblem(problem) }
        // The single consent is every purpose's: none keeps one of its own.
        if hadPurposes { applyPurposes(nil) }
        tellDestinations()
    }

    /// At start: every tracker learns the consent in force before any event reaches it; a
    /// consent remembered as denied makes them discard what a previous run queued.
    func announceConsent() {
        onDeliveryContext { self.tellDestinations() }
    }

    /// Tells each destination's tracker the consent it is under (the aggregator's, or its
    /// purposes' when it needs some), and has it discard what it holds when that is a denial.
    func tellDestinations() {
        let (destinations, purposes) = state.withLock { ($0.destinations.all, $0.purposes) }
        let global = inbox.consent
        for destination in destinations {
            let consent = destination.consent(purposes: purposes, global: global)
            call(destination.tracker, on: nil) { try $0.consentDidChange(to: consent) }
            if consent == .denied { call(destination.tracker, on: nil) { try $0.discardPending() } }
        }
    }
}
