import Foundation

// The posting path: concurrency map
//
// Locks (all `LockedValue`, non-recursive, never held while user code runs), in the order
// they may be taken; a lock further down is never held while one further up is taken:
//   1. `EventAggregator.synchronousDelivery` (NSRecursiveLock, synchronous delivery only):
//      the delivery context of a `.synchronous` aggregator. It is held while trackers,
//      processors and `didReceive` run, on purpose: it stands for the delivery queue, which
//      an asynchronous aggregator uses instead. Recursive so that a tracker may post.
//   2. `EventAggregator.state`: filter, trackers, processors, observers, readiness, held
//      events, event ids, the diagnostics counted under a lock. Changing the consent
//      (`Inbox.publish`) and the filter generation happen under it.
//   3. `PostingBuffer.guarded` (one per posting thread and aggregator): that thread's posts and
//      controls not yet taken, its delivered posts to release, its flags. Never held with 2.
//   4. `PostingBufferRegistry.buffers`: the list of buffers. A leaf: taken alone.
//   Leaves, taken alone in the delivery context: `AttributionState.published`, the identity
//   store's own lock. No lock of this list is taken while another of 2–4 is held.
//
// Atomics (C11, `AtomicCounter`), none of which orders anything but what is said here:
//   `received`, `filteredOut`, `droppedInFlight`: counters (relaxed).
//   `inFlight`, `overflowing`: the in-flight bound and its episode flag.
//   `drainRequested` (acquire-release exchange): 1 while a scheduled drain has not started;
//     at most one drain is scheduled at a time. `drainsScheduled`: for tests.
//   `filterGeneration`: bumped under lock 2 when the filter changes; a cached decision of an
//     older generation is a miss.
//   `consentCode`: the consent in force, the aggregator's one record of it; written under
//     lock 2, read by posts without a lock.
//   `PostingBufferRegistry.sequence`: every item's number, taken inside its buffer's lock 3.
//   `Inbox.serials` (static): aggregator numbers, never reused.
//
// Queues: `EventAggregator.queue` (serial): the delivery context of an asynchronous
// aggregator; drains, tracker calls, identity and consent changes run there.
//
// Who owns what:
//   - The posting thread: its `PostingThread` (slots, decision caches, the post in progress),
//     reached through a pthread key; nothing else touches it (its exit destructor releases it).
//   - The delivery context (queue or lock 1): `PostingBufferRegistry`'s carry and spare arrays,
//     `AttributionState`, the order in which trackers see events.
//
// Invariants:
//   - Exactly once: a post is appended to one buffer under lock 3, taken by exactly one drain
//     (the swap empties the buffer), handed out once (items above a round's limit are carried,
//     not handed out), or counted as filtered out, malformed or dropped in flight.
//   - Per-thread order: one thread appends to its buffer in posting order, and numbers from
//     `sequence` grow in that order; a round hands items out merged by number.
//   - Identity between the events it was posted between: an identity change is a control in
//     the same buffer and the same numbering; the round applies it at its place among the events.
//   - No post waits for delivery: a post takes lock 3 of its own thread only (lock 2 on a
//     decision-cache miss), and the drain holds lock 3 only to swap arrays.

/// The posting path, one per aggregator: posting threads hand it notifications
/// (``receive(_:keys:)``, in `Inbox+Posting.swift`); the delivery side takes a round of work
/// from ``buffers`` (``PostingBufferRegistry/nextRound(rejected:)``). It owns the posting
/// threads' buffers and their registry, the counters of the posting path, the in-flight
/// bound and the consent in force; identity changes enter through the same buffers.
///
/// The notification observer holds this object strongly, not the aggregator weakly: loading a
/// weak reference cost about 75 instructions per post. It does not keep the aggregator alive;
/// it reaches the aggregator (weakly) only to schedule a drain, once per delivery round, and for
/// synchronous delivery.
final class Inbox: @unchecked Sendable {
    // @unchecked: `owner` is set once, in the aggregator's initialiser, before any observer
    // exists; everything else is immutable or atomic.
    private static let serials = AtomicCounter()

    let configuration: EventAggregator.Configuration
    /// The aggregator's state lock, for the filter (on a decision cache miss) and diagnostics.
    let state: LockedValue<EventAggregator.State>
    private let clock: (any EventClock)?
    /// Whether `clock` is nil: checked first, since copying the optional existential costs
    /// more than reading the time.
    private let usesSystemClock: Bool
    /// The aggregator, for drains and synchronous delivery.
    weak var owner: EventAggregator?

    /// This aggregator's number, for the posting threads' slots.
    let serial = Inbox.serials.add(1)
    let buffers = PostingBufferRegistry()

    let received = AtomicCounter()
    let filteredOut = AtomicCounter()
    let droppedInFlight = AtomicCounter()
    /// Events posted (asynchronous delivery) and not yet handed to delivery.
    let inFlight = AtomicCounter()
    /// 1 from the first drop of an overflow episode until the in-flight count is back under
    /// half the limit: a problem is reported once per episode.
    let overflowing = AtomicCounter()
    /// 1 while a drain is scheduled and has not yet started swapping.
    let drainRequested = AtomicCounter()
    /// Drains scheduled by posts, for tests: at most one is pending at a time.
    let drainsScheduled = AtomicCounter()
    /// Bumped whenever the filter changes: cached decisions of older generations are misses.
    let filterGeneration = AtomicCounter()
    private let consentCode: AtomicCounter

    init(
        consent: Consent, configuration: EventAggregator.Configuration,
        state: LockedValue<EventAggregator.State>
    ) {
        consentCode = AtomicCounter(Self.code(of: consent))
        self.configuration = configuration
        self.state = state
        clock = configuration.clock
        usesSystemClock = configuration.clock == nil
    }

    /// The time, from the configured clock.
    @inline(__always)
    func now() -> Date {
        if usesSystemClock { return Date() }
        return clock?.now() ?? Date()
    }

    /// The consent in force: the aggregator's one record of it. Read without a lock by posts;
    /// changed only under the aggregator's state lock (``publish(_:)``), so that code holding
    /// that lock sees a value that cannot change under it.
    var consent: Consent {
        switch consentCode.value {
        case 0: return .granted
        case 1: return .pendingHolding
        case 2: return .pendingDiscarding
        default: return .denied
        }
    }

    /// Changes the consent in force; called under the aggregator's state lock.
    func publish(_ consent: Consent) {
        consentCode.store(Self.code(of: consent))
    }

    private static func code(of consent: Consent) -> Int64 {
        switch consent {
        case .granted: return 0
        case .pendingHolding: return 1
        case .pendingDiscarding: return 2
        case .denied: return 3
        }
    }
}
