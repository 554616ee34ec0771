import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// An arg whose conversion fails, so that it travels as it is (the event is rejected at
/// delivery), and which records where it is released.
private final class Probe: EventValueConvertible, @unchecked Sendable {
    // @unchecked: `releasedOn` is a LockedValue.
    let releasedOn: LockedValue<[String]>
    init(_ releasedOn: LockedValue<[String]>) { self.releasedOn = releasedOn }
    deinit {
        let role = Thread.current.threadDictionary["role"] as? String ?? "another thread"
        releasedOn.withLock { $0.append(role) }
    }
    var eventValue: EventValue { .string("probe") }
    var checkedEventValue: Result<EventValue, EventValue.ValueRejection> { .failure(.outOfRange) }
}

/// A thread (its role "poster") that posts one event carrying a ``Probe`` and then waits for
/// ``finish(postingAgain:)``.
private final class ProbePoster: Sendable {
    let releasedOn = LockedValue<[String]>([])
    private let next = LockedValue<EventName?>(nil)
    private let go = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(center: NotificationCenter) {
        let posted = DispatchSemaphore(value: 0)
        Thread { [releasedOn, next, go, finished] in
            Thread.current.threadDictionary["role"] = "poster"
            MeasurementEvent.post("x/probe", args: ["probe": Probe(releasedOn)], to: center)
            posted.signal()
            go.wait()
            if let name = next.withLock({ $0 }) { MeasurementEvent.post(name, to: center) }
            finished.signal()
        }.start()
        posted.wait()
    }

    /// Lets the thread post `name` (if any) and end; returns when it has.
    func finish(postingAgain name: EventName? = nil) {
        next.withLock { $0 = name }
        go.signal()
        finished.wait()
    }
}

/// The posting path: per-thread buffers and decision caches, and the in-flight bound.
final class EventAggregatorPostingTests: XCTestCase {
    func testAFilterChangeAppliesToANameThisThreadAlreadyPosted() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(center: center, filter: .denyAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        MeasurementEvent.post("feed/item_tapped", to: center)
        aggregator.setFilter(.allowAll)
        MeasurementEvent.post("feed/item_tapped", to: center)
        aggregator.setFilter(.denyAll)
        MeasurementEvent.post("feed/item_tapped", to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(tracker.events.count, 1)
        XCTAssertEqual(aggregator.diagnostics.filteredOut, 2)
    }

    /// The thread's decision cache compares a name's bytes first: a name built at run time (other
    /// storage, same text) must get the literal's decision, and a different name in the same
    /// cache slot must not.
    func testTheDecisionCacheMatchesNamesByTextNotByStorage() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["feed/item_tapped_in_the_list", "s/a"]), trackers: [tracker],
            configuration: .testing)
        aggregator.start()
        let area = ["feed", "item_tapped_in_the_list"]
        MeasurementEvent.post("feed/item_tapped_in_the_list", to: center)  // a literal: cached
        MeasurementEvent.post(EventName(area.joined(separator: "/")), to: center)  // same text, built
        MeasurementEvent.post(EventName(area.joined(separator: "/") + "s"), to: center)  // not listed
        MeasurementEvent.post(EventName(["s", "a"].joined(separator: "/")), to: center)  // small, built
        MeasurementEvent.post("s/a", to: center)
        MeasurementEvent.post("s/b", to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(
            tracker.names, ["feed/item_tapped_in_the_list", "feed/item_tapped_in_the_list", "s/a", "s/a"])
        XCTAssertEqual(aggregator.diagnostics.filteredOut, 2)
    }

    /// The args a post allocated are released by the posting thread (at its next posts), not
    /// by the delivery thread: freeing another thread's memory made delivery wait for that
    /// thread's allocator lock. A value that cannot be an arg travels as it is (the event is
    /// rejected at delivery), so its deinitialiser shows where the args were released.
    func testPostedArgsAreReleasedOnThePostingThread() {
        let (aggregator, _, center) = allowingAggregator(coalescing: 10)  // only the waits drain
        let poster = ProbePoster(center: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.diagnostics.malformed, 1)
        XCTAssertEqual(poster.releasedOn.withLock { $0 }, [], "released before the poster posted again")
        poster.finish(postingAgain: "x/next")
        XCTAssertEqual(poster.releasedOn.withLock { $0 }, ["poster"])
    }

    /// A thread that stops posting does not keep its delivered posts: the next round releases
    /// what it has not.
    func testDeliveredPostsOfAThreadThatStoppedPostingAreReleasedByALaterRound() {
        let (aggregator, _, center) = allowingAggregator(coalescing: 10)  // only the waits drain
        let poster = ProbePoster(center: center)
        aggregator.waitUntilDelivered()  // gives the post back to its thread
        XCTAssertEqual(poster.releasedOn.withLock { $0 }, [])
        aggregator.waitUntilDelivered()  // a round later, still not released by it: released here
        XCTAssertEqual(poster.releasedOn.withLock { $0 }, ["another thread"])
        poster.finish()
    }

    /// The next round comes by itself: a burst followed by silence does not keep its args.
    func testARoundThatGaveBackPostsIsFollowedByOneThatReleasesThem() {
        let (aggregator, _, center) = allowingAggregator(coalescing: 0.01)
        let poster = ProbePoster(center: center)
        let released = expectation(description: "released without another post")
        DispatchQueue.global().async {
            while poster.releasedOn.withLock({ $0 }).isEmpty { usleep(1_000) }
            released.fulfill()
        }
        wait(for: [released], timeout: 10)
        XCTAssertEqual(poster.releasedOn.withLock { $0 }, ["another thread"])
        XCTAssertEqual(aggregator.diagnostics.malformed, 1)
        poster.finish()
    }

    /// A value released on the posting thread may post from its deinitialiser: the posts being
    /// released are out of the buffer meanwhile, so nothing is released twice.
    func testADeinitialiserThatPostsWhileItsPostIsReleasedIsSafe() {
        final class Reposting: EventValueConvertible, @unchecked Sendable {
            // @unchecked: immutable.
            let center: NotificationCenter
            let reposts: Bool
            init(_ center: NotificationCenter, reposts: Bool) { (self.center, self.reposts) = (center, reposts) }
            deinit {
                // Once: the value it posts does not post again.
                guard reposts else { return }
                MeasurementEvent.post("x/from_deinit", args: ["again": Reposting(center, reposts: false)], to: center)
            }
            var eventValue: EventValue { .string("reposting") }
            var checkedEventValue: Result<EventValue, EventValue.ValueRejection> { .failure(.outOfRange) }
        }
        let (aggregator, tracker, center) = allowingAggregator(coalescing: 10)  // only the waits drain
        for _ in 0..<200 {
            MeasurementEvent.post("x/reposting", args: ["value": Reposting(center, reposts: true)], to: center)
        }
        aggregator.waitUntilDelivered()
        for _ in 0..<10 { MeasurementEvent.post("x/plain", to: center) }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, Array(repeating: "x/plain", count: 10))
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.diagnostics.malformed, 400)
    }

    func testAnInvalidNameIsRejectedEveryTimeItIsPosted() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        for _ in 0..<3 { MeasurementEvent.post("feed//tapped", to: center) }
        aggregator.waitUntilDelivered()

        XCTAssertEqual(tracker.events.count, 0)
        XCTAssertEqual(aggregator.diagnostics.malformed, 3)
        XCTAssertEqual(aggregator.diagnostics.received, 3)
    }

    func testEventsOfAThreadThatExitedAreDelivered() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        for round in 0..<20 {
            let exited = DispatchSemaphore(value: 0)
            let thread = Thread {
                MeasurementEvent.post("load/tick", args: ["round": round], to: center)
                exited.signal()
            }
            thread.start()
            exited.wait()
        }
        aggregator.waitUntilDelivered()

        XCTAssertEqual(tracker.events.compactMap { $0.args["round"]?.intValue }, Array(0..<20))
    }

    func testPostsBeyondTheInFlightLimitAreDroppedCountedAndReportedOnce() {
        let center = NotificationCenter()
        let release = DispatchSemaphore(value: 0)
        let delivered = LockedValue(0)
        // Blocks the delivery queue on its first event: nothing is delivered until released.
        let tracker = ClosureTracker { _ in
            if delivered.withLock({ count -> Bool in
                count += 1
                return count == 1
            }) {
                release.wait()
            }
        }
        let problems = LockedValue<[String]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.maximumInFlightEvents = 10
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()

        for index in 0..<31 { MeasurementEvent.post("load/tick", args: ["index": index], to: center) }
        release.signal()
        aggregator.waitUntilDelivered()

        let diagnostics = aggregator.diagnostics
        XCTAssertEqual(delivered.withLock { $0 }, 10)
        XCTAssertEqual(diagnostics.droppedInFlight, 21)
        XCTAssertEqual(diagnostics.received, diagnostics.forwarded + diagnostics.droppedInFlight)
        XCTAssertEqual(problems.withLock { $0 }.count, 1)
        XCTAssertTrue(problems.withLock { $0 }.first?.contains("10 events were waiting") == true)

        // Caught up: the next post is delivered, and a later overflow is a new episode.
        MeasurementEvent.post("load/tick", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(delivered.withLock { $0 }, 11)
        XCTAssertEqual(aggregator.diagnostics.droppedInFlight, 21)
    }
}
