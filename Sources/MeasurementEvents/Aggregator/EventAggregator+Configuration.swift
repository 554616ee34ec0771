import Foundation

extension EventAggregator {
    /// Where trackers are called.
    public enum Delivery: Sendable {
        /// On the aggregator's own serial queue; `post` returns at once.
        case asynchronous
        /// On the posting thread, before `post` returns, one event at a time.
        case synchronous
    }

    /// How an aggregator delivers, holds, attributes and reports events; set before it is made.
    public struct Configuration: Sendable {
        /// Whether trackers run on the aggregator's queue (the default) or on the posting thread.
        public var delivery: Delivery = .asynchronous
        /// When true, events are held (bounded) until ``markReady()``: for apps whose vendors
        /// finish setting up after the first events are posted.
        public var holdsEventsUntilReady = false
        /// The most events held while not ready or awaiting consent; the oldest are dropped
        /// and counted beyond it.
        public var heldEventLimit = 1_000
        /// Also accept notifications of the Objective-C AQSEvent library
        /// (`org.openaquamarine.measurement_event`, keys `event_name` and `event_args`).
        public var acceptsLegacyAQSNotifications = false
        /// Remember the names that were posted but filtered out: the usual sign of a missing
        /// allow-list entry. On in debug builds.
        public var recordsFilteredOutNames: Bool = {
            #if DEBUG
                return true
            #else
                return false
            #endif
        }()
        /// The consent at the first launch. Later launches start with the consent the
        /// ``identityStore`` remembered.
        public var consent: MeasurementEvents.Consent = .granted
        /// Where identity, consent and the session are remembered across launches. `nil` (the
        /// default) keeps them in memory only: a new anonymous id every launch.
        public var identityStore: (any IdentityStore)?
        /// How sessions are cut, and whether session events are sent.
        public var sessions = SessionRules()
        /// Where event timestamps and session times come from. `nil`: the system clock.
        public var clock: (any EventClock)?
        /// Makes the device and app context, at start and on returning to the foreground.
        /// `nil`: ``EventContext/current(bundleInfo:locale:timeZone:)``.
        public var context: (@Sendable () -> EventContext)?
        /// How long asynchronous delivery waits after the first event of a burst before it
        /// wakes the delivery queue, so that one wake-up serves the whole burst instead of
        /// one per post (a wake-up costs about as much as a post). Events reach trackers at
        /// most this much later; ``EventAggregator/waitUntilDelivered()`` does not wait for it.
        /// Zero wakes the queue at once.
        public var deliveryCoalescing: TimeInterval = 0.002
        /// The most events posted and not yet delivered (asynchronous delivery). A post beyond
        /// it is dropped (the newest event, not the ones already waiting), counted in
        /// ``Diagnostics/droppedInFlight``, and the first drop of an episode is reported as
        /// ``Problem/inFlightLimitReached(limit:)``; the episode ends when the backlog is under
        /// half the limit.
        ///
        /// The default, 10,000, is never reached by an app posting at human rates (a few events
        /// a second; delivery takes a few microseconds each): only a tracker stalled for
        /// minutes or a posting loop reaches it, and it bounds the memory they can take to a
        /// few megabytes.
        public var maximumInFlightEvents = 10_000
        /// Called, outside the aggregator's lock, for each malformed notification, tracker
        /// failure, dropped held event and identity store failure. Everything reported is also
        /// counted in ``Diagnostics``. It may post, but an event posted for every dropped held
        /// event is itself held and drops the next one: report such problems once, not per event.
        public var problemHandler: (@Sendable (Problem) -> Void)?

        /// The defaults: asynchronous delivery, consent granted, an in-memory identity store, 30-minute sessions.
        public init() {}

        /// The app's context (``context``), or the one collected from Foundation.
        func makeContext() -> EventContext {
            context?() ?? .current()
        }
    }
}
