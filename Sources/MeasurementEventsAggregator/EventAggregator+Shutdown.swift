import Dispatch
import Foundation
import MeasurementEvents

// Shutdown, in the order it happens: posts refused (each buffer refuses appends under its lock,
// so a post either was appended, and is drained below, or is refused and counted); what is in
// flight drained to the trackers; every tracker flushed; each `QueuedDeliveryReporting` tracker
// given until the deadline to deliver its queue, all at once, each on a thread of its own; the
// identity store let go; the report made from the counters. The observers stay, so that later
// posts are counted (`Diagnostics.postedAfterShutdown`) rather than lost in silence.

extension EventAggregator {
    /// What ``shutdown(deadline:)`` leaves behind: what was delivered, what is still queued (and
    /// where), and what was dropped, with reasons.
    public struct ShutdownReport: Sendable, Equatable, CustomStringConvertible {
        /// Events the aggregator handed to its trackers since it was made
        /// (``Diagnostics/forwarded``).
        public var forwarded: Int
        /// Events the ``QueuedDeliveryReporting`` trackers delivered, added up.
        public var delivered: Int
        /// Events those trackers still hold, added up: on disk for a later run to send (see
        /// each destination's ``QueuedDelivery/whereQueued``).
        public var stillQueued: Int
        /// Events dropped, by the aggregator or a tracker, each reason with its count; only
        /// reasons with a count. Events still held in memory at shutdown (not ready, waiting for
        /// consent) are here too: they end with the process.
        public var dropped: [DroppedEvents]
        /// Posts refused because they came after the shutdown began (``Diagnostics/postedAfterShutdown``).
        public var postedAfterShutdown: Int
        /// What each ``QueuedDeliveryReporting`` tracker said, by destination name.
        public var destinations: [String: QueuedDelivery]
        /// Whether a tracker still held events when the deadline passed.
        public var deadlinePassed: Bool

        /// Whether everything was delivered: nothing queued, nothing dropped.
        public var deliveredEverything: Bool { stillQueued == 0 && dropped.isEmpty }

        /// A sentence for a log: "forwarded 1200, delivered 1000, 200 still queued (…), 0 dropped".
        public var description: String {
            var parts = ["forwarded \(forwarded)", "delivered \(delivered)"]
            let places = destinations.values.compactMap { $0.stillQueued > 0 ? $0.whereQueued : nil }.sorted()
            parts.append(
                "\(stillQueued) still queued" + (places.isEmpty ? "" : " (in \(places.joined(separator: ", ")))"))
            parts.append(
                dropped.isEmpty
                    ? "none dropped" : dropped.map(\.description).joined(separator: "; "))
            if postedAfterShutdown > 0 { parts.append("\(postedAfterShutdown) posted after shutdown began, refused") }
            if deadlinePassed { parts.append("the deadline passed") }
            return parts.joined(separator: ", ")
        }
    }

    /// Ends the aggregator's run, for a service stopping (SIGTERM, a service group's graceful
    /// shutdown) or a tool finishing:
    ///
    /// 1. Stops accepting: a post from now on is refused, counted in
    ///    ``Diagnostics/postedAfterShutdown`` and reported once
    ///    (``Problem/postedAfterShutdown(_:)``); posts waiting for room give up.
    /// 2. Drains what is in flight: every event whose post returned reaches the trackers,
    ///    whatever the deadline (it is in memory; a tracker's `track` writes it to its queue).
    ///    Each ``QueuedDeliveryReporting`` tracker is told first
    ///    (``QueuedDeliveryReporting/shutdownDidBegin(deadline:)``), so that a `track` waiting
    ///    for room in its queue stops waiting.
    /// 3. Flushes every tracker, and gives each ``QueuedDeliveryReporting`` tracker (an
    ///    `HTTPTracker`) until `deadline` to deliver its queue, all of them at once.
    /// 4. Lets the identity store go, as ``stop()`` does.
    ///
    /// What a tracker could not deliver in time stays in its queue, on disk: the next run's
    /// tracker on the same directory sends it. Calling it again makes a new report.
    ///
    /// ```swift
    /// let report = await aggregator.shutdown(deadline: Date().addingTimeInterval(10))
    /// logger.info("analytics: \(report)")
    /// ```
    ///
    /// - Parameter deadline: when to stop waiting for the trackers' deliveries; one already
    ///   past flushes and reports without waiting.
    /// - Returns: what was delivered, what is still queued and what was dropped.
    public func shutdown(deadline: Date) async -> ShutdownReport {
        state.withLock { $0.isShutDown = true }
        inbox.refusePosts()
        // A tracker whose `track` waits (for room in its queue) stops waiting: the drain ends in time.
        for destination in destinations {
            (destination.tracker as? any QueuedDeliveryReporting)?.shutdownDidBegin(deadline: deadline)
        }
        // Records counted in flight are drained, or refused by their buffer (and uncounted):
        // the count reaches zero once the posts in progress have appended or been refused.
        repeat {
            await inDeliveryContext { self.inbox.drain() }
            if inbox.inFlight.value > 0 { await Task.yield() }
        } while inbox.inFlight.value > 0
        await inDeliveryContext { self.flushTrackers() }

        let reporting = destinations.compactMap { destination in
            (destination.tracker as? any QueuedDeliveryReporting).map { (destination.name, $0) }
        }
        let said = await withTaskGroup(of: (String, QueuedDelivery).self) { group in
            for (name, tracker) in reporting {
                group.addTask {
                    // A thread of its own: the tracker blocks until the deadline.
                    await withCheckedContinuation { continuation in
                        DispatchQueue.global().async {
                            continuation.resume(returning: (name, tracker.deliverQueued(before: deadline)))
                        }
                    }
                }
            }
            var said: [String: QueuedDelivery] = [:]
            for await (name, delivery) in group { said[name] = delivery }
            return said
        }

        await inDeliveryContext {
            let released = self.state.withLock { state -> Bool in
                defer { state.storeReleased = true }
                return !state.storeReleased
            }
            if released, let problem = self.attribution.releaseStore() { self.reportStoreProblem(problem) }
        }
        return Self.report(diagnostics, trackers: said)
    }

    /// The report, from the aggregator's counters and what the trackers said.
    static func report(_ diagnostics: Diagnostics, trackers: [String: QueuedDelivery]) -> ShutdownReport {
        let counted: [(String, Int)] = [
            ("more than maximumInFlightEvents were waiting for delivery", diagnostics.droppedInFlight),
            ("the held-event limit was reached", diagnostics.dropped),
            ("blocked by the tracking plan", diagnostics.blockedByPlan),
            ("discarded by a processor or for lack of consent", diagnostics.discarded),
            ("malformed notifications", diagnostics.malformed),
            ("still held in memory at shutdown (not ready, or waiting for consent)", diagnostics.held),
            ("still held in memory at shutdown for their purposes' consent", diagnostics.heldForPurposes),
            (
                "still held in memory at shutdown: the identity store could not be read",
                diagnostics.heldUntilStoreReadable
            ),
        ]
        var dropped = counted.filter { $0.1 > 0 }.map { DroppedEvents(reason: $0.0, count: $0.1) }
        for name in trackers.keys.sorted() {
            dropped += trackers[name]!.dropped.map {
                DroppedEvents(reason: $0.reason, count: $0.count, destination: $0.destination ?? name)
            }
        }
        return ShutdownReport(
            forwarded: diagnostics.forwarded,
            delivered: trackers.values.reduce(0) { $0 + $1.delivered },
            stillQueued: trackers.values.reduce(0) { $0 + $1.stillQueued },
            dropped: dropped,
            postedAfterShutdown: diagnostics.postedAfterShutdown,
            destinations: trackers,
            deadlinePassed: trackers.values.contains { $0.stillQueued > 0 })
    }

    /// Runs `body` in the delivery context (``onDeliveryContext(_:)``) from a thread of its own,
    /// and resumes once it ran: a task never blocks on the delivery queue.
    private func inDeliveryContext(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.onDeliveryContext(body)
                continuation.resume()
            }
        }
    }
}
