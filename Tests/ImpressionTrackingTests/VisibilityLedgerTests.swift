import Foundation
import ImpressionTracking
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// One input to the engine, at an explicit time.
enum Step {
    case appear(Int, fraction: Double = 1, at: TimeInterval)
    case fraction(Int, Double, at: TimeInterval)
    case disappear(Int, at: TimeInterval)
    case background(at: TimeInterval)
    case active(at: TimeInterval)
    case reload(at: TimeInterval)
    case commit(at: TimeInterval)

    var time: TimeInterval {
        switch self {
        case .appear(_, _, let time), .fraction(_, _, let time), .disappear(_, let time), .background(let time),
            .active(let time), .reload(let time), .commit(let time):
            return time
        }
    }

    func apply(to engine: ImpressionEngine<Int>) {
        switch self {
        case .appear(let id, let fraction, let time): engine.appeared(id, visibleFraction: fraction, at: time)
        case .fraction(let id, let fraction, let time):
            engine.visibilityChanged(id, visibleFraction: fraction, at: time)
        case .disappear(let id, let time): engine.disappeared(id, at: time)
        case .background(let time): engine.enteredBackground(at: time)
        case .active(let time): engine.becameActive(at: time)
        case .reload(let time): engine.contentReloaded(at: time)
        case .commit(let time): engine.commit(at: time)
        }
    }
}

/// An impression a scenario must produce: `end == nil` means still visible at the commit.
struct ExpectedImpression: CustomStringConvertible {
    var id: Int
    var start: TimeInterval
    var end: TimeInterval?
    var duration: TimeInterval
    var maxFraction: Double = 1

    var description: String {
        "#\(id) \(start)…\(end.map { "\($0)" } ?? "still visible") \(duration) s max \(maxFraction)"
    }

    func matches(_ impression: Impression<Int>) -> Bool {
        func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-9 }
        guard impression.itemID == id, close(impression.start, start), close(impression.visibleDuration, duration),
            close(impression.maxVisibleFraction, maxFraction)
        else { return false }
        switch (impression.end, end) {
        case (nil, nil): return true
        case (let actual?, let expected?): return close(actual, expected)
        default: return false
        }
    }
}

struct Scenario {
    var name: String
    var policy: ReimpressionPolicy = .oncePerLifetime
    var steps: [Step]
    var impressions: [ExpectedImpression]
    var tooShort = 0
    var neverViewable = 0
    var line: UInt

    init(
        name: String, policy: ReimpressionPolicy = .oncePerLifetime, steps: [Step], impressions: [ExpectedImpression],
        tooShort: Int = 0, neverViewable: Int = 0, line: UInt = #line
    ) {
        self.name = name
        self.policy = policy
        self.steps = steps
        self.impressions = impressions
        self.tooShort = tooShort
        self.neverViewable = neverViewable
        self.line = line
    }

    /// Runs the steps on a fresh engine, then commits and pushes at the last step's time.
    func run(file: StaticString = #filePath) throws {
        let harness = try EngineUnderTest { $0.reimpressionPolicy = policy }
        for step in steps { step.apply(to: harness.engine) }
        harness.engine.runCycle(at: steps.last?.time ?? 0)
        let pushed = harness.pushed
        let diagnostics = harness.engine.diagnostics
        XCTAssertEqual(pushed.count, impressions.count, "\(name): impressions \(pushed)", file: file, line: line)
        for (actual, expected) in zip(pushed, impressions) where !expected.matches(actual) {
            XCTFail("\(name): expected \(expected), got \(actual)", file: file, line: line)
        }
        XCTAssertEqual(diagnostics.discardedTooShort, tooShort, "\(name): too-short discards", file: file, line: line)
        XCTAssertEqual(
            diagnostics.discardedNeverViewable, neverViewable, "\(name): never-viewable discards", file: file,
            line: line)
    }
}

final class VisibilityLedgerTests: XCTestCase {
    func testAreaThresholdIsFiftyPercentInclusive() throws {
        try [
            Scenario(
                name: "50% for 1 s counts",
                steps: [.appear(1, fraction: 0.5, at: 0), .disappear(1, at: 1)],
                impressions: [.init(id: 1, start: 0, end: 1, duration: 1, maxFraction: 0.5)]),
            Scenario(
                name: "49% for 5 s does not count",
                steps: [.appear(1, fraction: 0.49, at: 0), .disappear(1, at: 5)],
                impressions: [], neverViewable: 1),
            Scenario(
                name: "49% then 50% counts from the moment it reached 50%",
                steps: [.appear(1, fraction: 0.49, at: 0), .fraction(1, 0.5, at: 2), .disappear(1, at: 3)],
                impressions: [.init(id: 1, start: 2, end: 3, duration: 1, maxFraction: 0.5)]),
        ].forEach { try $0.run() }
    }

    func testMinimumTimeIsOneSecondInclusive() throws {
        try [
            Scenario(
                name: "0.99 s is too short",
                steps: [.appear(1, at: 0), .disappear(1, at: 0.99)],
                impressions: [], tooShort: 1),
            Scenario(
                name: "1.0 s counts",
                steps: [.appear(1, at: 0), .disappear(1, at: 1.0)],
                impressions: [.init(id: 1, start: 0, end: 1, duration: 1)]),
            Scenario(
                name: "1.0 s reached through floating-point instants counts",
                steps: [.appear(1, at: 0.2), .disappear(1, at: 1.2)],
                impressions: [.init(id: 1, start: 0.2, end: 1.2, duration: 1)]),
        ].forEach { try $0.run() }
    }

    func testSeparateVisitsDoNotAddUp() throws {
        try Scenario(
            name: "two visits of 0.6 s",
            steps: [.appear(1, at: 0), .disappear(1, at: 0.6), .appear(1, at: 1), .disappear(1, at: 1.6)],
            impressions: [], tooShort: 2
        ).run()
    }

    func testDipBelowTheAreaThresholdRestartsTheClock() throws {
        try [
            Scenario(
                name: "0.7 s, dip, 0.9 s",
                steps: [
                    .appear(1, at: 0), .fraction(1, 0.3, at: 0.7), .fraction(1, 0.8, at: 0.9), .disappear(1, at: 1.8),
                ],
                impressions: [], tooShort: 1),
            Scenario(
                name: "0.7 s, dip, 1.0 s counts from the recovery",
                steps: [
                    .appear(1, at: 0), .fraction(1, 0.3, at: 0.7), .fraction(1, 0.8, at: 0.9), .disappear(1, at: 1.9),
                ],
                impressions: [.init(id: 1, start: 0.9, end: 1.9, duration: 1, maxFraction: 0.8)]),
            Scenario(
                name: "a dip after qualifying ends the visit at the dip",
                steps: [.appear(1, at: 0), .fraction(1, 0.2, at: 1.5), .disappear(1, at: 4)],
                impressions: [.init(id: 1, start: 0, end: 1.5, duration: 1.5)]),
        ].forEach { try $0.run() }
    }

    func testBackgroundEndsRunningVisits() throws {
        try [
            Scenario(
                name: "background at 0.8 s, back, 0.5 s more",
                steps: [.appear(1, at: 0), .background(at: 0.8), .active(at: 10), .disappear(1, at: 10.5)],
                impressions: [], tooShort: 1),
            Scenario(
                name: "background at 0.8 s, back, 1 s more counts from the return",
                steps: [.appear(1, at: 0), .background(at: 0.8), .active(at: 10), .disappear(1, at: 11)],
                impressions: [.init(id: 1, start: 10, end: 11, duration: 1)]),
            Scenario(
                name: "a qualified visit ends at the moment of backgrounding",
                steps: [.appear(1, at: 0), .background(at: 3), .active(at: 100), .disappear(1, at: 102)],
                impressions: [.init(id: 1, start: 0, end: 3, duration: 3)]),
            Scenario(
                name: "visibility reported in background starts no visit",
                steps: [.background(at: 0), .appear(1, at: 1), .fraction(1, 0.9, at: 2), .disappear(1, at: 9)],
                impressions: [], tooShort: 0, neverViewable: 1),
            Scenario(
                name: "an item that appeared in background starts its visit on return",
                steps: [.background(at: 0), .appear(1, at: 1), .active(at: 5), .disappear(1, at: 6.5)],
                impressions: [.init(id: 1, start: 5, end: 6.5, duration: 1.5)]),
        ].forEach { try $0.run() }
    }

    func testRecordsTheHighestVisibleFractionOfTheVisit() throws {
        try Scenario(
            name: "0.6 → 0.9 → 0.7",
            steps: [
                .appear(1, fraction: 0.6, at: 0), .fraction(1, 0.9, at: 0.5), .fraction(1, 0.7, at: 0.8),
                .disappear(1, at: 2),
            ],
            impressions: [.init(id: 1, start: 0, end: 2, duration: 2, maxFraction: 0.9)]
        ).run()
    }

    func testStillVisibleItemIsCommittedWithoutAnEnd() throws {
        try Scenario(
            name: "on screen at the commit",
            steps: [.appear(1, at: 0), .appear(2, at: 0.7), .commit(at: 1.5)],
            impressions: [.init(id: 1, start: 0, end: nil, duration: 1.5)]
        ).run()
    }

    func testSamplerReportsWithoutAppearCallsStartVisits() throws {
        try Scenario(
            name: "fractions only",
            steps: [
                .fraction(1, 0.8, at: 0), .fraction(1, 1, at: 0.5), .fraction(2, 0, at: 0.5), .disappear(1, at: 1.2),
            ],
            impressions: [.init(id: 1, start: 0, end: 1.2, duration: 1.2)]
        ).run()
    }

    func testStillVisibleItemIsCommittedExactlyOnceAcrossManyCycles() throws {
        let harness = try EngineUnderTest()
        harness.engine.appeared(1, at: 0)
        for cycle in 1...50 {
            harness.engine.runCycle(at: Double(cycle) * 0.5)
        }
        harness.engine.disappeared(1, at: 30)
        harness.engine.runCycle(at: 31)
        XCTAssertEqual(harness.pushed.map(\.itemID), [1])
        XCTAssertEqual(harness.pushed.first?.end, nil)
        XCTAssertEqual(harness.pushed.first?.visibleDuration, 1.0)
        XCTAssertEqual(harness.engine.diagnostics.committed, 1)
    }

    func testNotANumberFractionIsIgnoredAndCounted() throws {
        let harness = try EngineUnderTest()
        harness.engine.appeared(1, at: 0)
        harness.engine.visibilityChanged(1, visibleFraction: .nan, at: 0.5)
        harness.engine.disappeared(1, at: 1)
        harness.engine.runCycle(at: 1)
        XCTAssertEqual(harness.pushed.map(\.itemID), [1])
        XCTAssertEqual(harness.engine.diagnostics.invalidFractions, 1)
    }

    func testOutOfRangeFractionsAreClamped() throws {
        try Scenario(
            name: "1.2 and -0.5",
            steps: [.appear(1, fraction: 1.2, at: 0), .fraction(1, -0.5, at: 1.5), .disappear(1, at: 2)],
            impressions: [.init(id: 1, start: 0, end: 1.5, duration: 1.5, maxFraction: 1)]
        ).run()
    }

    func testDisappearanceOfAnUnknownItemIsCounted() throws {
        let harness = try EngineUnderTest()
        harness.engine.disappeared(9, at: 1)
        XCTAssertEqual(harness.engine.diagnostics.unmatchedDisappearances, 1)
        XCTAssertTrue(harness.discards.withLock { $0 }.isEmpty)
    }

    func testConfiguredThresholdsReplaceTheStandard() throws {
        let harness = try EngineUnderTest {
            $0.minimumVisibleFraction = 1.0
            $0.minimumVisibleDuration = 2.0
            $0.commitInterval = 3
        }
        harness.engine.appeared(1, visibleFraction: 0.99, at: 0)
        harness.engine.disappeared(1, at: 5)
        harness.engine.appeared(2, at: 0)
        harness.engine.disappeared(2, at: 1.9)
        harness.engine.appeared(3, at: 0)
        harness.engine.disappeared(3, at: 2)
        harness.engine.runCycle(at: 5)
        XCTAssertEqual(harness.pushed.map(\.itemID), [3])
        XCTAssertEqual(harness.engine.diagnostics.discardedNeverViewable, 1)
        XCTAssertEqual(harness.engine.diagnostics.discardedTooShort, 1)
    }

    func testDiscardsNameTheItemAndItsLongestVisit() throws {
        let harness = try EngineUnderTest()
        harness.engine.appeared(4, at: 10)
        harness.engine.visibilityChanged(4, visibleFraction: 0.1, at: 10.3)
        harness.engine.visibilityChanged(4, visibleFraction: 1, at: 10.5)
        harness.engine.disappeared(4, at: 11)
        XCTAssertEqual(
            harness.discards.withLock { $0 },
            [
                ImpressionDiscard(
                    itemID: 4, reason: .tooShort, longestVisibleDuration: 0.5, appeared: 10, disappeared: 11)
            ])
    }

    func testInputsWithoutATimeReadTheClock() throws {
        let harness = try EngineUnderTest()
        harness.clock.advance(to: 7)
        harness.engine.appeared(1)
        harness.clock.advance(by: 1.25)
        harness.engine.disappeared(1)
        harness.engine.runCycle()
        XCTAssertEqual(harness.pushed.map(\.start), [7])
        XCTAssertEqual(harness.pushed.map(\.visibleDuration), [1.25])
    }

    func testContextTravelsWithTheImpression() throws {
        let harness = try EngineUnderTest()
        harness.engine.appeared(1, context: ["position": 3], at: 0)
        harness.engine.setContext(["position": 4, "feed": "home"], for: 1)
        harness.engine.appeared(1, visibleFraction: 0.9, at: 0.5)  // nil context keeps the attached one
        harness.engine.disappeared(1, at: 2)
        harness.engine.runCycle(at: 2)
        XCTAssertEqual(harness.pushed.first?.context, ["position": 4, "feed": "home"])
        XCTAssertEqual(harness.engine.diagnostics.repeatedAppearances, 1)
    }
}
