import Dispatch
import Foundation

/// Identity, consent, sessions and app lifecycle: what the aggregator applies between events.
extension EventAggregator {
    // MARK: Identity

    /// The identity, session and context as of the latest delivered event or identity change.
    public var currentAttribution: EventAttribution { attribution.published.withLock { $0 } }

    func receiveIdentity(_ notification: Notification) {
        let change: IdentityChange
        do {
            change = try IdentityChange(notification: notification)
        } catch {
            state.withLock { $0.diagnostics.malformedIdentityChanges += 1 }
            configuration.problemHandler?(.malformedIdentityChange(error))
            return
        }
        state.withLock { $0.diagnostics.identityChanges += 1 }
        enqueue(.identity(change))
    }

    /// Queues `action` behind the events received so far, or applies it at once with
    /// synchronous delivery.
    func enqueue(_ action: Control.Action) {
        let timestamp = inbox.now()
        switch configuration.delivery {
        case .asynchronous:
            let appended = inbox.postingSlot().buffer.append(
                Control(position: 0, action: action, timestamp: timestamp, consentAtPost: inbox.consent),
                numberedBy: inbox.buffers.sequence)
            if appended.requestsDrain { inbox.requestDrain() }
        case .synchronous:
            let consent = self.consent
            synchronousDelivery.lock()
            defer { synchronousDelivery.unlock() }
            apply(Control(position: 0, action: action, timestamp: timestamp, consentAtPost: consent))
        }
    }

    /// Applies a control in the delivery context.
    func apply(_ control: Control) {
        switch control.action {
        case .identity(let change):
            let id = state.withLock { $0.ids.next() }
            let (event, problem) = attribution.apply(change, at: control.timestamp, id: id)
            if let problem { reportStoreProblem(problem) }
            if let trackers = admitOrHold(.identity(event), consentAtPost: control.consentAtPost) {
                forward(event, to: trackers)
            }
        case .enterBackground:
            if let problem = attribution.enterBackground(at: control.timestamp) { reportStoreProblem(problem) }
        case .enterForeground:
            let (ended, problem) = attribution.enterForeground(
                at: control.timestamp, context: configuration.makeContext())
            if let problem { reportStoreProblem(problem) }
            if let ended, configuration.sessions.emitsEvents {
                var events = sessionEvents(for: SessionTimeline.Transition(ended: ended)).map {
                    Pending(event: $0, needsID: true, consentAtPost: control.consentAtPost)
                }
                deliverAll(&events, 0..<events.count)
            }
        case .refreshContext:
            attribution.replaceContext(configuration.makeContext())
        }
    }

    // MARK: App lifecycle

    /// Call when the app goes to the background (the lifecycle observer does): the session's
    /// inactivity counts from now, and every tracker is flushed on the delivery queue, after
    /// the events posted before this call, never on the caller's thread.
    public func applicationDidEnterBackground() {
        enqueue(.enterBackground)
        switch configuration.delivery {
        case .asynchronous:
            queue.async {
                self.drain()
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
        enqueue(.enterForeground)
    }

    /// Collects the context again (``Configuration/context``) for the events posted from now on.
    public func refreshContext() {
        enqueue(.refreshContext)
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
    /// - Parameters:
    ///   - version: this launch's `CFBundleShortVersionString`.
    ///   - build: this launch's `CFBundleVersion`.
    /// - Returns: whether this launch is an install, an update or neither.
    public func recordAppRelease(version: String?, build: String?) -> AppRelease {
        let result = LockedValue(AppRelease.unchanged)
        onDeliveryContext {
            let (release, problem) = self.attribution.recordAppRelease(version: version, build: build)
            if let problem { self.reportStoreProblem(problem) }
            result.withLock { $0 = release }
        }
        return result.withLock { $0 }
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
    public func setConsent(_ consent: MeasurementEvents.Consent) {
        // In the delivery context, so that a denial and its discardPending() are one step that
        // no delivery (and no concurrent change of consent) can come between.
        onDeliveryContext {
            let (trackers, discards) = self.state.withLock { state -> ([any EventTracker], Bool) in
                // The one record of the consent in force, changed under the state lock only.
                self.inbox.publish(consent)
                if consent.discards {
                    state.diagnostics.discarded += state.held.count
                    state.held.removeAll()
                    state.diagnostics.held = 0
                }
                return (state.trackers, consent == .denied)
            }
            if let problem = self.attribution.setConsent(consent) { self.reportStoreProblem(problem) }
            self.tell(trackers, consent: consent, discarding: discards)
        }
        if consent == .granted { releaseHeldEvents() }
    }

    /// At start: every tracker learns the consent in force before any event reaches it; a
    /// consent remembered as denied makes them discard what a previous run queued.
    func announceConsent() {
        onDeliveryContext {
            let (trackers, consent) = self.state.withLock { ($0.trackers, self.inbox.consent) }
            self.tell(trackers, consent: consent, discarding: consent == .denied)
        }
    }

    private func tell(_ trackers: [any EventTracker], consent: MeasurementEvents.Consent, discarding: Bool) {
        for tracker in trackers {
            call(tracker, on: nil) { try $0.consentDidChange(to: consent) }
            if discarding { call(tracker, on: nil) { try $0.discardPending() } }
        }
    }
}
