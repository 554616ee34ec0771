import Foundation
import MeasurementEvents

extension EventAggregator {
    /// Where trackers are called.
    public enum Delivery: Sendable {
        /// On the aggregator's own serial queue; `post` returns at once.
        case asynchronous
        /// On the posting thread, before `post` returns, one event at a time.
        case synchronous
    }

    /// What a post does when ``Configuration/maximumInFlightEvents`` events are already waiting
    /// for delivery (asynchronous delivery).
    public enum InFlightLimitBehavior: Sendable, Equatable {
        /// The post returns at once and its event is dropped (the newest, not the ones already
        /// waiting), counted in ``Diagnostics/droppedInFlight``; the first drop of an episode is
        /// reported (``Problem/inFlightLimitReached(limit:)``). The default: an app's posting
        /// thread, often the main thread, never waits for delivery.
        case dropNewest
        /// The post waits on its thread until the delivery queue has made room, at most
        /// `seconds`; then it drops and counts the event as ``dropNewest`` does. Each post that
        /// waited is counted in ``Diagnostics/postsThatWaitedForRoom``. For servers, whose
        /// request handlers can afford to slow down (``Configuration/server``); never the main
        /// thread of an app. A post made from delivery code (a tracker, a processor) never
        /// waits: only the delivery queue makes room.
        case wait(atMostSeconds: TimeInterval)
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
        public var consent: MeasurementEventsAggregator.Consent = .granted
        /// Where identity, consent, the session and the salt of personal data are remembered
        /// across launches. The default, ``FileIdentityStore/standard``, keeps one anonymous id
        /// per install in a per-user, per-app directory (see
        /// ``FileIdentityStore/standardDirectory``); `.inMemory` keeps them in memory only, a new
        /// anonymous id every launch: for tests and previews.
        public var identityStore: any IdentityStore = FileIdentityStore.standard
        /// How sessions are cut, and whether session events are sent.
        public var sessions = SessionRules()
        /// Where event timestamps and session times come from. `nil`: the system clock.
        public var clock: (any EventClock)?
        /// Makes the device and app context, at start and on returning to the foreground.
        /// `nil`: `EventContext.current(bundleInfo:locale:timeZone:)`.
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
        /// What a post does when ``maximumInFlightEvents`` are waiting: drop the newest (the
        /// default, for apps) or wait a bounded time for room (``Configuration/server``). An
        /// `async` post (``EventAggregator/post(_:type:category:args:file:line:)``) suspends
        /// until there is room whatever this says.
        public var whenInFlightLimitIsReached = InFlightLimitBehavior.dropNewest
        /// Called, outside the aggregator's lock, for each malformed notification, tracker
        /// failure, dropped held event and identity store failure. Everything reported is also
        /// counted in ``Diagnostics``. It may post, but an event posted for every dropped held
        /// event is itself held and drops the next one: report such problems once, not per event.
        ///
        /// The default writes each problem to standard error in debug builds
        /// (``EventAggregator/Problem/writeToStandardError``) and is `nil`, silent, in release
        /// builds; set it to send problems to your logging in both.
        public var problemHandler: (@Sendable (Problem) -> Void)? = Problem.debugBuildDefault

        /// The catalogs of the app's modules (`<Module>Events.catalog` in each generated file):
        /// the args they mark `"pii": true` are hashed (salted SHA-256, see
        /// ``PersonalDataProcessor``) in every event before ``EventAggregator/didReceive(_:)``
        /// and the trackers see it, after the ``EventAggregator/init(center:filter:trackers:processors:configuration:)``
        /// processors. Registering the same catalog twice, or catalogs that disagree about an
        /// arg, is reported to the ``problemHandler`` (see ``CatalogRegistrationProblem``).
        ///
        /// ```swift
        /// configuration.catalogs = [DemoFeedEvents.catalog, DemoSettingsEvents.catalog]
        /// ```
        ///
        /// To send personal data in clear, say so where it can be seen: per arg with
        /// ``personalDataSentInClear``, per tracker with
        /// ``EventTracker/receivingPersonalDataInClear()``.
        public var catalogs: [EventCatalog] {
            get { catalogList }
            set {
                catalogList = newValue
                registering = EventAggregator.register
            }
        }
        private(set) var catalogList: [EventCatalog] = []
        /// How the aggregator registers the ``catalogs``: set with them, so that the code that
        /// merges catalogs and checks the plan is reached, and linked, only in an app that sets
        /// them (Package.swift, "Dead stripping by function"); `nil` until then.
        private(set) var registering: (@Sendable (Configuration) -> RegisteredSupport)?
        /// The salt of the personal-data hashes. `nil` (the default): the install's salt, a random
        /// one made with the anonymous id and kept in the ``identityStore`` (never sent), so that
        /// one install's hashes stay the same across launches but cannot be joined across
        /// installs or apps; ``EventAggregator/forgetUser()`` replaces it. Set a secret of your
        /// own, the same in every install, to join hashes across installs (at the cost that anyone
        /// holding it can test guesses against every hash).
        public var personalDataSalt: String?
        /// Personal-data args sent in clear despite their catalog's `"pii"` mark, by event:
        /// `["checkout/paid": ["email"]]`. Empty by default.
        public var personalDataSentInClear: [EventName: Set<String>] = [:]
        /// What to do with events that break the registered ``catalogs`` (the tracking plan):
        /// by default every event is checked before the processors run and every violation is
        /// reported to the ``problemHandler`` and counted in ``Diagnostics/planViolations``;
        /// none is blocked. Without catalogs nothing is checked.
        public var planConformance = PlanConformancePolicy()
        /// Receives every posted event's trail (what was decided, each tracker's outcome), for an
        /// inspector or a debugging tool. `nil`, the default: nothing of it runs or allocates.
        public var trail: (any EventTrailObserver)?

        /// The app's steps, inserted before or after built-in steps (``insert(_:before:)``,
        /// ``insert(_:after:)``); none by default, and then the pipeline pays nothing for them.
        var insertedSteps: [InsertedStep] = []

        /// The defaults: asynchronous delivery, consent granted, identity persisted in
        /// ``FileIdentityStore/standard``, 30-minute sessions.
        public init() {}

        /// The settings for a server: many users' requests in one process, events sent to a
        /// collector. Every setting can still be changed afterwards.
        ///
        /// ```swift
        /// var configuration = EventAggregator.Configuration.server
        /// configuration.sessions.isEnabled = true  // only when sessions are wanted
        /// ```
        ///
        /// What it sets, against the app defaults of ``init()``:
        /// - No app lifecycle: nothing of it is observed or expected (do not add
        ///   `AppLifecycleObserver`); ``EventAggregator/shutdown(deadline:)`` ends the run.
        /// - No device context from the host: ``context`` keeps the operating system (the
        ///   service's runtime, OpenTelemetry's resource) and leaves out the host's device
        ///   model, locale and time zone, which say nothing about the users.
        /// - Sessions off (``SessionRules/isEnabled`` is `false`): events carry no session id of
        ///   the aggregator's (a request context may give its own) and no session events are made.
        ///   Turn them on to have them.
        /// - Identity in memory (``InMemoryIdentityStore``): a server has no install to
        ///   remember; each request says who its user is.
        /// - Back-pressure instead of shedding: ``maximumInFlightEvents`` is 50,000 and a post
        ///   beyond it waits up to 2 seconds for room (``whenInFlightLimitIsReached``); an
        ///   `async` post suspends until there is room.
        /// - Filtered-out names are not recorded (``recordsFilteredOutNames``), even in debug.
        ///
        /// The disk queue's size and gzip bodies are the tracker's settings: use
        /// `HTTPTracker.Configuration.server` (module `MeasurementEventsHTTP`) for the tracker
        /// that sends to the collector. Stop the service with
        /// ``EventAggregator/shutdown(deadline:)``.
        public static var server: Configuration {
            var configuration = Configuration()
            configuration.identityStore = InMemoryIdentityStore()
            configuration.sessions.isEnabled = false
            configuration.context = {
                var context = EventContext.current()
                context.device = EventContext.Device()
                context.locale = nil
                context.timeZone = nil
                return context
            }
            configuration.maximumInFlightEvents = 50_000
            configuration.whenInFlightLimitIsReached = .wait(atMostSeconds: 2)
            configuration.recordsFilteredOutNames = false
            return configuration
        }

        /// The app's context (``context``), or the one collected from Foundation.
        func makeContext() -> EventContext {
            context?() ?? .current()
        }
    }
}
