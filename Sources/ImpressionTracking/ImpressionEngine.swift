import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Turns visibility signals into honest impressions, commits them, and pushes them to a
/// tracking service in batches.
///
/// The host reports what it sees; the engine decides what counts:
///
/// ```swift
/// let engine = try ImpressionEngine<String>()          // posts `impression/item_viewed` on the bus
/// engine.startCycle()                                   // commit and push every 5 s
///
/// engine.appeared(post.id, context: ["feed": "home", "position": row])
/// engine.visibilityChanged(post.id, visibleFraction: 0.7)
/// engine.disappeared(post.id)
/// engine.enteredBackground()
/// ```
///
/// An item makes an impression when it stays at or above
/// ``ImpressionConfiguration/minimumVisibleFraction`` for
/// ``ImpressionConfiguration/minimumVisibleDuration`` without interruption. Visits never add
/// up, a dip below the area threshold restarts the clock, and entering background ends every
/// running visit. Appearances that end without an impression are counted as discards.
///
/// Every input takes its time from the `at:` argument, or from the engine's clock when it is
/// `nil`. All methods are safe to call from any thread.
public final class ImpressionEngine<ItemID: Hashable & Sendable>: Sendable {
    /// What counts as an impression and how often the engine commits and pushes; validated
    /// when the engine was made.
    public let configuration: ImpressionConfiguration
    /// Where inputs without an explicit time read it, and how instants become dates.
    public let clock: any ImpressionClock

    // Reachable from the inlinable inputs, so that they are specialised for the app's item id
    // type: unspecialised generic dictionary access costs about three times as much.
    @usableFromInline let ledger: LockedValue<VisibilityLedger<ItemID>>
    private let store: ImpressionStore<ItemID>
    private let delivery: ImpressionDelivery<ItemID>
    private let scheduler: any ImpressionCycleScheduler
    private let cycle = LockedValue<ScheduledCycle?>(nil)
    private let pushCounters = LockedValue(PushCounters())
    @usableFromInline let discardHandler: (@Sendable (ImpressionDiscard<ItemID>) -> Void)?

    private struct PushCounters {
        var committed = 0
        var pushed = 0
        var batchesSent = 0
        var sendFailures = 0
        var droppedOnEncodingFailure = 0
        var droppedOnOverflow = 0
    }

    /// Makes an engine that sends impressions through `encoder` to `service`.
    ///
    /// Use this form to send impressions somewhere other than the event bus: a JSON body for your
    /// own endpoint, a vendor's objects.
    ///
    /// - Parameters:
    ///   - configuration: what counts as an impression, and how often to commit and push.
    ///   - encoder: turns a batch of impressions into the service's payload.
    ///   - service: sends each encoded batch.
    ///   - clock: where inputs without an explicit time read it.
    ///   - scheduler: what runs the cycle started by ``startCycle()``.
    ///   - discardHandler: called, on the reporting thread, for each appearance that ended
    ///     without an impression.
    /// - Throws: ``ImpressionConfigurationError`` when the configuration cannot work.
    public init<Encoder: ImpressionEncoder, Service: ImpressionTrackingService>(
        configuration: ImpressionConfiguration = ImpressionConfiguration(),
        encoder: Encoder,
        service: Service,
        clock: any ImpressionClock = SystemImpressionClock(),
        scheduler: any ImpressionCycleScheduler = DispatchCycleScheduler(),
        discardHandler: (@Sendable (ImpressionDiscard<ItemID>) -> Void)? = nil
    ) throws where Encoder.ItemID == ItemID, Encoder.Payload == Service.Payload {
        try configuration.validate()
        self.configuration = configuration
        self.clock = clock
        self.scheduler = scheduler
        self.discardHandler = discardHandler
        ledger = LockedValue(VisibilityLedger(configuration: configuration))
        store = ImpressionStore(limit: configuration.storeLimit)
        delivery = ImpressionDelivery(encoder: encoder, service: service, clock: clock)
    }

    /// Makes an engine that posts each impression as an `impression/item_viewed` event of
    /// type `impression` on `center`, for the app's aggregator.
    ///
    /// ```swift
    /// let engine = try ImpressionEngine<String>()
    /// engine.startCycle()
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: what counts as an impression, and how often to commit and push.
    ///   - center: where the events are posted; `.default` unless a test isolates it.
    ///   - clock: where inputs without an explicit time read it.
    ///   - scheduler: what runs the cycle started by ``startCycle()``.
    ///   - discardHandler: called, on the reporting thread, for each appearance that ended
    ///     without an impression.
    /// - Throws: ``ImpressionConfigurationError`` when the configuration cannot work.
    public convenience init(
        configuration: ImpressionConfiguration = ImpressionConfiguration(),
        center: NotificationCenter = .default,
        clock: any ImpressionClock = SystemImpressionClock(),
        scheduler: any ImpressionCycleScheduler = DispatchCycleScheduler(),
        discardHandler: (@Sendable (ImpressionDiscard<ItemID>) -> Void)? = nil
    ) throws {
        try self.init(
            configuration: configuration, encoder: ImpressionEventEncoder<ItemID>(),
            service: ImpressionEventService(center: center), clock: clock, scheduler: scheduler,
            discardHandler: discardHandler)
    }

    deinit {
        cycle.withLock { $0 }?.cancel()
    }

    // MARK: Item inputs

    /// The item came on screen, `visibleFraction` of it visible (1 when the host cannot
    /// measure it). `context` travels with its impression; `nil` keeps what was attached before.
    ///
    /// - Parameters:
    ///   - id: the item's id, as the host identifies it.
    ///   - visibleFraction: the share of its area on screen, 0…1; out-of-range values are clamped,
    ///     NaN is ignored and counted.
    ///   - context: extra key/value information posted with its impression (`["position": 3]`).
    ///   - time: when it happened, on the engine's clock; `nil` reads the clock.
    @inlinable
    public func appeared(
        _ id: ItemID, visibleFraction: Double = 1, context: [String: any EventValueConvertible]? = nil,
        at time: TimeInterval? = nil
    ) {
        let time = time ?? clock.now()
        let context = context?.mapValues(\.eventValue)
        ledger.withLock { $0.appeared(id, fraction: visibleFraction, context: context, at: time) }
    }

    /// The item's visible fraction (0…1) changed. An item not seen before appears with it.
    ///
    /// - Parameters:
    ///   - id: the item's id.
    ///   - visibleFraction: the share of its area on screen now, 0…1.
    ///   - time: when it happened, on the engine's clock; `nil` reads the clock.
    @inlinable
    public func visibilityChanged(_ id: ItemID, visibleFraction: Double, at time: TimeInterval? = nil) {
        let time = time ?? clock.now()
        ledger.withLock { $0.visibilityChanged(id, fraction: visibleFraction, at: time) }
    }

    /// Replaces the context attached to an item on screen; does nothing for an item that is
    /// not (its context would have nothing to travel with).
    ///
    /// - Parameters:
    ///   - context: the new key/value information for its impression.
    ///   - id: the item's id.
    public func setContext(_ context: [String: any EventValueConvertible], for id: ItemID) {
        let context = context.mapValues(\.eventValue)
        ledger.withLock { $0.setContext(context, for: id) }
    }

    /// The item left the screen. An appearance that made no impression goes to the discard handler.
    ///
    /// - Parameters:
    ///   - id: the item's id.
    ///   - time: when it happened, on the engine's clock; `nil` reads the clock.
    @inlinable
    public func disappeared(_ id: ItemID, at time: TimeInterval? = nil) {
        let time = time ?? clock.now()
        let discard = ledger.withLock { $0.disappeared(id, at: time) }
        if let discard, let discardHandler { discardHandler(discard) }
    }

    // MARK: App inputs

    /// Ends every running visit at this moment; time in background never counts. With
    /// ``ImpressionConfiguration/pushesOnBackground``, also commits and pushes.
    ///
    /// - Parameter time: when it happened, on the engine's clock; `nil` reads the clock.
    public func enteredBackground(at time: TimeInterval? = nil) {
        let time = time ?? clock.now()
        ledger.withLock { $0.enteredBackground(at: time) }
        if configuration.pushesOnBackground { runCycle(at: time) }
    }

    /// Starts new visits for the items on screen.
    ///
    /// - Parameter time: when it happened, on the engine's clock; `nil` reads the clock.
    public func becameActive(at time: TimeInterval? = nil) {
        let time = time ?? clock.now()
        ledger.withLock { $0.becameActive(at: time) }
    }

    /// The content was reloaded. With ``ReimpressionPolicy/afterContentReload`` every item may
    /// count again, and the items on screen start new visits now.
    ///
    /// - Parameter time: when it happened, on the engine's clock; `nil` reads the clock.
    public func contentReloaded(at time: TimeInterval? = nil) {
        let time = time ?? clock.now()
        ledger.withLock { $0.contentReloaded(at: time) }
    }

    // MARK: Commit and push

    /// Moves the impressions made since the last commit, and those of items still on screen
    /// that have qualified, into the store.
    ///
    /// - Parameter time: the moment of the commit, on the engine's clock; `nil` reads the clock.
    /// - Returns: how many impressions were committed.
    @discardableResult
    public func commit(at time: TimeInterval? = nil) -> Int {
        let time = time ?? clock.now()
        let committed = ledger.withLock { $0.commit(at: time) }
        let dropped = store.append(committed)
        pushCounters.withLock { counters in
            counters.committed += committed.count
            counters.droppedOnOverflow += dropped
        }
        if dropped > 0 { configuration.problemHandler?(.storeOverflow(dropped: dropped)) }
        return committed.count
    }

    /// Takes everything in the store and sends it in batches of
    /// ``ImpressionConfiguration/batchSize``. A failed send puts that batch and the rest back
    /// for the next push.
    ///
    /// - Returns: how many impressions were sent.
    @discardableResult
    public func push() -> Int {
        let impressions = store.takeAll()
        var sent = 0
        var start = impressions.startIndex
        while start < impressions.endIndex {
            let end = min(start + configuration.batchSize, impressions.endIndex)
            let batch = Array(impressions[start..<end])
            switch delivery.deliver(batch) {
            case .sent:
                sent += batch.count
                pushCounters.withLock {
                    $0.pushed += batch.count; $0.batchesSent += 1
                }
            case .encodingFailed(let error):
                pushCounters.withLock { $0.droppedOnEncodingFailure += batch.count }
                configuration.problemHandler?(.encodingFailed(impressions: batch.count, error: "\(error)"))
            case .sendFailed(let error):
                let unsent = Array(impressions[start...])
                let dropped = store.putBack(unsent)
                pushCounters.withLock {
                    $0.sendFailures += 1; $0.droppedOnOverflow += dropped
                }
                configuration.problemHandler?(.sendFailed(impressions: unsent.count, error: "\(error)"))
                if dropped > 0 { configuration.problemHandler?(.storeOverflow(dropped: dropped)) }
                return sent
            }
            start = end
        }
        return sent
    }

    /// One cycle: ``commit(at:)`` then ``push()``.
    ///
    /// - Parameter time: the moment of the commit, on the engine's clock; `nil` reads the clock.
    public func runCycle(at time: TimeInterval? = nil) {
        commit(at: time)
        push()
    }

    /// Runs ``runCycle(at:)`` every ``ImpressionConfiguration/commitInterval`` on the
    /// scheduler. Calling it again does nothing.
    public func startCycle() {
        guard !isCycleRunning else { return }
        // Scheduled outside the lock: the scheduler is app code, and may call back into the
        // engine. Two racing calls both schedule; the one that installs second cancels its own.
        let scheduled = scheduler.scheduleRepeating(every: configuration.commitInterval) { [weak self] in
            self?.runCycle()
        }
        let installed = cycle.withLock { cycle -> Bool in
            guard cycle == nil else { return false }
            cycle = scheduled
            return true
        }
        if !installed { scheduled.cancel() }
    }

    /// Stops the cycle; what is in the store stays there until the next ``push()``.
    public func stopCycle() {
        cycle.withLock { cycle in
            defer { cycle = nil }
            return cycle
        }?.cancel()
    }

    /// Whether ``startCycle()`` started a cycle that ``stopCycle()`` has not stopped.
    public var isCycleRunning: Bool { cycle.withLock { $0 != nil } }

    // MARK: Diagnostics

    /// Counters since the engine was made.
    public struct Diagnostics: Sendable, Equatable {
        /// Items on screen right now.
        public var itemsOnScreen = 0
        /// Impressions moved into the store by commits.
        public var committed = 0
        /// Impressions waiting in the store.
        public var waitingInStore = 0
        /// Impressions the service accepted.
        public var pushed = 0
        /// Batches the service accepted.
        public var batchesSent = 0
        /// Sends that threw; their impressions went back to the store.
        public var sendFailures = 0
        /// Impressions dropped because the encoder threw.
        public var droppedOnEncodingFailure = 0
        /// Impressions dropped because the store was full.
        public var droppedOnOverflow = 0
        /// Appearances that reached the area threshold but never for the minimum time.
        public var discardedTooShort = 0
        /// Appearances that never reached the area threshold while the app was active.
        public var discardedNeverViewable = 0
        /// Visits that qualified again while the policy said the item had already counted.
        public var repeatsSuppressed = 0
        /// Visible fractions that were not a number, and were ignored.
        public var invalidFractions = 0
        /// Disappearances of items that were not on screen.
        public var unmatchedDisappearances = 0
        /// Appearances of items already on screen (treated as updates).
        public var repeatedAppearances = 0
        /// Calls to ``ImpressionEngine/contentReloaded(at:)``.
        public var contentReloads = 0
        /// Whether the app is in background, as the engine was told.
        public var isInBackground = false
    }

    /// The counters now: what was committed, pushed, dropped and discarded, and why.
    public var diagnostics: Diagnostics {
        var diagnostics = ledger.withLock { ledger -> Diagnostics in
            let counters = ledger.book.counters
            var diagnostics = Diagnostics()
            diagnostics.itemsOnScreen = ledger.items.count
            diagnostics.discardedTooShort = counters.discardedTooShort
            diagnostics.discardedNeverViewable = counters.discardedNeverViewable
            diagnostics.repeatsSuppressed = counters.repeatsSuppressed
            diagnostics.invalidFractions = counters.invalidFractions
            diagnostics.unmatchedDisappearances = counters.unmatchedDisappearances
            diagnostics.repeatedAppearances = counters.repeatedAppearances
            diagnostics.contentReloads = counters.contentReloads
            diagnostics.isInBackground = ledger.isInBackground
            return diagnostics
        }
        pushCounters.withLock { counters in
            diagnostics.committed = counters.committed
            diagnostics.pushed = counters.pushed
            diagnostics.batchesSent = counters.batchesSent
            diagnostics.sendFailures = counters.sendFailures
            diagnostics.droppedOnEncodingFailure = counters.droppedOnEncodingFailure
            diagnostics.droppedOnOverflow = counters.droppedOnOverflow
        }
        diagnostics.waitingInStore = store.count
        return diagnostics
    }
}

/// An encoder and a service, with their payload type hidden, so the engine is generic over
/// the item id only.
struct ImpressionDelivery<ItemID: Hashable & Sendable>: Sendable {
    enum Outcome {
        case sent
        case encodingFailed(any Error)
        case sendFailed(any Error)
    }

    let deliver: @Sendable ([Impression<ItemID>]) -> Outcome

    init<Encoder: ImpressionEncoder, Service: ImpressionTrackingService>(
        encoder: Encoder, service: Service, clock: any ImpressionClock
    ) where Encoder.ItemID == ItemID, Encoder.Payload == Service.Payload {
        deliver = { batch in
            let payload: Encoder.Payload
            do {
                payload = try encoder.encode(batch, clock: clock)
            } catch {
                return .encodingFailed(error)
            }
            do {
                try service.send(payload)
            } catch {
                return .sendFailed(error)
            }
            return .sent
        }
    }
}
