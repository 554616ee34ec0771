import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// The event trail: one entry per posted event, whatever its fate, with the plan's findings and
/// what each tracker did.
final class EventTrailTests: XCTestCase {
    /// Records the entries it is given.
    final class TrailRecorder: EventTrailObserver, @unchecked Sendable {
        // @unchecked: every access takes `lock`.
        private let lock = NSLock()
        private var recorded: [EventTrailEntry] = []

        func record(_ entry: EventTrailEntry) {
            lock.lock()
            defer { lock.unlock() }
            recorded.append(entry)
        }

        var entries: [EventTrailEntry] {
            lock.lock()
            defer { lock.unlock() }
            return recorded
        }

        var fates: [EventTrailEntry.Fate] { entries.map(\.fate) }
    }

    private struct Failure: Error, CustomStringConvertible {
        var description: String { "vendor refused" }
    }

    /// A tracker that shows the body an event becomes.
    private struct DescribingTracker: EventTracker, EventBodyDescribing {
        func track(_ event: MeasurementEvent) throws {}
        func flush() throws {}
        func describeBody(for event: MeasurementEvent) -> String? { "{\"event\":\"\(event.name)\"}" }
    }

    private func makeAggregator(
        filter: EventFilter = .allowAll, trackers: [any EventTracker] = [RecordingTracker()],
        processors: [any EventProcessor] = [], _ configure: (inout EventAggregator.Configuration) -> Void = { _ in }
    ) -> (EventAggregator, TrailRecorder, NotificationCenter) {
        let center = NotificationCenter()
        let trail = TrailRecorder()
        var configuration = EventAggregator.Configuration.testing
        configuration.trail = trail
        configuration.problemHandler = nil
        configure(&configuration)
        let aggregator = EventAggregator(
            center: center, filter: filter, trackers: trackers, processors: processors, configuration: configuration)
        aggregator.start()
        return (aggregator, trail, center)
    }

    func testAForwardedEventCarriesEachTrackersOutcomeAndBody() {
        let failing = ClosureTracker { _ in throw Failure() }
        let (aggregator, trail, center) = makeAggregator(trackers: [DescribingTracker(), failing])
        MeasurementEvent.post("feed/opened", args: ["tab": "home"], to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(trail.fates, [.forwarded])
        let entry = trail.entries[0]
        XCTAssertEqual(entry.event.name, "feed/opened")
        XCTAssertEqual(entry.event.args["tab"], "home")
        XCTAssertEqual(
            entry.trackers,
            [
                .init(tracker: "DescribingTracker", body: "{\"event\":\"feed/opened\"}"),
                .init(tracker: "ClosureTracker", error: "vendor refused"),
            ])
        XCTAssertEqual(entry.violations, [])
    }

    func testEveryPostTheFilterDropsIsRecordedWithTheReason() {
        let filter = EventFilter(allow: ["feed/*"], deny: ["feed/debug/*"])
        let (aggregator, trail, center) = makeAggregator(filter: filter)
        // Twice each: the second post of a name is decided from the posting thread's cache.
        for _ in 0..<2 {
            MeasurementEvent.post("app/launched", to: center)
            MeasurementEvent.post("feed/debug/dump", to: center)
        }
        aggregator.waitUntilDelivered()

        XCTAssertEqual(
            trail.fates,
            [
                .filteredOut(reason: "not on the allow-list"), .filteredOut(reason: "on the deny-list"),
                .filteredOut(reason: "not on the allow-list"), .filteredOut(reason: "on the deny-list"),
            ])
        XCTAssertEqual(
            trail.entries.map(\.event.name), ["app/launched", "feed/debug/dump", "app/launched", "feed/debug/dump"])
    }

    func testAMalformedNotificationWithANameIsRecordedWithWhatWasWrong() {
        let (aggregator, trail, center) = makeAggregator()
        // An invalid name is rejected at post; args are read in delivery.
        center.post(name: .measurementEvent, object: nil, userInfo: ["name": "Feed Opened"])
        center.post(name: .measurementEvent, object: nil, userInfo: ["name": "feed/opened", "args": 5])
        // Without a name there is no event to tell of: counted and reported, not in the trail.
        center.post(name: .measurementEvent, object: nil, userInfo: ["args": [:] as [String: Any]])
        aggregator.waitUntilDelivered()

        XCTAssertEqual(trail.entries.map(\.event.name), ["Feed Opened", "feed/opened"])
        guard trail.entries.count == 2, case .malformed(let invalid) = trail.entries[0].fate,
            case .malformed(let args) = trail.entries[1].fate
        else {
            return XCTFail("expected two malformed entries, got \(trail.fates)")
        }
        XCTAssertTrue(invalid.contains("is invalid"), invalid)
        XCTAssertTrue(args.contains("args is a"), args)
        XCTAssertEqual(aggregator.diagnostics.malformed, 3)
    }

    func testAnArgRejectedAtDeliveryIsRecordedAsMalformed() {
        let (aggregator, trail, center) = makeAggregator()
        center.post(
            name: .measurementEvent, object: nil,
            userInfo: ["name": "feed/opened", "args": ["at": Date.distantPast as Any, "bad": NSObject()]])
        aggregator.waitUntilDelivered()
        XCTAssertEqual(trail.entries.map(\.event.name), ["feed/opened"])
        guard case .malformed = trail.entries.first?.fate else { return XCTFail("\(trail.fates)") }
    }

    func testAnEventPostedWithoutConsentIsRecordedAsDiscarded() {
        let (aggregator, trail, center) = makeAggregator { $0.consent = .denied }
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(trail.fates, [.discardedWithoutConsent])
    }

    func testAnEventAProcessorDiscardsIsRecordedAsTheProcessorsGotIt() {
        let stamp = ClosureProcessor { event in
            var event = event
            event.args["stamped"] = true
            return event
        }
        let discard = ClosureProcessor { $0.name == "feed/noise" ? nil : $0 }
        let (aggregator, trail, center) = makeAggregator(processors: [stamp, discard])
        MeasurementEvent.post("feed/noise", to: center)
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(trail.fates, [.discardedByProcessor, .forwarded])
        XCTAssertEqual(trail.entries.map { $0.event.args["stamped"] }, [true, true])
    }

    func testAHeldEventIsRecordedWhenHeldAndAgainWhenItEnds() {
        let (aggregator, trail, center) = makeAggregator { $0.holdsEventsUntilReady = true }
        MeasurementEvent.post("app/launched", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(trail.fates, [.held])
        aggregator.markReady()
        XCTAssertEqual(trail.fates, [.held, .forwarded])
        XCTAssertEqual(trail.entries.map(\.event.name), ["app/launched", "app/launched"])
    }

    func testHeldEventsDiscardedWhenConsentIsDeniedAreRecorded() {
        let (aggregator, trail, center) = makeAggregator { $0.consent = .pendingHolding }
        MeasurementEvent.post("app/launched", to: center)
        aggregator.waitUntilDelivered()
        aggregator.setConsent(.denied)
        XCTAssertEqual(trail.fates, [.held, .discardedWithoutConsent])
    }

    func testTheHeldEventTheLimitDropsIsRecorded() {
        let (aggregator, trail, center) = makeAggregator {
            $0.holdsEventsUntilReady = true
            $0.heldEventLimit = 1
        }
        MeasurementEvent.post("app/first", to: center)
        MeasurementEvent.post("app/second", to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(trail.entries.map(\.event.name), ["app/first", "app/first", "app/second"])
        XCTAssertEqual(trail.entries.count, 3)
        XCTAssertEqual(trail.entries[0].fate, .held)
        guard case .dropped = trail.entries[1].fate else { return XCTFail("\(trail.fates)") }
        XCTAssertEqual(trail.entries[2].fate, .held)
    }

    func testAnEventOverTheInFlightLimitIsRecordedAsDropped() {
        // A long coalescing delay: nothing is delivered before waitUntilDelivered().
        let (aggregator, trail, center) = makeAggregator {
            $0.deliveryCoalescing = 3_600
            $0.maximumInFlightEvents = 2
        }
        for index in 0..<3 { MeasurementEvent.post("load/tick", args: ["index": index], to: center) }
        XCTAssertEqual(trail.fates, [.dropped(reason: "more than 2 events in flight")])
        aggregator.waitUntilDelivered()
        XCTAssertEqual(trail.fates, [.dropped(reason: "more than 2 events in flight"), .forwarded, .forwarded])
    }

    func testThePlansFindingsTravelWithTheEventAndABlockedEventIsRecorded() {
        let catalog = EventCatalog(
            module: "Feed",
            events: [
                EventSpec(
                    name: "feed/item_tapped", type: .click,
                    args: [ArgSpec(name: "position", type: .int, isRequired: true, isPersonalData: false)])
            ])
        let (aggregator, trail, center) = makeAggregator {
            $0.catalogs = [catalog]
            $0.planConformance.actions[.unplannedEvent] = .block
        }
        MeasurementEvent.post("feed/item_tapped", args: ["position": 1], to: center)
        MeasurementEvent.post("feed/item_tapped", to: center)
        MeasurementEvent.post("feed/unknown", to: center)
        MeasurementEvent.post("feed/item_tapped", args: ["position": 2], to: center)
        aggregator.waitUntilDelivered()

        // The plan checks a round before any of it is forwarded: what it blocks is recorded first.
        let entries = trail.entries
        XCTAssertEqual(
            entries.map(\.event.name), ["feed/unknown", "feed/item_tapped", "feed/item_tapped", "feed/item_tapped"])
        XCTAssertEqual(
            entries.map(\.fate), [.dropped(reason: "blocked by the plan"), .forwarded, .forwarded, .forwarded])
        XCTAssertEqual(entries.map { $0.violations.map(\.kind) }, [[.unplannedEvent], [], [.missingArg], []])
        XCTAssertEqual(entries.map { $0.event.args["position"]?.intValue }, [nil, 1, nil, 2])
    }

    func testTheEventIsRecordedWithItsPersonalDataHashed() {
        let catalog = EventCatalog(
            module: "Account",
            events: [
                EventSpec(
                    name: "account/signed_up", type: .activity,
                    args: [ArgSpec(name: "email", type: .string, isRequired: true, isPersonalData: true)])
            ])
        let (aggregator, trail, center) = makeAggregator { $0.catalogs = [catalog] }
        MeasurementEvent.post("account/signed_up", args: ["email": "jane@example.com"], to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(trail.fates, [.forwarded])
        let email = trail.entries.first?.event.args["email"]?.stringValue
        XCTAssertNotNil(email)
        XCTAssertNotEqual(email, "jane@example.com")
    }

    func testSynchronousDeliveryRecordsTheSameFates() {
        let (aggregator, trail, center) = makeAggregator(filter: EventFilter(allow: ["feed/*"])) {
            $0.delivery = .synchronous
        }
        MeasurementEvent.post("feed/opened", to: center)
        MeasurementEvent.post("app/launched", to: center)
        XCTAssertEqual(trail.fates, [.forwarded, .filteredOut(reason: "not on the allow-list")])
        aggregator.stop()
    }
}
