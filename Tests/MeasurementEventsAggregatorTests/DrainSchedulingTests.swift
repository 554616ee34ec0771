import Foundation
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

/// How many drains posts schedule: one pending at a time, whatever else drains meanwhile.
final class DrainSchedulingTests: XCTestCase {
    /// `waitUntilDelivered` drains without taking over the pending drain: posts after it do
    /// not schedule another timer while one is pending. (When every drain cleared the
    /// request, each of these 50 rounds scheduled one, and a busy poster beside a running
    /// drain scheduled one every few dozen posts.)
    func testDrainingBetweenPostsSchedulesNoFurtherDrain() {
        let (aggregator, tracker, center) = allowingAggregator(coalescing: 0.5)
        for round in 0..<50 {
            for index in 0..<10 { MeasurementEvent.post("x/posted", args: ["n": round * 10 + index], to: center) }
            aggregator.waitUntilDelivered()
        }
        XCTAssertEqual(aggregator.inbox.drainsScheduled.value, 1)
        let delivered = tracker.events.map { $0.args["n"] }
        XCTAssertEqual(delivered, (0..<500).map { .int($0) })
    }

    /// The scheduled drain delivers the post that scheduled it; because that round gave posts
    /// back to their thread, it asks for one more round (which releases what the thread does
    /// not), and that round, with nothing to give back, asks for none. The next post schedules
    /// again.
    func testARoundThatGaveBackPostsAsksForExactlyOneMore() {
        let (aggregator, tracker, center) = allowingAggregator(coalescing: 0.05)
        MeasurementEvent.post("x/first", to: center)
        let delivered = expectation(description: "the scheduled drain delivered x/first")
        DispatchQueue.global().async {
            while tracker.names.isEmpty { usleep(1_000) }
            delivered.fulfill()
        }
        wait(for: [delivered], timeout: 10)
        // Five coalescing delays: the follow-up round has run, and asked for nothing more.
        usleep(250_000)
        XCTAssertEqual(aggregator.inbox.drainsScheduled.value, 2)
        MeasurementEvent.post("x/second", to: center)
        XCTAssertEqual(aggregator.inbox.drainsScheduled.value, 3)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["x/first", "x/second"])
    }
}
