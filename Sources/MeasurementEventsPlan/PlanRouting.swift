import MeasurementEvents
import MeasurementEventsAggregator

/// The plan shared by a plan-built aggregator's processor and destination trackers, so that
/// ``EventAggregator/applyPlan(_:)`` swaps it for all of them at once.
final class TrackingPlanHolder: Sendable {
    private let current: LockedValue<TrackingPlan>

    init(_ plan: TrackingPlan) { current = LockedValue(plan) }

    var plan: TrackingPlan {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}

/// Hands an event to one named tracker when the plan routes it there.
public struct PlanDestinationTracker: EventTracker {
    /// The destination's name in the plan.
    public let destination: String
    /// The tracker events routed to the destination go to.
    public let tracker: any EventTracker
    let holder: TrackingPlanHolder

    /// A tracker failure, named after its destination.
    public struct Failure: Error, CustomStringConvertible {
        /// The destination's name.
        public let destination: String
        /// What its tracker threw.
        public let error: any Error
        /// The destination and its tracker's error.
        public var description: String { "destination \(quotedInFull(destination)): \(error)" }
    }

    /// Hands `event` to the tracker when the plan routes it to this destination.
    ///
    /// - Parameter event: the event.
    /// - Throws: ``Failure`` when the tracker throws.
    public func track(_ event: MeasurementEvent) throws {
        guard holder.plan.sends(event.name, to: destination) else { return }
        do { try tracker.track(event) } catch { throw Failure(destination: destination, error: error) }
    }

    /// Hands an identity change to the destination's tracker: identity is not routed by the
    /// plan, every destination follows it.
    ///
    /// - Parameter event: the identity change.
    /// - Throws: ``Failure`` when the tracker throws.
    public func identify(_ event: IdentityEvent) throws {
        do { try tracker.identify(event) } catch { throw Failure(destination: destination, error: error) }
    }

    /// Tells the destination's tracker the consent in force: an `HTTPTracker` behind a
    /// destination sends nothing until it hears `.granted`.
    ///
    /// - Parameter consent: the consent in force from now on.
    /// - Throws: ``Failure`` when the tracker throws.
    public func consentDidChange(to consent: Consent) throws {
        do { try tracker.consentDidChange(to: consent) } catch { throw Failure(destination: destination, error: error) }
    }

    /// Flushes the destination's tracker.
    ///
    /// - Throws: ``Failure`` when the tracker throws.
    public func flush() throws {
        do { try tracker.flush() } catch { throw Failure(destination: destination, error: error) }
    }

    /// Deletes whatever the destination's tracker holds and has not delivered yet.
    ///
    /// - Throws: ``Failure`` when the tracker throws.
    public func discardPending() throws {
        do { try tracker.discardPending() } catch { throw Failure(destination: destination, error: error) }
    }
}

/// Applies the plan's labels; discards screen views of screens the plan does not list.
struct PlanLabelProcessor: EventProcessor {
    let holder: TrackingPlanHolder

    func process(_ event: MeasurementEvent) -> MeasurementEvent? {
        let plan = holder.plan
        var event = event
        if event.name == TrackingPlan.screenViewEvent {
            guard let screen = event.args["screen"]?.stringValue, let label = plan.label(forScreen: screen) else {
                return nil
            }
            event.label = label
        } else if let tracked = plan.trackedEvent(named: event.name) {
            event.label = tracked.label
        }
        return event
    }
}
