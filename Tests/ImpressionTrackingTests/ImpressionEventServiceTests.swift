import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

@testable import ImpressionTracking

final class ImpressionEventServiceTests: XCTestCase {
    private func makeAggregator(center: NotificationCenter) -> (EventAggregator, LockedValue<[MeasurementEvent]>) {
        let received = LockedValue<[MeasurementEvent]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = .synchronous
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["impression/*"]),
            // The recording tracker adds the impressions to the test run's plan coverage.
            trackers: [ClosureTracker { event in received.withLock { $0.append(event) } }, RecordingTracker()],
            configuration: configuration)
        aggregator.start()
        return (aggregator, received)
    }

    func testAggregatorReceivesImpressionsWithTypeAndArgs() throws {
        let center = NotificationCenter()
        let (aggregator, received) = makeAggregator(center: center)
        let clock = ManualImpressionClock(startingAt: 10, epoch: Date(timeIntervalSince1970: 1_000))
        let engine = try ImpressionEngine<Int>(center: center, clock: clock, scheduler: ManualCycleScheduler())

        engine.appeared(42, visibleFraction: 0.75, context: ["position": 3, "feed": "home"])
        clock.advance(by: 1.5)
        engine.disappeared(42)
        engine.appeared(43)
        clock.advance(by: 2)
        engine.runCycle()
        aggregator.flush()

        let events = received.withLock { $0 }
        XCTAssertEqual(events.map(\.name), ["impression/item_viewed", "impression/item_viewed"])
        XCTAssertEqual(events.map(\.type), [.impression, .impression])
        XCTAssertEqual(events.map(\.category), ["impression", "impression"])
        XCTAssertEqual(
            events.first?.args,
            [
                "item_id": "42", "duration_ms": 1500, "max_visible_fraction": 0.75, "still_visible": false,
                "started_at": 1_010.0, "ended_at": 1_011.5, "position": 3, "feed": "home",
            ])
        XCTAssertEqual(
            events.last?.args,
            [
                "item_id": "43", "duration_ms": 2000, "max_visible_fraction": 1.0, "still_visible": true,
                "started_at": 1_011.5,
            ])
        XCTAssertEqual(aggregator.diagnostics.malformed, 0)
        // The generated typed event reads what the encoder wrote.
        XCTAssertEqual(
            events.first.flatMap(ImpressionTrackingEvents.ImpressionItemViewed.init),
            ImpressionTrackingEvents.ImpressionItemViewed(
                itemID: "42", durationMs: 1500, maxVisibleFraction: 0.75, stillVisible: false, startedAt: 1_010,
                endedAt: 1_011.5))
    }

    func testImpressionsConformToTheImpressionCatalog() throws {
        let center = NotificationCenter()
        let violations = LockedValue<[PlanViolation]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = .synchronous
        configuration.catalogs = [ImpressionTrackingEvents.catalog]
        configuration.problemHandler = { problem in
            if case .planViolation(let violation) = problem { violations.withLock { $0.append(violation) } }
        }
        let received = LockedValue(0)
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [ClosureTracker { _ in received.withLock { $0 += 1 } }],
            configuration: configuration)
        aggregator.start()
        let clock = ManualImpressionClock(startingAt: 10, epoch: Date(timeIntervalSince1970: 1_000))
        let engine = try ImpressionEngine<Int>(center: center, clock: clock, scheduler: ManualCycleScheduler())
        engine.appeared(42, visibleFraction: 0.75)
        clock.advance(by: 1.5)
        engine.disappeared(42)
        engine.appeared(43)
        clock.advance(by: 2)
        engine.runCycle()
        aggregator.flush()
        XCTAssertEqual(received.withLock { $0 }, 2)
        XCTAssertEqual(violations.withLock { $0 }, [])
    }

    func testEngineKeysWinOverContextKeys() throws {
        let events = ImpressionEventEncoder<String>().encode(
            [
                Impression(
                    itemID: "a", start: 0, end: nil, visibleDuration: 1, maxVisibleFraction: 1,
                    context: ["item_id": "spoofed", "ended_at": 5.0, "duration_ms": 1, "source": "push"])
            ],
            clock: ManualImpressionClock(epoch: Date(timeIntervalSince1970: 0)))
        XCTAssertEqual(
            events.first?.args,
            [
                "item_id": "a", "duration_ms": 1000, "max_visible_fraction": 1.0, "still_visible": true,
                "started_at": 0.0, "source": "push",
            ])
    }

    func testItemIDTextIsConfigurable() {
        struct Post: Hashable, Sendable { let slug: String }
        let events = ImpressionEventEncoder<Post>(describeID: { $0.slug }).encode(
            [Impression(itemID: Post(slug: "hello"), start: 0, end: 1, visibleDuration: 1, maxVisibleFraction: 1)],
            clock: ManualImpressionClock())
        XCTAssertEqual(events.first?.args["item_id"], "hello")
    }

    func testEventNamesMatchTheCatalog() throws {
        let catalogURL = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Events/ImpressionTracking.json")
        let catalog = try JSONSerialization.jsonObject(with: Data(contentsOf: catalogURL)) as? [String: Any]
        let events = catalog?["events"] as? [[String: Any]] ?? []
        XCTAssertEqual(events.map { $0["name"] as? String }, ["impression/item_viewed"])
        let declared = Set((events.first?["args"] as? [String: Any] ?? [:]).keys)
        let encoded = ImpressionEventEncoder<Int>().encode(
            [Impression(itemID: 1, start: 0, end: 1, visibleDuration: 1, maxVisibleFraction: 1)],
            clock: ManualImpressionClock())
        XCTAssertEqual(Set(encoded.first?.args.keys ?? [:].keys), declared)
        XCTAssertEqual(encoded.first?.type.name, events.first?["type"] as? String)
    }

    func testDurationsBeyondA32BitIntOfMillisecondsGoAsDoubles() {
        // 30 days are 2_592_000_000 ms: the old Int conversion trapped on Apple Watch.
        XCTAssertEqual(ImpressionEventEncoder<Int>.milliseconds(30 * 86_400, limit: .int32), .double(2_592_000_000))
        XCTAssertEqual(ImpressionEventEncoder<Int>.milliseconds(1.2345, limit: .int32), .int(1_235))
    }
}
