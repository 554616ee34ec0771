import Foundation
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

/// How many drains posts ask for: one pending at a time, whatever else drains meanwhile. The
/// inbox alone, with a `roundWaiting` that counts, so that no production type carries a counter
/// for these tests; the drains are the aggregator's two kinds (`EventAggregator.drain`): the one a
/// post asked for (`asRequested`) and the others (`waitUntilDelivered`).
final class DrainSchedulingTests: XCTestCase {
    /// An inbox observing `center`, with the number of rounds it has asked for.
    private func inbox(center: NotificationCenter) -> (Inbox, LockedValue<Int>, [any NSObjectProtocol]) {
        let requests = LockedValue(0)
        let inbox = Inbox(
            filter: .allowAll, consent: .granted, configuration: .testing,
            roundWaiting: { requests.withLock { $0 += 1 } },
            deliverNow: { _ in XCTFail("asynchronous delivery only") })
        return (inbox, requests, inbox.observe(center, legacyAQS: false))
    }

    /// A drain as the aggregator runs one: a round taken, then finished.
    private func drain(_ inbox: Inbox, asRequested: Bool) -> [MeasurementEvent] {
        var round = inbox.nextRound(asRequested: asRequested)
        let events = round.events
        inbox.finish(&round)
        return events
    }

    /// Drains that a post did not ask for leave the request pending: posts after them do not
    /// ask again while it is. (When every drain cleared the request, each of these 50 rounds
    /// scheduled one, and a busy poster beside a running drain scheduled one every few dozen
    /// posts.)
    func testDrainingBetweenPostsAsksForNoFurtherDrain() {
        let center = NotificationCenter()
        let (inbox, requests, observers) = inbox(center: center)
        defer { observers.forEach(center.removeObserver) }
        var delivered: [EventValue?] = []
        for round in 0..<50 {
            for index in 0..<10 { MeasurementEvent.post("x/posted", args: ["n": round * 10 + index], to: center) }
            delivered += drain(inbox, asRequested: false).map { $0.args["n"] }
        }
        XCTAssertEqual(requests.withLock { $0 }, 1)
        XCTAssertEqual(delivered, (0..<500).map { .int($0) })
    }

    /// The drain a post asked for delivers it; because that round gave posts back to their
    /// thread, it asks for one more round (which releases what the thread does not), and that
    /// round, with nothing to give back, asks for none. The next post asks again.
    func testARoundThatGaveBackPostsAsksForExactlyOneMore() {
        let center = NotificationCenter()
        let (inbox, requests, observers) = inbox(center: center)
        defer { observers.forEach(center.removeObserver) }
        MeasurementEvent.post("x/first", to: center)
        XCTAssertEqual(requests.withLock { $0 }, 1)
        XCTAssertEqual(drain(inbox, asRequested: true).map(\.name), ["x/first"])
        XCTAssertEqual(requests.withLock { $0 }, 2)
        XCTAssertEqual(drain(inbox, asRequested: true).map(\.name), [])
        XCTAssertEqual(requests.withLock { $0 }, 2)
        MeasurementEvent.post("x/second", to: center)
        XCTAssertEqual(requests.withLock { $0 }, 3)
        XCTAssertEqual(drain(inbox, asRequested: true).map(\.name), ["x/second"])
    }
}
