import Dispatch
import Foundation

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
/// The observer runs on the posting thread and only reads the name, filters, and decodes;
/// processors, ``didReceive(_:)`` and trackers run on the aggregator's serial queue, in
/// posting order per posting thread (or on the posting thread with ``Delivery/synchronous``).
open class EventAggregator: @unchecked Sendable {
    // @unchecked: every mutable property lives in `state` behind its lock; `queue` and the
    // other stored properties are immutable after init.

    /// Where trackers are called.
    public enum Delivery: Sendable {
        /// On the aggregator's own serial queue; `post` returns at once.
        case asynchronous
        /// On the posting thread, before `post` returns, one event at a time.
        case synchronous
    }

    /// What happens to events while consent is not granted.
    public enum Consent: Sendable, Equatable {
        /// Events flow to trackers.
        case granted
        /// Events are held in memory (bounded by ``Configuration/heldEventLimit``) until
        /// consent is granted, or discarded if it is denied.
        case pendingHolding
        /// Events are discarded (and counted) until consent is granted.
        case pendingDiscarding
        /// Events are discarded (and counted); trackers were told to discard what they hold.
        case denied

        var discards: Bool { self == .pendingDiscarding || self == .denied }
    }

    public struct Configuration: Sendable {
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
        public var consent: Consent = .granted
        /// How long asynchronous delivery waits after the first event of a burst before it
        /// wakes the delivery queue, so that one wake-up serves the whole burst instead of
        /// one per post (a wake-up costs about as much as a post). Events reach trackers at
        /// most this much later; ``EventAggregator/waitUntilDelivered()`` does not wait for it.
        /// Zero wakes the queue at once.
        public var deliveryCoalescing: TimeInterval = 0.002
        /// Called, outside the aggregator's lock, for each malformed notification, tracker
        /// failure and dropped held event. Everything reported is also counted in
        /// ``Diagnostics``. It may post, but an event posted for every dropped held event is
        /// itself held and drops the next one: report such problems once, not per event.
        public var problemHandler: (@Sendable (Problem) -> Void)?

        public init() {}
    }

    /// Something that went wrong, reported to ``Configuration/problemHandler``.
    public enum Problem: Sendable, CustomStringConvertible {
        case malformedNotification(MalformedEventError)
        case trackerFailed(tracker: String, event: EventName, error: String)
        case heldEventDropped(EventName)
        /// An allow- or deny-list entry that matches nothing (`cart*`); reported at ``EventAggregator/start()``.
        case invalidPattern(EventPatternError)

        public var description: String {
            switch self {
            case .malformedNotification(let error): return error.description
            case .trackerFailed(let tracker, let event, let error):
                return "tracker \(tracker) failed on \(event): \(error)"
            case .heldEventDropped(let name):
                return "held event \(name) dropped: more than the held-event limit were waiting"
            case .invalidPattern(let error): return error.description
            }
        }
    }

    /// Counters since the aggregator was made.
    public struct Diagnostics: Sendable, Equatable {
        /// Notifications observed, well-formed or not.
        public var received = 0
        /// Events handed to ``didReceive(_:)`` and the trackers.
        public var forwarded = 0
        /// Events the filter did not keep.
        public var filteredOut = 0
        /// Notifications that could not be read as events.
        public var malformed = 0
        /// Held events dropped because the held-event limit was reached.
        public var dropped = 0
        /// Events discarded by a processor (sampling, for instance) or for lack of consent.
        public var discarded = 0
        /// Tracker calls that threw.
        public var trackerFailures = 0
        /// Events held right now, waiting for ``markReady()`` or consent.
        public var held = 0
        /// Filtered-out names and how often each was posted, when recorded.
        public var filteredOutNames: [EventName: Int] = [:]
        /// The most recent malformed notifications (up to 20), newest last.
        public var recentMalformed: [MalformedEventError] = []
    }

    public let center: NotificationCenter
    public let configuration: Configuration

    private let queue: DispatchQueue
    private let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    private let state: LockedValue<State>
    /// Serialises synchronous delivery; recursive so that a tracker may post.
    private let synchronousDelivery = NSRecursiveLock()

    private struct Pending {
        var event: MeasurementEvent
        var needsID: Bool
        /// The args of a fast-path post, still as posted; converted by `completeArgs`.
        var postedArgs: [String: any EventValueConvertible]?
        /// Consent as it was when the event was posted: an event posted without consent is
        /// never sent, even if consent arrives before it is delivered.
        var consentAtPost: Consent
    }

    private struct State {
        var filter: EventFilter?
        var trackers: [any EventTracker]
        var processors: [any EventProcessor]
        var observers: [any NSObjectProtocol] = []
        var pending: [Pending] = []
        var drainScheduled = false
        var ready: Bool
        var consent: Consent
        var held: [MeasurementEvent] = []
        var ids = EventIDGenerator()
        var diagnostics = Diagnostics()
    }

    /// Makes an aggregator. Nothing is observed until ``start()``.
    ///
    /// - Parameters:
    ///   - filter: what to keep. `nil` (the default) builds it from ``allowList`` and
    ///     ``denyList`` at ``start()``, which is how subclasses configure it.
    ///   - trackers: where kept events go, in order.
    ///   - processors: steps applied to each kept event before the trackers.
    public init(
        center: NotificationCenter = .default,
        filter: EventFilter? = nil,
        trackers: [any EventTracker] = [],
        processors: [any EventProcessor] = [],
        configuration: Configuration = Configuration()
    ) {
        self.center = center
        self.configuration = configuration
        queue = DispatchQueue(label: "MeasurementEvents.EventAggregator")
        state = LockedValue(State(
            filter: filter, trackers: trackers, processors: processors,
            ready: !configuration.holdsEventsUntilReady, consent: configuration.consent))
        queue.setSpecific(key: queueKey, value: ObjectIdentifier(self))
    }

    deinit {
        let observers = state.withLock { $0.observers }
        for observer in observers { center.removeObserver(observer) }
    }

    // MARK: Subclass hooks

    /// The names and wildcards to keep, when no filter was passed to the initialiser.
    /// Read once, at ``start()``. The default keeps nothing.
    open var allowList: [EventPattern] { [] }

    /// Names and wildcards to drop even when ``allowList`` matches them. Read at ``start()``.
    open var denyList: [EventPattern] { [] }

    /// Called for each kept event, after processors and before the trackers, on the
    /// delivery queue. The default does nothing.
    open func didReceive(_ event: MeasurementEvent) {}

    // MARK: Lifecycle

    /// Starts observing. Calling it again does nothing.
    public func start() {
        let needsFilter = state.withLock { $0.filter == nil && $0.observers.isEmpty }
        // Read the subclass's lists outside the lock: they are arbitrary code.
        let builtFilter = needsFilter ? EventFilter(allow: allowList, deny: denyList) : nil
        let startedFilter = state.withLock { state -> EventFilter? in
            guard state.observers.isEmpty else { return nil }
            if state.filter == nil { state.filter = builtFilter }
            state.observers.append(observe(.measurementEvent, keys: .standard))
            if configuration.acceptsLegacyAQSNotifications {
                state.observers.append(observe(.legacyAQSEvent, keys: .legacyAQS))
            }
            return state.filter
        }
        if let startedFilter { reportInvalidPatterns(of: startedFilter) }  // outside the lock: user code
    }

    /// Stops observing; events posted afterwards are not received. Events already received
    /// are still delivered. Calling it again does nothing.
    public func stop() {
        let observers = state.withLock { state -> [any NSObjectProtocol] in
            defer { state.observers = [] }
            return state.observers
        }
        for observer in observers { center.removeObserver(observer) }
    }

    public var isStarted: Bool { state.withLock { !$0.observers.isEmpty } }

    private func observe(_ name: Notification.Name, keys: NotificationKeys) -> any NSObjectProtocol {
        // No `queue:`: on Linux it makes the poster wait for that queue to drain.
        center.addObserver(forName: name, object: nil, queue: nil) { [weak self] notification in
            self?.receive(notification, keys: keys)
        }
    }

    // MARK: Configuration while running

    /// Replaces the filter; takes effect for the next post.
    public func setFilter(_ filter: EventFilter) {
        state.withLock { $0.filter = filter }
    }

    public var filter: EventFilter? { state.withLock { $0.filter } }

    /// Adds a tracker. Events already queued reach it too.
    public func addTracker(_ tracker: any EventTracker) {
        state.withLock { $0.trackers.append(tracker) }
    }

    public var trackers: [any EventTracker] { state.withLock { $0.trackers } }

    /// Declares the trackers ready: held events are delivered, in order, and later events
    /// flow directly.
    public func markReady() {
        state.withLock { $0.ready = true }
        releaseHeldEvents()
    }

    /// Changes consent. Granting delivers what was held; denying discards what is held here
    /// and asks every tracker to ``EventTracker/discardPending()``.
    public func setConsent(_ consent: Consent) {
        // In the delivery context, so that a denial and its discardPending() are one step that
        // no delivery (and no concurrent change of consent) can come between.
        onDeliveryContext {
            let trackers = self.state.withLock { state -> [any EventTracker] in
                state.consent = consent
                guard consent.discards else { return [] }
                state.diagnostics.discarded += state.held.count
                state.held.removeAll()
                state.diagnostics.held = 0
                return consent == .denied ? state.trackers : []
            }
            for tracker in trackers { self.call(tracker, on: nil) { try $0.discardPending() } }
        }
        if consent == .granted { releaseHeldEvents() }
    }

    public var consent: Consent { state.withLock { $0.consent } }

    public var diagnostics: Diagnostics { state.withLock { $0.diagnostics } }

    // MARK: Waiting

    /// Blocks until every event received so far has reached the trackers (or been held or
    /// discarded). For tests and app shutdown.
    ///
    /// Called from delivery code (a tracker, a processor, ``didReceive(_:)``), it returns at
    /// once: the delivery in progress hands out the rest, in order, when that code returns.
    public func waitUntilDelivered() {
        if isOnDeliveryQueue { return }
        onDeliveryContext { self.drain() }
    }

    private var isOnDeliveryQueue: Bool {
        DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self)
    }

    /// ``waitUntilDelivered()``, then asks every tracker to flush. From delivery code it only
    /// flushes the trackers.
    public func flush() {
        waitUntilDelivered()
        let trackers = state.withLock { $0.trackers }
        onDeliveryContext {
            for tracker in trackers { self.call(tracker, on: nil) { try $0.flush() } }
        }
    }

    // MARK: Receiving

    /// Handles one notification as if it had been observed: for bridges from other buses
    /// and for tests. Malformed notifications are counted and reported, never thrown.
    public func receive(_ notification: Notification) {
        let keys: NotificationKeys = notification.name == .legacyAQSEvent ? .legacyAQS : .standard
        receive(notification, keys: keys)
    }

    private func receive(_ notification: Notification, keys: NotificationKeys) {
        if keys.isStandard, let post = PostInProgress.current(for: notification) {
            return receive(post, notificationName: notification.name)
        }
        let fields: NotificationFields
        do {
            fields = try keys.readFields(notification)
        } catch {
            return reject(error)
        }
        guard let consent = admit(fields.name) else { return }
        let event: MeasurementEvent
        do {
            event = try MeasurementEvent(fields: fields, receivedAt: Date(), assignsID: false)
        } catch {
            return reject(error, alreadyCounted: true)
        }
        enqueue(Pending(
            event: event, needsID: event.id == MeasurementEvent.placeholderID, postedArgs: nil,
            consentAtPost: consent))
    }

    /// A post made by `MeasurementEvent.post` on this thread: its fields are already typed,
    /// and its args are converted on the delivery queue rather than here.
    ///
    /// The name is checked after the filter: a name that no filter keeps costs nothing more
    /// (it is counted as filtered out, and listed in `filteredOutNames`).
    private func receive(_ post: PostInProgress, notificationName: Notification.Name) {
        guard let consent = admit(post.name) else { return }
        if let problem = post.name.validationFailure {
            return reject(
                MalformedEventError(.invalidName(name: post.name.rawValue, problem: problem), notificationName: notificationName),
                alreadyCounted: true)
        }
        let event = MeasurementEvent(
            post.name, type: post.type, category: post.category, id: MeasurementEvent.placeholderID,
            timestamp: Date())
        enqueue(Pending(event: event, needsID: true, postedArgs: post.args, consentAtPost: consent))
    }

    /// Counts a received event and applies the filter; the consent in force when it is kept.
    @inline(__always)
    private func admit(_ name: EventName) -> Consent? {
        let record = configuration.recordsFilteredOutNames
        return state.withLock { state -> Consent? in
            state.diagnostics.received += 1
            if state.filter?.allows(name.rawValue) == true { return state.consent }
            state.diagnostics.filteredOut += 1
            if record { state.diagnostics.filteredOutNames[name, default: 0] += 1 }
            return nil
        }
    }

    private func enqueue(_ pending: Pending) {
        switch configuration.delivery {
        case .asynchronous:
            let schedule = state.withLock { state -> Bool in
                state.pending.append(pending)
                guard !state.drainScheduled else { return false }
                state.drainScheduled = true
                return true
            }
            if schedule { scheduleDrain() }
        case .synchronous:
            var batch = [pending]
            completeArgs(&batch)
            guard let pending = batch.first else { return }
            synchronousDelivery.lock()
            defer { synchronousDelivery.unlock() }
            deliver(pending)
        }
    }

    /// Converts the args that fast-path posts left as they were posted; rejects (and counts)
    /// the events whose args turn out not to be valid, keeping the others in order.
    private func completeArgs(_ batch: inout [Pending]) {
        guard batch.contains(where: { $0.postedArgs != nil }) else { return }
        var kept = 0
        var rejected: [MalformedEventError] = []
        for index in batch.indices {
            var pending = batch[index]
            if let args = pending.postedArgs {
                do {
                    pending.event.args = try NotificationKeys.readPostedArgs(args, notificationName: .measurementEvent)
                    pending.postedArgs = nil
                } catch {
                    rejected.append(error)
                    continue
                }
            }
            batch[kept] = pending
            kept += 1
        }
        batch.removeLast(batch.count - kept)
        for error in rejected { reject(error, alreadyCounted: true) }
    }

    private func reject(_ error: MalformedEventError, alreadyCounted: Bool = false) {
        state.withLock { state in
            if !alreadyCounted { state.diagnostics.received += 1 }
            state.diagnostics.malformed += 1
            state.diagnostics.recentMalformed.append(error)
            if state.diagnostics.recentMalformed.count > 20 { state.diagnostics.recentMalformed.removeFirst() }
        }
        configuration.problemHandler?(.malformedNotification(error))
    }

    // MARK: Delivering

    /// Delivers everything pending, in order. Runs on the queue (or under the synchronous lock).
    private func scheduleDrain() {
        let delay = configuration.deliveryCoalescing
        if delay > 0 {
            queue.asyncAfter(deadline: .now() + delay) { self.drain() }
        } else {
            queue.async { self.drain() }
        }
    }

    private func drain() {
        var batch: [Pending] = []
        while true {
            state.withLock { state in
                swap(&batch, &state.pending)
                if batch.isEmpty { state.drainScheduled = false }
            }
            if batch.isEmpty { return }
            completeArgs(&batch)
            if let trackers = admitWhole(&batch) {
                for pending in batch { forward(pending.event, to: trackers) }
            } else {
                for pending in batch { deliver(pending) }
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// In the usual state (consent granted, ready, nothing held, no processors) admits a whole
    /// batch under one lock, giving its events their ids, and returns the trackers; otherwise
    /// returns nil and admits nothing. Locking per event made the delivery thread contend
    /// with posting threads for the state lock four times per event.
    private func admitWhole(_ batch: inout [Pending]) -> [any EventTracker]? {
        state.withLock { state -> [any EventTracker]? in
            guard state.processors.isEmpty, state.consent == .granted, state.ready, state.held.isEmpty,
                !batch.contains(where: { $0.consentAtPost.discards })
            else { return nil }
            for index in batch.indices where batch[index].needsID {
                batch[index].event.id = state.ids.next()
                batch[index].needsID = false
            }
            state.diagnostics.forwarded += batch.count
            return state.trackers
        }
    }

    private func deliver(_ pending: Pending) {
        let (processors, assignedID) = state.withLock { state -> ([any EventProcessor], UUID?) in
            (state.processors, pending.needsID ? state.ids.next() : nil)
        }
        var event = pending.event
        if let assignedID { event.id = assignedID }
        for processor in processors {
            guard let processed = processor.process(event) else {
                state.withLock { $0.diagnostics.discarded += 1 }
                return
            }
            event = processed
        }
        var dropped: EventName?
        let trackers = state.withLock { state -> [any EventTracker]? in
            if pending.consentAtPost.discards || state.consent.discards {
                state.diagnostics.discarded += 1
                return nil
            }
            // While held events wait for release, newer ones queue behind them to keep order.
            if state.consent == .granted && state.ready && state.held.isEmpty {
                state.diagnostics.forwarded += 1
                return state.trackers
            }
            dropped = hold(event, in: &state)
            return nil
        }
        // Outside the lock: the handler may read diagnostics or post.
        if let dropped { configuration.problemHandler?(.heldEventDropped(dropped)) }
        guard let trackers else { return }
        forward(event, to: trackers)
    }

    private func forward(_ event: MeasurementEvent, to trackers: [any EventTracker]) {
        didReceive(event)
        for tracker in trackers {
            call(tracker, on: event.name) { try $0.track(event) }
        }
    }

    /// Holds `event`; returns the name of the oldest held event when the limit made it go.
    private func hold(_ event: MeasurementEvent, in state: inout State) -> EventName? {
        state.held.append(event)
        defer { state.diagnostics.held = state.held.count }
        guard state.held.count > max(configuration.heldEventLimit, 0) else { return nil }
        state.diagnostics.dropped += 1
        return state.held.removeFirst().name
    }

    private func releaseHeldEvents() {
        onDeliveryContext {
            // Deliveries also run in this context, so nothing is added to `held` meanwhile.
            let (events, trackers) = self.state.withLock { state -> ([MeasurementEvent], [any EventTracker]) in
                guard state.ready, state.consent == .granted else { return ([], []) }
                defer {
                    state.diagnostics.forwarded += state.held.count
                    state.held.removeAll()
                    state.diagnostics.held = 0
                }
                return (state.held, state.trackers)
            }
            for event in events { self.forward(event, to: trackers) }
        }
    }

    private func call(_ tracker: any EventTracker, on name: EventName?, _ body: (any EventTracker) throws -> Void) {
        do {
            try body(tracker)
        } catch {
            state.withLock { $0.diagnostics.trackerFailures += 1 }
            configuration.problemHandler?(.trackerFailed(
                tracker: String(describing: type(of: tracker)), event: name ?? "(flush)", error: "\(error)"))
        }
    }

    /// Runs `body` where trackers are called, between two deliveries and never during one, and
    /// waits for it: on the queue (directly when already on it), or under the
    /// synchronous-delivery lock. Asynchronous delivery runs `body` on a queue thread:
    /// `queue.sync` would run it on the caller's thread, and trackers must never run on a
    /// posting (or main) thread.
    func onDeliveryContext(_ body: @escaping @Sendable () -> Void) {
        switch configuration.delivery {
        case .asynchronous:
            if isOnDeliveryQueue {
                body()
            } else {
                queue.async(execute: body)
                queue.sync {}
            }
        case .synchronous:
            synchronousDelivery.lock()
            defer { synchronousDelivery.unlock() }
            body()
        }
    }
}

extension Notification.Name {
    /// The notification name of the Objective-C AQSEvent library, accepted by aggregators
    /// with ``EventAggregator/Configuration/acceptsLegacyAQSNotifications``.
    public static let legacyAQSEvent = Notification.Name("org.openaquamarine.measurement_event")
}
