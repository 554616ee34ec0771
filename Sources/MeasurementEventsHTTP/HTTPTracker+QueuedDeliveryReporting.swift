import Foundation
import MeasurementEventsAggregator

extension HTTPTracker: QueuedDeliveryReporting {
    /// Flushes the queue to storage and uploads until it is empty or `deadline` passes
    /// (``waitUntilDelivered(timeout:)``); then says what was delivered, what is still on disk
    /// in ``directory`` (a later tracker on the same directory sends it), and what was dropped,
    /// by reason. What an aggregator's `shutdown(deadline:)` calls.
    ///
    /// - Parameter deadline: when to stop waiting.
    /// - Returns: the tracker's delivered, queued and dropped events since it was made.
    public func deliverQueued(before deadline: Date) -> QueuedDelivery {
        shutdownDidBegin(deadline: deadline)
        waitUntilDelivered(timeout: max(0, deadline.timeIntervalSinceNow))
        let diagnostics = self.diagnostics
        let reasons: [(String, Int)] = [
            ("the disk queue was at its cap (maximumQueuedEvents or maximumQueuedBytes)", diagnostics.droppedAtCap),
            ("could not be written to the queue (a full disk)", diagnostics.failedWrites),
            ("refused by the server", diagnostics.refusedEvents),
            ("rejected by the server with a batch it refused whole", diagnostics.rejectedByServer),
            ("rejected by the encoder", diagnostics.rejectedByEncoder),
            ("older than the vendor takes", diagnostics.expiredBeforeSending),
            ("deleted when consent was revoked", diagnostics.discarded),
            ("damaged on disk", diagnostics.corruptRecords),
        ]
        return QueuedDelivery(
            delivered: diagnostics.delivered, stillQueued: diagnostics.queued,
            dropped: reasons.filter { $0.1 > 0 }.map { DroppedEvents(reason: $0.0, count: $0.1) },
            whereQueued: directory.path)
    }

    /// With ``QueueFullBehavior/wait(atMostSeconds:)``, ends every wait for room in the queue,
    /// now and later: the events still in flight reach the disk over the cap
    /// (``Diagnostics/writtenOverCapAtShutdown``) rather than wait or drop the oldest, so that the
    /// aggregator's drain ends in time and everything it hands over is on disk or delivered. With
    /// ``QueueFullBehavior/dropOldest`` nothing changes. What an aggregator's
    /// `shutdown(deadline:)` calls first.
    ///
    /// - Parameter deadline: when the shutdown must end.
    public func shutdownDidBegin(deadline: Date) {
        guard case .wait = configuration.whenQueueIsFull else { return }
        queue.stopWaiting()
    }
}
