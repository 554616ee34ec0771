import Dispatch
import Foundation
import ImpressionTracking
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

final class ImpressionEngineConcurrencyTests: XCTestCase {
    /// 4 threads report 10,000 items while another thread advances the clock and runs commit
    /// cycles. Every item ends as exactly one impression or one discard; items kept on screen
    /// all count.
    func testConcurrentReportersAndCommitCyclesLoseAndDuplicateNothing() throws {
        let harness = try EngineUnderTest { $0.batchSize = 64 }
        let engine = harness.engine
        let itemsPerThread = 2_500
        let threads = 4
        let reporters = DispatchGroup()
        let finished = LockedValue(false)

        let committer = Thread {
            while !finished.withLock({ $0 }) {
                harness.clock.advance(by: 0.3)
                engine.runCycle()
                usleep(100)  // leaves the reporters room on a small machine; not a timing assumption
            }
        }
        committer.start()
        for thread in 0..<threads {
            reporters.enter()
            Thread {
                let ids = (thread * itemsPerThread)..<((thread + 1) * itemsPerThread)
                // Even items leave again 200 items later: an impression if the clock moved on
                // far enough meanwhile, a discard otherwise. Odd items stay on screen.
                let lag = 200
                for id in ids {
                    engine.appeared(id, visibleFraction: 0.6, context: ["thread": thread])
                    engine.visibilityChanged(id, visibleFraction: 0.9)
                    if id - lag >= ids.lowerBound && (id - lag).isMultiple(of: 2) { engine.disappeared(id - lag) }
                }
                for id in (ids.upperBound - lag)..<ids.upperBound where id.isMultiple(of: 2) {
                    engine.disappeared(id)
                }
                reporters.leave()
            }.start()
        }
        reporters.wait()
        finished.withLock { $0 = true }
        while !committer.isFinished { usleep(1_000) }

        harness.clock.advance(by: 2)
        engine.runCycle()

        let pushed = harness.pushed.map(\.itemID)
        let discarded = harness.discards.withLock { $0 }.map(\.itemID)
        let diagnostics = engine.diagnostics
        XCTAssertEqual(Set(pushed).count, pushed.count, "duplicated impressions")
        XCTAssertTrue(Set(pushed).isDisjoint(with: discarded), "items both counted and discarded")
        XCTAssertEqual(Set(pushed).union(discarded), Set(0..<(threads * itemsPerThread)), "items lost")
        XCTAssertTrue(Set(stride(from: 1, to: threads * itemsPerThread, by: 2)).isSubset(of: pushed))
        XCTAssertEqual(diagnostics.committed, pushed.count)
        XCTAssertEqual(diagnostics.pushed, pushed.count)
        XCTAssertEqual(diagnostics.waitingInStore, 0)
        XCTAssertEqual(diagnostics.discardedTooShort, discarded.count)
        XCTAssertEqual(diagnostics.itemsOnScreen, threads * itemsPerThread / 2)
    }
}
