import ImpressionTracking
import XCTest

/// The feed situations the engine exists for.
final class FeedScrollingTests: XCTestCase {
    func testFastFlingPastOneHundredItemsMakesNoImpression() throws {
        let harness = try EngineUnderTest()
        for id in 0..<100 {
            harness.engine.appeared(id)
            harness.clock.advance(by: 0.02)
            harness.engine.disappeared(id)
            if id % 25 == 24 { harness.engine.runCycle() }
        }
        harness.engine.runCycle()
        XCTAssertEqual(harness.pushed.count, 0)
        XCTAssertEqual(harness.engine.diagnostics.discardedTooShort, 100)
        XCTAssertEqual(Set(harness.discards.withLock { $0 }.map(\.itemID)), Set(0..<100))
    }

    func testPauseOnFiveItemsMakesExactlyFive() throws {
        let harness = try EngineUnderTest()
        // A fling that comes to rest with items 100…104 on screen.
        for id in 0..<100 {
            harness.engine.appeared(id)
            harness.clock.advance(by: 0.02)
            harness.engine.disappeared(id)
        }
        for id in 100..<105 { harness.engine.appeared(id) }
        for _ in 0..<4 {
            harness.clock.advance(by: 1)
            harness.engine.runCycle()
        }
        for id in 100..<105 { harness.engine.disappeared(id) }
        harness.engine.runCycle()
        XCTAssertEqual(harness.pushed.map(\.itemID).sorted(), Array(100..<105))
        XCTAssertEqual(harness.engine.diagnostics.discardedTooShort, 100)
    }
}
