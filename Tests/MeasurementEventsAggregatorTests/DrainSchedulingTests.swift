import Foundation
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

/// How many drains posts ask for: one pending at a time, whatever else drains meanwhile. The
/// inbox alone, with a `schedule` that counts, so that no production type carries a counter
/// for these tests; the drains are the inbox's two kinds (`Inbox.drain(asRequested:)`): the one a
/// post asked for (`asRequested`) and the others (`waitUntilDelivered`).
final class DrainSchedulingTests: XCTestCase {
    /// An inbox observing `center`, with the number of rounds it has asked for and the events
    /// its drains delivered.
    private func inbox(
        center: NotificationCenter
    ) -> (Inbox, LockedValue<Int>, LockedValue<[MeasurementEvent]>, [any NSObjectProtocol]) {
        let requests = LockedValue(0)
        let delivered = LockedValue<[MeasurementEvent]>([])
        let inbox = Inbox(
            filter: .allowAll, consent: .granted, configuration: .testing,
            schedule: { _ in requests.withLock { $0 += 1 } },
            deliver: { round in delivered.withLock { $0 += round.events } },
            deliverNow: { _ in XCTFail("asynchronous delivery only") })
        return (inbox, requests, delivered, inbox.observe(center, legacyAQS: false))
    }

    /// A drain, as the aggregator's queue runs one: the events it delivered.
    private func drain(
        _ inbox: Inbox, asRequested: Bool, delivered: LockedValue<[MeasurementEvent]>
    ) -> [MeasurementEvent] {
        inbox.drain(asRequested: asRequested)
        return delivered.withLock { events in
            defer { events = [] }
            return events
        }
    }

    /// Drains that a post did not ask for leave the request pending: posts after them do not
    /// ask again while it is. (When every drain cleared the request, each of these 50 rounds
    /// scheduled one, and a busy poster beside a running drain scheduled one every few dozen
    /// posts.)
    func testDrainingBetweenPostsAsksForNoFurtherDrain() {
        let center = NotificationCenter()
        let (inbox, requests, delivered, observers) = inbox(center: center)
        defer { observers.forEach(center.removeObserver) }
        var numbers: [EventValue?] = []
        for round in 0..<50 {
            for index in 0..<10 { MeasurementEvent.post("x/posted", args: ["n": round * 10 + index], to: center) }
            numbers += drain(inbox, asRequested: false, delivered: delivered).map { $0.args["n"] }
        }
        XCTAssertEqual(requests.withLock { $0 }, 1)
        XCTAssertEqual(numbers, (0..<500).map { .int($0) })
    }

    /// The drain a post asked for delivers it; because that round gave posts back to their
    /// thread, it asks for one more round (which releases what the thread does not), and that
    /// round, with nothing to give back, asks for none. The next post asks again.
    func testARoundThatGaveBackPostsAsksForExactlyOneMore() {
        let center = NotificationCenter()
        let (inbox, requests, delivered, observers) = inbox(center: center)
        defer { observers.forEach(center.removeObserver) }
        MeasurementEvent.post("x/first", to: center)
        XCTAssertEqual(requests.withLock { $0 }, 1)
        XCTAssertEqual(drain(inbox, asRequested: true, delivered: delivered).map(\.name), ["x/first"])
        XCTAssertEqual(requests.withLock { $0 }, 2)
        XCTAssertEqual(drain(inbox, asRequested: true, delivered: delivered).map(\.name), [])
        XCTAssertEqual(requests.withLock { $0 }, 2)
        MeasurementEvent.post("x/second", to: center)
        XCTAssertEqual(requests.withLock { $0 }, 3)
        XCTAssertEqual(drain(inbox, asRequested: true, delivered: delivered).map(\.name), ["x/second"])
    }
}
