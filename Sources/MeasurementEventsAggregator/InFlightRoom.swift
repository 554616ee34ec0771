import Dispatch
import Foundation
import MeasurementEvents

/// The in-flight bound's waiting room (``EventAggregator/InFlightLimitBehavior/wait(atMostSeconds:)``
/// and ``EventAggregator/post(_:type:category:args:file:line:)``): posts that wait on their
/// thread for the delivery queue to make room, tasks suspended until it does, and what they are
/// counted as. The in-flight count itself is the inbox's (`Inbox.inFlight`); a round's
/// `finish` calls ``madeRoom()`` after it lowered it.
///
/// No lost wake-up: a waiter checks for room and starts waiting under `condition`'s lock, and
/// ``madeRoom()`` takes that lock after the count was lowered, so a waiter either sees the room
/// or is woken. Nothing here runs user code; the lock is a leaf (taken alone).
final class InFlightRoom: @unchecked Sendable {
    // @unchecked: `waiting`, `suspended` and `closed` are read and written under `condition`'s
    // lock only; the counters are atomics.
    private let condition = NSCondition()
    private var waiting = 0
    private var suspended: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var nextTicket: UInt64 = 0
    private var closed = false

    /// Posts that waited on their thread for room (admitted or not).
    let postsThatWaited = AtomicCounter()
    /// `async` posts that suspended for room.
    let postsThatSuspended = AtomicCounter()

    /// Whether anyone waits for room: checked by every round's `finish` under the wait policy.
    var hasWaiters: Bool {
        condition.lock()
        defer { condition.unlock() }
        return waiting > 0 || !suspended.isEmpty
    }

    /// Blocks the calling thread until `tryAdmit` succeeds, `deadline` passes or the room is
    /// closed (the aggregator is shutting down); `tryAdmit` is told whether it is closed, and
    /// called under the lock. Returns whether `tryAdmit` succeeded.
    func wait(until deadline: Date, tryAdmit: (_ closed: Bool) -> Bool) -> Bool {
        postsThatWaited.add(1)
        condition.lock()
        defer { condition.unlock() }
        waiting += 1
        defer { waiting -= 1 }
        while true {
            if tryAdmit(closed) { return true }
            if !condition.wait(until: deadline) { return tryAdmit(closed) }
        }
    }

    /// Suspends the calling task until ``madeRoom()`` or ``close()``, unless `hasRoom` says there
    /// is room already (checked under the lock). Returns whether the room is closed.
    func suspend(unlessRoom hasRoom: @Sendable () -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            condition.lock()
            guard !closed, !hasRoom() else {
                condition.unlock()
                continuation.resume()
                return
            }
            postsThatSuspended.add(1)
            nextTicket += 1
            suspended[nextTicket] = continuation
            condition.unlock()
        }
        return isClosed
    }

    /// After a round lowered the in-flight count: wakes every waiting post and suspended task,
    /// which try again (those that find no room wait again).
    func madeRoom() {
        condition.lock()
        let resumed = suspended
        suspended = [:]
        if waiting > 0 { condition.broadcast() }
        condition.unlock()
        // Outside the lock: a resumed task may run at once on this thread's executor.
        for continuation in resumed.values { continuation.resume() }
    }

    /// Wakes everyone for good: the aggregator is shutting down, and posts are refused.
    func close() {
        condition.lock()
        closed = true
        condition.unlock()
        madeRoom()
    }

    /// Whether ``close()`` was called.
    var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }
}
