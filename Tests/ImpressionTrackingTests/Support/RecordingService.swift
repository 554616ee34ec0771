import Foundation
import ImpressionTracking
import MeasurementEvents
import MeasurementEventsAggregator

/// Hands impressions through unchanged, so tests see exactly what the engine pushed.
struct PassThroughEncoder<ItemID: Hashable & Sendable>: ImpressionEncoder {
    func encode(_ batch: [Impression<ItemID>], clock: any ImpressionClock) -> [Impression<ItemID>] { batch }
}

/// Records every batch it is sent; can be told to fail the next sends.
final class RecordingService<ItemID: Hashable & Sendable>: ImpressionTrackingService {
    struct Unavailable: Error {}

    private struct State {
        var batches: [[Impression<ItemID>]] = []
        var failuresToCome = 0
    }

    private let state = LockedValue(State())

    func send(_ payload: [Impression<ItemID>]) throws {
        try state.withLock { state in
            if state.failuresToCome > 0 {
                state.failuresToCome -= 1
                throw Unavailable()
            }
            state.batches.append(payload)
        }
    }

    func failNextSends(_ count: Int) {
        state.withLock { $0.failuresToCome = count }
    }

    var batches: [[Impression<ItemID>]] { state.withLock { $0.batches } }
    var impressions: [Impression<ItemID>] { batches.flatMap { $0 } }
}

/// An engine on a manual clock and scheduler that records what it pushes.
struct EngineUnderTest {
    let engine: ImpressionEngine<Int>
    let clock: ManualImpressionClock
    let scheduler: ManualCycleScheduler
    let service: RecordingService<Int>
    let discards: LockedValue<[ImpressionDiscard<Int>]>

    init(_ configure: (inout ImpressionConfiguration) -> Void = { _ in }) throws {
        var configuration = ImpressionConfiguration()
        configure(&configuration)
        let clock = ManualImpressionClock()
        let scheduler = ManualCycleScheduler()
        let service = RecordingService<Int>()
        let discards = LockedValue<[ImpressionDiscard<Int>]>([])
        engine = try ImpressionEngine(
            configuration: configuration, encoder: PassThroughEncoder<Int>(), service: service,
            clock: clock, scheduler: scheduler, discardHandler: { discard in discards.withLock { $0.append(discard) } })
        self.clock = clock
        self.scheduler = scheduler
        self.service = service
        self.discards = discards
    }

    var pushed: [Impression<Int>] { service.impressions }
}
