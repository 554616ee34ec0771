import Dispatch
import Foundation
import MeasurementEvents

/// Observes every measurement event posted on a notification center, keeps the ones its
/// filter allows, and hands them to its trackers.
///
/// Use it by composition:
///
/// ```swift
/// let aggregator = EventAggregator(
///     filter: EventFilter(allow: ["feed/*", "app/launched"]),
///     trackers: [ConsoleTracker(), JSONLinesFileTracker(url: logURL)])
/// aggregator.start()
/// ```
///
/// or by subclassing, overriding ``allowList`` (the "whitelist") and ``didReceive(_:)``:
///
/// ```swift
/// final class AppAggregator: EventAggregator, @unchecked Sendable {
///     static let shared = AppAggregator()
///     override var allowList: [EventPattern] { ["feed/*", "app/permission/*"] }
///     override func didReceive(_ event: MeasurementEvent) { Vendor.log(event) }
/// }
/// AppAggregator.shared.start()   // once, at launch
/// ```
///
/// The observer runs on the posting thread and only filters by name and queues the event (a
/// post made with `MeasurementEvent.post(_:type:category:args:to:file:line:)` is not even
/// decoded); processors, ``didReceive(_:)`` and trackers run on the aggregator's serial queue,
/// in posting order per posting thread (or on the posting thread with ``Delivery/synchronous``).
///
/// Identity changes (`MeasurementIdentity`) travel the same way, in order with the events of
/// their thread: every forwarded event carries the identity, session and device context in
/// force when it was posted (`MeasurementEvent.attribution`).
open class EventAggregator: @unchecked Sendable {
    // @unchecked: every mutable property lives in `state` behind its lock, or in the inbox;
    // `attribution` is touched in the delivery context only; the other stored properties are
    // immutable.

    /// The notification center the aggregator observes.
    public let center: NotificationCenter
    /// The configuration the aggregator was made with.
    public let configuration: Configuration
    /// The ``Configuration/catalogs``, merged: each event's declaration and personal-data args.
    public let registeredCatalogs: RegisteredCatalogs
    /// Whether the registered catalogs' plan is checked (`PlanStep`): without it, attribution
    /// takes the posting sites another aggregator's plan made the posts carry.
    let hasPlanStep: Bool
    /// Whether the plan's policy has posts carry their posting site (`PostSites`).
    let recordsPostSites: Bool
    /// The destinations each event may reach, for the events whose catalog names them; empty
    /// without catalogs or routing.
    let routes: [EventName: Set<String>]
    /// The delivery pipeline's steps, in order (see `EventAggregator+Delivery.swift`): the
    /// built-in ones present and those the app inserted.
    let pipeline: Pipeline
    /// Counts posts on ``center`` until ``start()``, to report an aggregator never started.
    let startCheck: StartCheck
    let consentDecision = ConsentDecisionCheck()

    let queue: DispatchQueue
    let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    let state: LockedValue<State>
    /// 1 while a purpose has a consent of its own (`State.purposes` is not empty): a round reads
    /// this instead of taking the state lock for the purposes, which an app that sets none never
    /// needs (ConsentByPurpose.swift). Written with `State.purposes`, under the state lock, in
    /// the delivery context (or at init).
    let hasPurposes = AtomicCounter()
    /// The posting path: everything posting threads touch (see the concurrency map in
    /// `Inbox.swift`).
    let inbox: Inbox
    /// Serialises synchronous delivery; recursive so that a tracker may post.
    let synchronousDelivery = NSRecursiveLock()
    let attribution: AttributionState

    struct State {
        /// Where events go (``Destination``), with their trackers.
        var destinations: Destinations
        var trackers: [any EventTracker] { destinations.trackers }
        var observers: [any NSObjectProtocol] = []
        var ready: Bool
        var held: [Held] = []
        var ids = EventIDGenerator()
        var diagnostics = Diagnostics()
        /// The purposes that have a consent of their own (ConsentByPurpose.swift).
        var purposes: [ConsentPurpose: MeasurementEventsAggregator.Consent] = [:]
        /// Destinations' copies of events waiting for their purposes, by destination index.
        var heldForPurposes: [(Int, MeasurementEvent)] = []
        /// The identity store could not be read yet (its consent is not known): what the
        /// delivery context knows from `attribution`, for other threads.
        var storeNotReadableYet = false
        /// `stop()` let the identity store go: `start()` holds it again.
        var storeReleased = false
        /// `shutdown(deadline:)` began: `start()` does nothing any more.
        var isShutDown = false
        // Whether events may reach the trackers now (`isOpen`, `forwardsNow`): with the step
        // that decides it, in Pipeline/AdmissionStep.swift.
    }

    /// Makes an aggregator. No event is delivered before ``start()``, which observes the center;
    /// until then a start check counts the events posted on `center`, so that an aggregator
    /// never started is reported
    /// (``Problem/notStarted(eventsPosted:anotherAggregatorStarted:)``) rather than failing in
    /// silence.
    ///
    /// Reads the ``Configuration/identityStore`` (a problem reading it is reported to the
    /// ``Configuration/problemHandler`` and the store is started afresh): the consent it
    /// remembers replaces ``Configuration/consent``.
    ///
    /// - Parameters:
    ///   - center: where events are observed; `.default` unless a test isolates it.
    ///   - filter: what to keep. `nil` (the default) builds it from ``allowList`` and
    ///     ``denyList`` at ``start()``, which is how subclasses configure it.
    ///   - trackers: where kept events go, in order: each a plain ``Destination``.
    ///   - destinations: where kept events go after `trackers`, each with its own filter,
    ///     processors and sampling (see ``Destination``).
    ///   - processors: steps applied to each kept event before the destinations.
    ///   - configuration: delivery, consent, identity store, sessions and the other settings.
    public init(
        center: NotificationCenter = .default,
        filter: EventFilter? = nil,
        trackers: [any EventTracker] = [],
        destinations: [Destination] = [],
        processors: [any EventProcessor] = [],
        configuration: Configuration = Configuration()
    ) {
        self.center = center
        self.configuration = configuration
        let registered = configuration.registering?(configuration) ?? RegisteredSupport()
        registeredCatalogs = registered.catalogs
        hasPlanStep = registered.planStep != nil
        recordsPostSites = registered.planChecker?.policy.recordsPostSites == true
        routes = registered.routes
        pipeline = Pipeline(
            plan: registered.planStep, processors: processors,
            personalData: registered.personalDataStep,
            inserted: configuration.insertedSteps)
        if recordsPostSites { PostSites.register(center) }
        startCheck = StartCheck(center: center)
        queue = DispatchQueue(label: "MeasurementEvents.EventAggregator")
        attribution = AttributionState(
            store: configuration.identityStore, rules: configuration.sessions,
            context: configuration.makeContext(), startedAt: configuration.clock?.now() ?? Date())
        let restored = attribution.restored
        // While the store cannot be read yet its consent is not known: pending, so that
        // nothing leaves before it is (see HeldUntilStoreReadable.swift).
        let consent =
            attribution.heldUntilStoreReadable != nil ? .pendingHolding : restored.consent ?? configuration.consent
        var diagnostics = Diagnostics()
        if restored.problem != nil { diagnostics.identityStoreFailures = 1 }
        diagnostics.catalogProblems = registeredCatalogs.problems.count
        var added = Destinations()
        var duplicates: [Destination] = []
        for destination in trackers.map({ Destination($0) }) + destinations {
            if let adding = added.adding(destination) { added = adding } else { duplicates.append(destination) }
        }
        state = LockedValue(
            State(
                destinations: added, ready: !configuration.holdsEventsUntilReady,
                diagnostics: diagnostics, purposes: attribution.restoredPurposes,
                storeNotReadableYet: attribution.heldUntilStoreReadable != nil))
        hasPurposes.store(attribution.restoredPurposes.isEmpty ? 0 : 1)
        let delivery = WeakAggregator()
        inbox = Self.makeInbox(
            filter: filter, consent: consent, configuration: configuration, queue: queue, delivery: delivery)
        delivery.aggregator = self
        queue.setSpecific(key: queueKey, value: ObjectIdentifier(self))
        inbox.isDeliveryContext.withLock { $0 = { [weak self] in self?.isOnDeliveryQueue ?? false } }
        if let problem = restored.problem { configuration.problemHandler?(.identityStoreFailed(problem)) }
        if IdentitySetupCheck.warnsOfMemoryStore(configuration.identityStore) {
            configuration.problemHandler?(.identityInMemory)
        }
        if let path = IdentitySetupCheck.appGroupDirectory(of: configuration.identityStore) {
            configuration.problemHandler?(.identityStoreInAppGroupContainer(path: path))
        }
        for problem in registeredCatalogs.problems { configuration.problemHandler?(.catalogRegistration(problem)) }
        for destination in duplicates { configuration.problemHandler?(.duplicateDestination(destination.name)) }
        for destination in added.all { listen(to: destination) }
        for destination in destinations { if let filter = destination.filter { reportInvalidPatterns(of: filter) } }
    }

    /// Makes an aggregator whose trackers are plain destinations: what
    /// ``init(center:filter:trackers:destinations:processors:configuration:)`` does with no
    /// destinations. Kept so that code built against 3.x keeps linking.
    ///
    /// - Parameters:
    ///   - center: where events are observed.
    ///   - filter: what to keep; `nil` builds it from ``allowList`` and ``denyList``.
    ///   - trackers: where kept events go, in order.
    ///   - processors: steps applied to each kept event before the trackers.
    ///   - configuration: delivery, consent, identity store, sessions and the other settings.
    @_disfavoredOverload
    public convenience init(
        center: NotificationCenter = .default, filter: EventFilter? = nil, trackers: [any EventTracker] = [],
        processors: [any EventProcessor] = [], configuration: Configuration = Configuration()
    ) {
        self.init(
            center: center, filter: filter, trackers: trackers, destinations: [], processors: processors,
            configuration: configuration)
    }

    deinit {
        if recordsPostSites { PostSites.unregister(center) }
        let observers = state.withLock { $0.observers }
        for observer in observers { center.removeObserver(observer) }
        inbox.buffers.close()
    }

    // MARK: Subclass hooks

    /// The names and wildcards to keep, when no filter was passed to the initialiser.
    /// Read once, at ``start()``. The default keeps nothing.
    open var allowList: [EventPattern] { [] }

    /// Names and wildcards to drop even when ``allowList`` matches them. Read at ``start()``.
    open var denyList: [EventPattern] { [] }

    /// Called for each kept event, after processors and before the trackers, on the
    /// delivery queue. The default does nothing.
    ///
    /// - Parameter event: the event, after the processors, with its attribution.
    open func didReceive(_ event: MeasurementEvent) {}

    /// Called for each identity change before the trackers, on the delivery queue. The default
    /// does nothing.
    ///
    /// - Parameter event: the identity change, with the identity after it.
    open func didChangeIdentity(_ event: IdentityEvent) {}

    // MARK: Lifecycle

    /// Starts observing events and identity changes, and tells every tracker the consent in
    /// force (a consent remembered as denied makes them discard what a previous run left).
    /// Calling it again does nothing, and so does calling it after
    /// ``shutdown(deadline:)``.
    ///
    /// After ``stop()``, it holds the identity store again first, and takes the identity and
    /// salt saved there meanwhile (by an aggregator that replaced this one, say).
    public func start() {
        guard !isStarted, !state.withLock({ $0.isShutDown }) else { return }
        let wasStopped = state.withLock { state -> Bool in
            defer { state.storeReleased = false }
            return state.storeReleased
        }
        if wasStopped {
            onDeliveryContext {
                if let problem = self.attribution.reattachStore() { self.reportStoreProblem(problem) }
            }
        }
        // The subclass's lists are read outside every lock: they are arbitrary code. The filter
        // is in force before the first observer exists.
        let builtFilter = inbox.filter == nil ? EventFilter(allow: allowList, deny: denyList) : nil
        let filter = inbox.setFilter(builtFilter, onlyIfNone: true) ?? .denyAll
        let started = state.withLock { state -> Bool in
            guard state.observers.isEmpty else { return false }
            state.observers = inbox.observe(center, legacyAQS: configuration.acceptsLegacyAQSNotifications)
            return true
        }
        guard started else { return }
        startCheck.aggregatorStarted()
        // Outside the lock: the handler is user code.
        if filter == EventFilter.denyAll { configuration.problemHandler?(.emptyAllowList) }
        reportInvalidPatterns(of: filter)
        announceConsent()
    }

    /// Stops observing, delivers what was received, and lets the identity store go before it
    /// returns, so that an aggregator made next on the same store (an app replacing its
    /// aggregator, a test starting another), in this process or another, takes it up at once
    /// with the same anonymous id. Calling it again does nothing.
    ///
    /// - Events posted afterwards are not received; a post made while `stop()` runs may still be
    ///   delivered, after it, with the identity this aggregator holds in memory.
    /// - Nothing is read from the store or written to it any more: what was received is
    ///   delivered and saved first. Calls made afterwards (``setConsent(_:)``,
    ///   ``forgetUser()``, ``recordAppRelease(version:build:)``, identity changes handed to
    ///   ``receive(_:)``, the lifecycle calls) still act on this aggregator and its trackers,
    ///   in memory; the first that the store would have kept is reported as not saved
    ///   (``Problem/identityStoreFailed(_:)``). Events still waiting for a store that could not
    ///   be read yet wait on: a stopped aggregator does not read it again.
    /// - ``start()`` holds the store again.
    ///
    /// From delivery code (a tracker, a processor, ``didReceive(_:)``) it does not wait for the
    /// round in progress: the rest of that round is delivered after the store is let go.
    public func stop() {
        let observers = state.withLock { state -> [any NSObjectProtocol] in
            defer {
                state.observers = []
                state.storeReleased = true
            }
            return state.observers
        }
        for observer in observers { center.removeObserver(observer) }
        // What was received is delivered (and saved) before the store is let go.
        if !isOnDeliveryQueue { onDeliveryContext { self.inbox.drain() } }
        onDeliveryContext {
            // Not when started again meanwhile (from another thread): its store stays held.
            guard !self.isStarted else { return }
            if let problem = self.attribution.releaseStore() { self.reportStoreProblem(problem) }
        }
    }

    /// Whether ``start()`` was called and ``stop()`` was not since.
    public var isStarted: Bool { state.withLock { !$0.observers.isEmpty } }

    // MARK: Configuration while running

    /// Replaces the filter; takes effect for the next post.
    ///
    /// - Parameter filter: the filter to apply from now on.
    public func setFilter(_ filter: EventFilter) {
        inbox.setFilter(filter)
    }

    /// The filter in use; `nil` before ``start()`` for an aggregator that builds it from its lists.
    public var filter: EventFilter? { inbox.filter }

    /// Adds a tracker, as a plain ``Destination``. Events already queued reach it too.
    ///
    /// - Parameter tracker: the tracker to add after the others.
    public func addTracker(_ tracker: any EventTracker) {
        addDestination(Destination(tracker))
    }

    /// Adds a destination after the others; events already queued reach it too. Safe while
    /// other threads post: each batch of events goes to the destinations in force when it was
    /// admitted. A destination whose tracker object another destination already has is left
    /// out and reported (``Problem/duplicateDestination(_:)``).
    ///
    /// ```swift
    /// aggregator.addDestination(Destination(ConsoleTracker(), name: "debug"))
    /// ```
    ///
    /// - Parameter destination: the destination.
    public func addDestination(_ destination: Destination) {
        let added = state.withLock { state -> Bool in
            guard let adding = state.destinations.adding(destination) else { return false }
            state.destinations = adding
            return true
        }
        // Outside the lock: the handler is user code.
        if !added { configuration.problemHandler?(.duplicateDestination(destination.name)) }
        if added { listen(to: destination) }
        if let filter = destination.filter { reportInvalidPatterns(of: filter) }
    }

    /// Takes the problems `destination`'s tracker reports of itself (``TrackerProblemReporting``):
    /// counted, reported and recorded in the trail, on the thread that reports them, outside
    /// every lock of the aggregator. The closure holds the aggregator weakly.
    func listen(to destination: Destination) {
        guard let reporting = destination.tracker as? any TrackerProblemReporting else { return }
        let name = destination.name
        reporting.reportProblems { [weak self] problem in
            guard let self else { return }
            self.state.withLock { $0.diagnostics.trackerProblems += 1 }
            self.configuration.problemHandler?(.trackerProblem(tracker: name, problem: problem))
            self.inbox.trail?.record(
                EventTrailEntry(
                    event: MeasurementEvent(EventName("destination/\(name)")), fate: .trackerProblem(problem)))
        }
    }

    /// The trackers events are handed to, in order (one per destination).
    public var trackers: [any EventTracker] { state.withLock { $0.trackers } }

    /// The destinations events are handed to, in order.
    public var destinations: [Destination] { state.withLock { $0.destinations.all } }

    /// Declares the trackers ready: held events are delivered, in order, and later events
    /// flow directly.
    public func markReady() {
        state.withLock { $0.ready = true }
        releaseHeldEvents()
    }

    /// The consent in force: from the configuration, the identity store, or the last ``setConsent(_:)``.
    public var consent: MeasurementEventsAggregator.Consent { inbox.consent }

    /// What the aggregator has received, forwarded, filtered out, dropped and failed so far.
    public var diagnostics: Diagnostics {
        reportIfNeverStarted()
        return inbox.counters(added: state.withLock { $0.diagnostics })
    }

    // MARK: Waiting

    /// Blocks until every event received so far has reached the trackers (or been held or
    /// discarded). For tests and app shutdown.
    ///
    /// Called from delivery code (a tracker, a processor, ``didReceive(_:)``), it returns at
    /// once: the delivery in progress hands out the rest, in order, when that code returns.
    public func waitUntilDelivered() {
        reportIfNeverStarted()
        if isOnDeliveryQueue { return }
        onDeliveryContext { self.inbox.drain() }
    }

    /// ``waitUntilDelivered()``, then asks every tracker to flush. From delivery code it only
    /// flushes the trackers.
    public func flush() {
        reportIfConsentNeverDecided()
        waitUntilDelivered()
        onDeliveryContext { self.flushTrackers() }
    }

    func flushTrackers() {
        let trackers = state.withLock { $0.trackers }
        for tracker in trackers { call(tracker, on: nil) { try $0.flush() } }
    }

    // MARK: Receiving

    /// Handles one notification as if it had been observed: for bridges from other buses
    /// and for tests. Malformed notifications are counted and reported, never thrown.
    ///
    /// - Parameter notification: a notification on the event name (or the legacy AQSEvent name).
    public func receive(_ notification: Notification) {
        switch notification.name {
        case .measurementIdentity: inbox.receiveIdentity(notification)
        case .legacyAQSEvent: inbox.receive(notification, legacyAQS: true)
        default: inbox.receive(notification, legacyAQS: false)
        }
    }
}
