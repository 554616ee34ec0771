import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// Run under ThreadSanitizer too: `swift test --sanitize=thread --filter AggregatorConcurrencyTests`.
final class AggregatorConcurrencyTests: XCTestCase {
    func testEightPostingThreadsDeliverEveryEventInPerThreadOrder() {
        let threads = 8
        let perThread = 20_000
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        // Eight threads in a tight loop are far from human-rate posting: the in-flight bound
        // (InFlightLimitTests) must not drop anything here.
        var configuration = EventAggregator.Configuration.testing
        configuration.maximumInFlightEvents = threads * perThread
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["load/*"], deny: ["load/noise"]), trackers: [tracker],
            configuration: configuration)
        aggregator.start()

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for sequence in 0..<perThread {
                MeasurementEvent.post("load/tick", args: ["thread": thread, "sequence": sequence], to: center)
                if sequence % 1_000 == 0 { MeasurementEvent.post("load/noise", to: center) }
            }
        }
        aggregator.waitUntilDelivered()

        let events = tracker.events
        XCTAssertEqual(events.count, threads * perThread)
        var nextSequence = [Int](repeating: 0, count: threads)
        var outOfOrder = 0
        for event in events {
            guard let thread = event.args["thread"]?.intValue, let sequence = event.args["sequence"]?.intValue else {
                return XCTFail("event without thread or sequence: \(event)")
            }
            if sequence != nextSequence[thread] { outOfOrder += 1 }
            nextSequence[thread] = sequence + 1
        }
        XCTAssertEqual(outOfOrder, 0)
        XCTAssertEqual(nextSequence, [Int](repeating: perThread, count: threads))
        XCTAssertEqual(Set(events.map(\.id)).count, events.count, "ids are unique")
        let diagnostics = aggregator.diagnostics
        XCTAssertEqual(diagnostics.forwarded, threads * perThread)
        XCTAssertEqual(diagnostics.filteredOut, threads * perThread / 1_000)
        XCTAssertEqual(diagnostics.received, diagnostics.forwarded + diagnostics.filteredOut)
    }

    /// Posts that threads take turns at (each waits for the other's post before its next one)
    /// are delivered in that order, when one delivery round holds all of them and merges the
    /// threads' buffers.
    func testPostsOrderedAcrossThreadsAreDeliveredInThatOrderFromOneRound() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        var configuration = EventAggregator.Configuration.testing
        configuration.deliveryCoalescing = 2  // one round: the one waitUntilDelivered runs
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        let threads = 3
        let turns = (0..<threads).map { _ in DispatchSemaphore(value: 0) }
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                for round in 0..<100 {
                    turns[thread].wait()
                    MeasurementEvent.post("x/turn", args: ["n": round * threads + thread], to: center)
                    turns[(thread + 1) % threads].signal()
                }
                group.leave()
            }.start()
        }
        turns[0].signal()
        group.wait()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map { $0.args["n"] }, (0..<300).map { .int($0) })
    }

    func testReconfiguringWhilePostingIsSafe() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in 0..<2_000 {
                switch worker {
                case 0 where index % 100 == 0:
                    aggregator.setFilter(index % 200 == 0 ? .allowAll : EventFilter(allow: ["other/*"]))
                case 1 where index % 500 == 0:
                    aggregator.addTracker(ClosureTracker { _ in })
                case 2 where index % 100 == 0:
                    _ = aggregator.diagnostics
                default:
                    MeasurementEvent.post("load/tick", to: center)
                }
            }
        }
        aggregator.waitUntilDelivered()
        let diagnostics = aggregator.diagnostics
        XCTAssertEqual(diagnostics.received, diagnostics.forwarded + diagnostics.filteredOut)
        XCTAssertEqual(tracker.events.count, diagnostics.forwarded)
    }

    func testSynchronousDeliveryFromManyThreadsCallsTrackersOneAtATime() {
        let center = NotificationCenter()
        let inside = LockedValue(0)
        let overlaps = LockedValue(0)
        let tracker = ClosureTracker { _ in
            let concurrent = inside.withLock { value -> Int in
                value += 1
                return value
            }
            if concurrent > 1 { overlaps.withLock { $0 += 1 } }
            inside.withLock { $0 -= 1 }
        }
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = .synchronous
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<2_000 { MeasurementEvent.post("load/tick", to: center) }
        }
        XCTAssertEqual(overlaps.withLock { $0 }, 0)
        XCTAssertEqual(aggregator.diagnostics.forwarded, 8_000)
    }
}
