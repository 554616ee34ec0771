import Benchmark
import Foundation
import ImpressionTracking

// 8. The impression engine's hot path: visibility updates with 10,000 items tracked.
// Names use underscores, as in BusBenchmarks.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(1)
    )
    registerVisibilityUpdates()
}

func registerVisibilityUpdates() {
    let items = 10_000
    // 1,000 updates per iteration, as in the bus benchmarks.
    let updates = 1_000

    Benchmark("Impressions_visibility_update_10000_items_explicit_time") { benchmark in
        let engine = try ImpressionEngine<Int>(center: NotificationCenter(), scheduler: ManualCycleScheduler())
        for item in 0..<items { engine.appeared(item, visibleFraction: 0.6, at: 0) }
        var time = 0.0
        var item = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<updates {
                time += 0.0001
                item = (item &+ 7_919) % items
                engine.visibilityChanged(item, visibleFraction: item.isMultiple(of: 3) ? 0.4 : 0.8, at: time)
            }
        }
        benchmark.stopMeasurement()
        blackHole(engine.diagnostics.discardedTooShort)
    }

    Benchmark("Impressions_visibility_update_10000_items_engine_clock") { benchmark in
        let engine = try ImpressionEngine<Int>(center: NotificationCenter(), scheduler: ManualCycleScheduler())
        for item in 0..<items { engine.appeared(item, visibleFraction: 0.6) }
        var item = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<updates {
                item = (item &+ 7_919) % items
                engine.visibilityChanged(item, visibleFraction: item.isMultiple(of: 3) ? 0.4 : 0.8)
            }
        }
        benchmark.stopMeasurement()
        blackHole(engine.diagnostics.discardedTooShort)
    }
}
