import Foundation
import MeasurementEvents

extension EventAggregator {
    /// Something that went wrong, reported to ``Configuration/problemHandler``.
    public enum Problem: Sendable, CustomStringConvertible {
        /// A notification on the event name could not be read as an event; it was counted and dropped.
        case malformedNotification(MalformedEventError)
        /// A notification on the identity name could not be read as an identity change; it was counted and dropped.
        case malformedIdentityChange(MalformedIdentityError)
        /// A tracker threw for an event; the other trackers still received it.
        case trackerFailed(tracker: String, event: EventName, error: String)
        /// An event held until ``EventAggregator/markReady()`` was dropped because the hold was full.
        case heldEventDropped(EventName)
        /// The identity store could not be read (it was replaced) or written.
        case identityStoreFailed(IdentityStoreError)
        /// An allow- or deny-list entry that matches nothing (`cart*`); reported at ``EventAggregator/start()``.
        case invalidPattern(EventPatternError)
        /// ``Configuration/maximumInFlightEvents`` events were waiting for delivery: newer
        /// posts are dropped (and counted) until the delivery queue catches up. Reported once
        /// per episode, on the posting thread.
        case inFlightLimitReached(limit: Int)
        /// Something odd about ``Configuration/catalogs``: a catalog given twice, conflicting
        /// `pii` marks, a personal-data arg that is not text. Reported when the aggregator is made.
        case catalogRegistration(CatalogRegistrationProblem)
        /// An event broke the registered catalogs (see ``Configuration/planConformance``);
        /// reported on the delivery queue, before the processors run.
        case planViolation(PlanViolation)
        /// Events were posted on the aggregator's center, but it was never started, so it
        /// received none of them. Reported once, at the first ``EventAggregator/waitUntilDelivered()``,
        /// ``EventAggregator/flush()`` or read of ``EventAggregator/diagnostics`` after such posts.
        case notStarted(eventsPosted: Int, anotherAggregatorStarted: Bool)
        /// A posted name that the filter does not keep: reported once per name, the first time
        /// it is posted, on the posting thread; every post of it is counted in
        /// ``Diagnostics/filteredOut``. The usual sign of a missing allow-list entry.
        case filteredOut(EventName)
        /// The aggregator started with an empty allow-list (no filter and no
        /// ``EventAggregator/allowList``, or `EventFilter.denyAll`): it keeps no event.
        /// Reported at ``EventAggregator/start()``.
        case emptyAllowList
        /// Debug builds of an app or an app extension on an Apple platform (a process with a
        /// bundle identifier; not a server or a tool run with `swift run`), outside tests and
        /// previews: the ``Configuration/identityStore`` keeps identity in memory, so every launch
        /// is a new user. Reported when the aggregator is made.
        case identityInMemory
        /// The ``Configuration/identityStore`` is a ``FileIdentityStore`` in an App Group
        /// container: it holds a file lock there for as long as it lives, and iOS kills a
        /// suspended app that holds one (`0xdead10cc`). Keep the store in the app's own
        /// container; the article "Identity and sessions" shows how to share the anonymous id
        /// with an app extension. Reported when the aggregator is made.
        case identityStoreInAppGroupContainer(path: String)
        /// A tracker told of a problem of its own (``TrackerProblemReporting``), such as a vendor
        /// refusing its key: the destination's name and the problem, once per episode.
        case trackerProblem(tracker: String, problem: String)
        /// A destination was left out because another destination already has its tracker object
        /// (a tracker receives each event once): the destination's name. Reported when it is given.
        case duplicateDestination(String)
        /// Debug builds: ``EventAggregator/flush()`` (the app going to the background) found the
        /// consent still pending, with trackers, and ``EventAggregator/setConsent(_:)`` never
        /// called: nothing is sent. Reported once.
        case consentNeverDecided(MeasurementEventsAggregator.Consent)
        /// An event was posted after ``EventAggregator/shutdown(deadline:)`` began: it was not
        /// accepted. Reported once, for the first such post (on its thread); every one is counted
        /// in ``Diagnostics/postedAfterShutdown``.
        case postedAfterShutdown(EventName)
        /// A `MeasurementRequestContext` was over its limits (too many attributes or traits, a
        /// value or id too long): what was left out. Reported once per context change, on the
        /// posting thread of its first event; counted in ``Diagnostics/requestContextsTrimmed``.
        case requestContextTrimmed(MeasurementRequestContext.Trimmed)

        /// The problem, in a sentence for a log.
        public var description: String {
            switch self {
            case .malformedNotification(let error): return error.description
            case .malformedIdentityChange(let error): return error.description
            case .trackerFailed(let tracker, let event, let error):
                return "tracker \(tracker) failed on \(event): \(error)"
            case .heldEventDropped(let name):
                return "held event \(name) dropped: more than the held-event limit were waiting"
            case .identityStoreFailed(let error): return error.description
            case .invalidPattern(let error): return error.description
            case .inFlightLimitReached(let limit):
                return
                    "\(limit) events were waiting for delivery: newer events are dropped until delivery catches up (counted in droppedInFlight)"
            case .catalogRegistration(let problem): return problem.description
            case .planViolation(let violation): return violation.description
            case .notStarted(let posted, false):
                return
                    "an event was posted but no aggregator has been started on this center; call start() (\(posted) posted so far, none received)"
            case .notStarted(let posted, true):
                return
                    "\(posted == 1 ? "an event was" : "\(posted) events were") posted on this aggregator's center but it was never started (another aggregator on that center was); call start() on it"
            case .filteredOut(let name):
                return "`\(name)` is not on the allow-list; it will be counted in diagnostics.filteredOut"
            case .consentNeverDecided(let consent):
                return
                    "consent is still \(consent.rawValue) and setConsent(_:) was never called: trackers that wait for "
                    + "consent (an HTTPTracker) send nothing, and events are \(consent == .pendingHolding ? "held in memory" : "discarded"); "
                    + "call setConsent(_:) once the user decides (said in debug builds only)"
            case .identityInMemory:
                return
                    "the identity store keeps identity in memory: every launch of the app is a new user, and hashes of "
                    + "personal data change at every launch; use the default (FileIdentityStore.standard) outside "
                    + "tests and previews (said in debug builds only)"
            case .identityStoreInAppGroupContainer(let path):
                return
                    "the identity store \(path) is in an App Group container: iOS kills a suspended app that holds a "
                    + "file lock there (0xdead10cc), and the store holds one; use a directory in the app's own "
                    + "container (to share the anonymous id with an extension, see the article \"Identity and sessions\")"
            case .trackerProblem(let tracker, let problem):
                return "destination \(tracker): \(problem)"
            case .duplicateDestination(let name):
                return
                    "destination \(name) was left out: another destination already has its tracker object, and a "
                    + "tracker receives each event once; give each destination its own tracker"
            case .postedAfterShutdown(let name):
                return
                    "\(name) was posted after shutdown(deadline:) began and was not accepted; later posts are counted in "
                    + "diagnostics.postedAfterShutdown (said once)"
            case .emptyAllowList:
                return
                    "the allow-list is empty: no event will be kept; every post will be counted in diagnostics.filteredOut"
            case .requestContextTrimmed(let trimmed):
                return "\(trimmed) (its events carry the rest; counted in diagnostics.requestContextsTrimmed)"
            }
        }
    }

    /// Counters since the aggregator was made.
    public struct Diagnostics: Sendable, Equatable {
        /// Event notifications observed, well-formed or not.
        public var received = 0
        /// Events handed to ``didReceive(_:)`` and the trackers.
        public var forwarded = 0
        /// Events the filter did not keep.
        public var filteredOut = 0
        /// Event notifications that could not be read as events.
        public var malformed = 0
        /// Held events dropped because the held-event limit was reached.
        public var dropped = 0
        /// Events discarded by a processor (sampling, for instance) or for lack of consent.
        public var discarded = 0
        /// Events dropped at posting because ``Configuration/maximumInFlightEvents`` were
        /// waiting for delivery.
        public var droppedInFlight = 0
        /// Posts that waited on their thread for room under ``Configuration/maximumInFlightEvents``
        /// (``Configuration/whenInFlightLimitIsReached``); those that found none in time are also
        /// in ``droppedInFlight``.
        public var postsThatWaitedForRoom = 0
        /// `async` posts (``EventAggregator/post(_:type:category:args:file:line:)``) that
        /// suspended until there was room under ``Configuration/maximumInFlightEvents``.
        public var postsThatSuspendedForRoom = 0
        /// Posts refused because ``EventAggregator/shutdown(deadline:)`` had begun.
        public var postedAfterShutdown = 0
        /// Tracker calls that threw.
        public var trackerFailures = 0
        /// Problems trackers told of themselves (``TrackerProblemReporting``): a refused key.
        public var trackerProblems = 0
        /// Events held right now, waiting for ``markReady()`` or consent.
        public var held = 0
        /// Destinations' copies of events held right now until the purposes of consent those
        /// destinations need are granted (``EventAggregator/setConsent(_:for:)``).
        public var heldForPurposes = 0
        /// Destinations' copies of events not sent because a purpose of consent their destination
        /// needs was denied (or pending-discarding, or denied while they were held), by that
        /// purpose (the first by name when several were).
        public var withheldByPurpose: [ConsentPurpose: Int] = [:]
        /// Events held right now because the identity store cannot be read yet (a launch before
        /// the device's first unlock): delivered, stamped with the stored identity, once it can.
        /// At most ``Configuration/heldEventLimit``; the oldest beyond it are counted in ``dropped``.
        public var heldUntilStoreReadable = 0
        /// Identity changes received (identify, reset, group); they are never filtered.
        public var identityChanges = 0
        /// Identity change notifications that could not be read.
        public var malformedIdentityChanges = 0
        /// Request contexts over their limits, reported (``Problem/requestContextTrimmed(_:)``).
        public var requestContextsTrimmed = 0
        /// Sessions started.
        public var sessionsStarted = 0
        /// Identity store reads or writes that failed.
        public var identityStoreFailures = 0
        /// Problems found in ``Configuration/catalogs`` when the aggregator was made.
        public var catalogProblems = 0
        /// Violations of the registered catalogs, by kind (see ``Configuration/planConformance``).
        public var planViolations: [PlanViolation.Kind: Int] = [:]
        /// Events not delivered because a violation's action was ``PlanConformancePolicy/Action/block``.
        public var blockedByPlan = 0
        /// Filtered-out names and how often each was posted, when recorded.
        public var filteredOutNames: [EventName: Int] = [:]
        /// The most recent malformed notifications (up to 20), newest last.
        public var recentMalformed: [MalformedEventError] = []
    }
}
