/// The state the posting path reads and writes without the aggregator's lock: counters, the
/// consent and filter generation it reads on every post, the in-flight count, and the buffers.
final class PostingState: Sendable {
    private static let serials = AtomicCounter()

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
    /// Bumped whenever the filter changes: cached decisions of older generations are misses.
    let filterGeneration = AtomicCounter()
    private let consentCode: AtomicCounter

    init(consent: EventAggregator.Consent) {
        consentCode = AtomicCounter(Self.code(of: consent))
    }

    /// The consent in force, as the lock-holding code last set it.
    var consent: EventAggregator.Consent {
        switch consentCode.value {
        case 0: return .granted
        case 1: return .pendingHolding
        case 2: return .pendingDiscarding
        default: return .denied
        }
    }

    /// Called under the state lock, with `state.consent`.
    func publish(_ consent: EventAggregator.Consent) {
        consentCode.store(Self.code(of: consent))
    }

    private static func code(of consent: EventAggregator.Consent) -> Int64 {
        switch consent {
        case .granted: return 0
        case .pendingHolding: return 1
        case .pendingDiscarding: return 2
        case .denied: return 3
        }
    }
}
