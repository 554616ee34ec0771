import Foundation
import MeasurementEvents
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEventsAggregator

/// Each tracker is reached through a destination with its own routing, filter, sampling and
/// processors, which change only that destination's copy of the event.
final class DestinationTests: XCTestCase {
    /// What a trail observer received, as entries (the test kit's recorder keeps less).
    private final class Entries: EventTrailObserver, @unchecked Sendable {
        // @unchecked: all state is behind its lock.
        private let state = LockedValue<[EventTrailEntry]>([])
        func record(_ entry: EventTrailEntry) { state.withLock { $0.append(entry) } }
        var all: [EventTrailEntry] { state.withLock { $0 } }
    }

    /// Removes the named args from its copy of each event.
    private struct DroppingArgs: EventProcessor {
        let names: Set<String>
        func process(_ event: MeasurementEvent) -> MeasurementEvent? {
            var event = event
            for name in names { event.args[name] = nil }
            return event
        }
    }

    private func makeAggregator(
        _ destinations: [Destination], catalogs: [EventCatalog] = [], trail: (any EventTrailObserver)? = nil,
        problems: LockedValue<[String]>? = nil
    ) -> (EventAggregator, NotificationCenter) {
        var configuration = EventAggregator.Configuration.testing
        configuration.catalogs = catalogs
        configuration.trail = trail
        configuration.problemHandler = { problem in problems?.withLock { $0.append(problem.description) } }
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, destinations: destinations, configuration: configuration)
        aggregator.start()
        return (aggregator, center)
    }

    /// The example of the issue: Amplitude gets checkout events only, GA4 everything without
    /// the coupon, the collector a 10 % sample; a debug destination sees everything as posted.
    func testThreeDestinationsFilterRemoveAnArgAndSampleEachOnItsOwnCopy() {
        let amplitude = RecordingTracker()
        let ga4 = RecordingTracker()
        let otlp = RecordingTracker()
        let debug = RecordingTracker()
        let entries = Entries()
        let (aggregator, center) = makeAggregator(
            [
                Destination(amplitude, name: "amplitude", filter: EventFilter(allow: ["checkout/*"])),
                Destination(ga4, name: "ga4", processors: [DroppingArgs(names: ["coupon"])]),
                Destination(otlp, name: "otlp", sampleRate: 0.1),
                Destination(debug, name: "debug"),
            ], trail: entries)

        for index in 0..<1_000 {
            let name: EventName = index.isMultiple(of: 4) ? "checkout/completed" : "feed/item_tapped"
            MeasurementEvent.post(name, args: ["index": index, "coupon": "SPRING"], to: center)
        }
        aggregator.waitUntilDelivered()

        XCTAssertEqual(debug.events.count, 1_000)
        XCTAssertEqual(Set(debug.events.compactMap { $0.args["coupon"] }), ["SPRING"], "its copy is untouched")
        XCTAssertEqual(amplitude.events.map(\.name), Array(repeating: "checkout/completed", count: 250))
        XCTAssertEqual(amplitude.events.first?.args["coupon"], "SPRING", "another destination's processor")
        XCTAssertEqual(ga4.events.count, 1_000)
        XCTAssertTrue(ga4.events.allSatisfy { $0.args["coupon"] == nil })
        XCTAssertTrue(ga4.events.allSatisfy { $0.args["index"] != nil })
        // The sample is the events whose id is in the kept share, the same ones every time.
        let expected = debug.events.filter { Destination.keeps($0.id, rate: 0.1) }.map(\.id)
        XCTAssertEqual(otlp.events.map(\.id), expected)
        XCTAssertTrue((60...140).contains(otlp.events.count), "about 10 %: \(otlp.events.count)")
        XCTAssertEqual(aggregator.diagnostics.forwarded, 1_000, "forwarded once, whatever each destination did")

        // The trail says what each destination decided.
        let first = entries.all.first { $0.event.name == "feed/item_tapped" }
        XCTAssertEqual(first?.trackers.map(\.destination), ["amplitude", "ga4", "otlp", "debug"])
        XCTAssertEqual(first?.trackers.first?.decision, .filtered("not on the allow-list"))
        XCTAssertEqual(first?.trackers[1].decision, .forwarded)
        let sampledOut = entries.all.first { $0.trackers.count == 4 && $0.trackers[2].decision != .forwarded }
        XCTAssertEqual(sampledOut?.trackers[2].decision, .sampledOut(rate: 0.1))
        print(
            "three destinations: amplitude \(amplitude.events.count), ga4 \(ga4.events.count) (no coupon), "
                + "otlp \(otlp.events.count) of 1,000 sampled, debug \(debug.events.count)")
    }

    func testAProcessorRenamesOnlyItsDestinationsCopyAndOneThatDropsIsNamed() {
        let renamed = RecordingTracker()
        let dropped = RecordingTracker()
        let plain = RecordingTracker()
        let entries = Entries()
        let (aggregator, center) = makeAggregator(
            [
                Destination(
                    renamed, name: "renamed",
                    processors: [
                        ClosureProcessor { event in
                            var copy = MeasurementEvent(
                                EventName("vendor/\(event.name.rawValue.replacingOccurrences(of: "/", with: "_"))"))
                            copy.attribution = event.attribution
                            return copy
                        }
                    ]),
                Destination(dropped, name: "dropped", processors: [ClosureProcessor { _ in nil }]),
                Destination(plain, name: "plain"),
            ], trail: entries)
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(renamed.events.map(\.name), ["vendor/feed_opened"])
        XCTAssertEqual(plain.events.map(\.name), ["feed/opened"])
        XCTAssertEqual(dropped.events.count, 0)
        XCTAssertEqual(entries.all.first?.trackers[1].decision, .droppedByProcessor("ClosureProcessor"))
        XCTAssertEqual(aggregator.diagnostics.discarded, 0, "the event was forwarded: one destination kept it out")
    }

    func testTheCatalogRoutesAnEventOnlyToTheDestinationsItNames() {
        let catalog = EventCatalog(
            module: "Shop",
            events: [
                EventSpec(name: "shop/opened", type: .activity, args: [], destinations: ["amplitude"]),
                EventSpec(name: "shop/closed", type: .activity, args: []),
            ])
        let amplitude = RecordingTracker()
        let ga4 = RecordingTracker()
        let entries = Entries()
        let (aggregator, center) = makeAggregator(
            [Destination(amplitude, name: "amplitude"), Destination(ga4, name: "ga4")], catalogs: [catalog],
            trail: entries)
        MeasurementEvent.post("shop/opened", to: center)
        MeasurementEvent.post("shop/closed", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(amplitude.events.map(\.name), ["shop/opened", "shop/closed"])
        XCTAssertEqual(ga4.events.map(\.name), ["shop/closed"], "not routed to ga4 by its catalog")
        XCTAssertEqual(entries.all.first?.trackers.map(\.decision), [.forwarded, .notRouted])
    }

    func testASecondDestinationOnTheSameTrackerObjectIsReportedAndLeftOut() {
        let tracker = RecordingTracker()
        let problems = LockedValue<[String]>([])
        let (aggregator, center) = makeAggregator(
            [Destination(tracker, name: "first"), Destination(tracker, name: "second", filter: .allowAll)],
            problems: problems)
        aggregator.addDestination(Destination(tracker, name: "third"))
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.count, 1, "never twice to one tracker")
        XCTAssertEqual(aggregator.destinations.map(\.name), ["first"])
        XCTAssertEqual(problems.withLock { $0.filter { $0.contains("was left out") }.count }, 2)
    }

    func testAFilterEntryThatMatchesNothingIsReported() {
        let problems = LockedValue<[String]>([])
        _ = makeAggregator(
            [Destination(RecordingTracker(), name: "amplitude", filter: EventFilter(allow: ["checkout*"]))],
            problems: problems)
        XCTAssertEqual(
            problems.withLock { $0 }.filter { $0.contains("checkout*") }.count, 1, "\(problems.withLock { $0 })")
    }

    func testConsentAndFlushesReachEveryTrackerWhateverItsDestinationKeeps() {
        let filtered = RecordingTracker()
        let (aggregator, _) = makeAggregator(
            [Destination(filtered, name: "none", filter: .denyAll, sampleRate: 0)])
        aggregator.setConsent(.denied)
        aggregator.flush()
        XCTAssertEqual(filtered.consentChanges.last, .denied)
        XCTAssertGreaterThan(filtered.flushCount, 0)
        XCTAssertGreaterThan(filtered.discardCount, 0)
    }

    /// A destination added while four threads post: every event reaches the first tracker
    /// once; the added one gets, of each thread, a run of its latest events, in order, once each.
    func testADestinationAddedWhileFourThreadsPostGetsEachEventOnceInOrder() {
        let first = RecordingTracker()
        let added = RecordingTracker()
        let (aggregator, center) = makeAggregator([Destination(first, name: "first")])
        let perThread = 2_000
        DispatchQueue.concurrentPerform(iterations: 5) { worker in
            if worker == 4 {
                aggregator.addDestination(Destination(added, name: "added"))
                return
            }
            for index in 0..<perThread {
                MeasurementEvent.post("load/event", args: ["thread": worker, "index": index], to: center)
            }
        }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(first.events.count, 4 * perThread)
        XCTAssertEqual(Set(first.events.map(\.id)).count, 4 * perThread, "once each")
        XCTAssertEqual(Set(added.events.map(\.id)).count, added.events.count, "once each")
        for thread in 0..<4 {
            let indices = added.events.filter { $0.args["thread"] == .int(thread) }.compactMap { event -> Int? in
                if case .int(let index) = event.args["index"] { return Int(index) } else { return nil }
            }
            if let lowest = indices.first {
                XCTAssertEqual(indices, Array(lowest..<perThread), "thread \(thread): the latest, in order")
            }
        }
    }

    func testTheSampleIsAboutItsShareForIdsMadeInSequence() {
        var ids = EventIDGenerator(seed: 7)
        let kept = (0..<100_000).filter { _ in Destination.keeps(ids.next(), rate: 0.1) }.count
        XCTAssertTrue((9_700...10_300).contains(kept), "\(kept)")
        XCTAssertFalse(Destination.keeps(ids.next(), rate: 0))
        XCTAssertTrue((0..<100).allSatisfy { _ in Destination.keeps(ids.next(), rate: 1) })
    }
}
