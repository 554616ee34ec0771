import Foundation

/// The posting path's state: what a post reads and writes without the aggregator's lock
/// (counters, the consent and filter generation it reads on every post, the in-flight count,
/// the buffers), and what it needs of the aggregator's.
///
/// The notification observer holds this object strongly, not the aggregator weakly: loading a
/// weak reference cost about 75 instructions per post. It does not keep the aggregator alive;
/// it reaches the aggregator (weakly) only to schedule a drain, once per delivery round, and for
/// synchronous delivery.
final class PostingState: @unchecked Sendable {
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
    let serial = PostingState.serials.add(1)
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
