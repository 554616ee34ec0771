import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEvents

/// The inbox takes the record a post published instead of decoding its userInfo, and moves it
/// out of the poster's frame when it keeps it: every other observer of the same post must still
/// see the whole event.
final class InboxTests: XCTestCase {
    private func aggregator(
        on center: NotificationCenter, delivery: EventAggregator.Delivery, filter: EventFilter = .allowAll
    ) -> (EventAggregator, RecordingTracker) {
        let tracker = RecordingTracker()
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = delivery
        let aggregator = EventAggregator(
            center: center, filter: filter, trackers: [tracker], configuration: configuration)
        aggregator.start()
        return (aggregator, tracker)
    }

    /// Two aggregators on one center, each of either delivery, both keep every post whole:
    /// the first moves the published record out, the second decodes the same userInfo.
    func testEveryAggregatorOnACenterKeepsTheWholeEvent() {
        for (firstDelivery, secondDelivery) in [
            (EventAggregator.Delivery.asynchronous, EventAggregator.Delivery.asynchronous),
            (.synchronous, .asynchronous), (.asynchronous, .synchronous),
        ] {
            let center = NotificationCenter()
            let (first, firstTracker) = aggregator(on: center, delivery: firstDelivery)
            let (second, secondTracker) = aggregator(on: center, delivery: secondDelivery)
            // A plain observer's reading, as any module would read the userInfo.
            let plainObserverNs = LockedValue<[Int?]>([])
            let plain = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { notification in
                let n = (notification.userInfo?["args"] as? [String: Any])?["n"] as? Int
                plainObserverNs.withLock { $0.append(n) }
            }
            for index in 0..<3 {
                MeasurementEvent.post(
                    "x/posted", type: .click, category: "c", args: ["n": index, "label": "item \(index)"], to: center)
            }
            first.waitUntilDelivered()
            second.waitUntilDelivered()
            center.removeObserver(plain)
            let expected: [EventArgs] = (0..<3).map { ["n": .int($0), "label": .string("item \($0)")] }
            for tracker in [firstTracker, secondTracker] {
                XCTAssertEqual(tracker.events.map(\.args), expected, "\(firstDelivery), \(secondDelivery)")
                XCTAssertEqual(tracker.events.map(\.type), [.click, .click, .click])
                XCTAssertEqual(tracker.events.map(\.category), ["c", "c", "c"])
            }
            XCTAssertEqual(plainObserverNs.withLock { $0 }, [0, 1, 2])
            XCTAssertEqual(first.diagnostics.malformed, 0)
            XCTAssertEqual(second.diagnostics.malformed, 0)
        }
    }

    /// An aggregator that filters a post out leaves the record published: the next one keeps it.
    func testAnAggregatorThatFiltersAPostOutLeavesItToTheNext() {
        let center = NotificationCenter()
        let (first, firstTracker) = aggregator(
            on: center, delivery: .asynchronous, filter: EventFilter(allow: ["other/*"]))
        let (second, secondTracker) = aggregator(on: center, delivery: .asynchronous)
        MeasurementEvent.post("x/posted", args: ["n": 7], to: center)
        first.waitUntilDelivered()
        second.waitUntilDelivered()
        XCTAssertEqual(firstTracker.events.count, 0)
        XCTAssertEqual(secondTracker.events.map(\.args), [["n": .int(7)]])
    }
}
