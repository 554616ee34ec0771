import Foundation
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEvents
@testable import MeasurementEventsAggregator

/// What the posting buffers keep after a burst.
final class PostingBufferMemoryTests: XCTestCase {
    /// A burst's posts are released and its arrays' capacity let go: a buffer keeps no more
    /// than a busy round needs once the thread is back to a few posts.
    func testABurstsCapacityIsLetGo() {
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration.testing
        configuration.deliveryCoalescing = 10  // only the waits drain
        configuration.maximumInFlightEvents = 100_000
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        for index in 0..<20_000 { MeasurementEvent.post("x/burst", args: ["n": index], to: center) }
        aggregator.waitUntilDelivered()  // gives the 20,000 posts back to this thread
        for _ in 0..<400 { MeasurementEvent.post("x/after", to: center) }  // releases them, 64 a post
        aggregator.waitUntilDelivered()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.count, 20_400)
        XCTAssertLessThanOrEqual(heldCapacity(of: aggregator.inbox), 2 * PostingBuffer.largestKeptCapacity)
    }

    /// The capacity of the record arrays every buffer of `inbox` holds.
    private func heldCapacity(of inbox: Inbox) -> Int {
        inbox.buffers.buffers.withLock { $0 }.reduce(0) { total, buffer in
            total + buffer.guarded.withLock { $0.contents.records.capacity + $0.delivered.capacity }
        }
    }
}
