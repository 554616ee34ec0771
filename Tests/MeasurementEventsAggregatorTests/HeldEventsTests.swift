import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

final class HeldEventsTests: XCTestCase {
    private func makeAggregator(
        center: NotificationCenter, tracker: RecordingTracker, limit: Int = 1_000,
        holds: Bool = true, consent: Consent = .granted
    ) -> EventAggregator {
        var configuration = EventAggregator.Configuration.testing
        configuration.holdsEventsUntilReady = holds
        configuration.heldEventLimit = limit
        configuration.consent = consent
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        return aggregator
    }

    func testEventsPostedBeforeTrackersAreReadyAreDeliveredInOrderAfterwards() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = makeAggregator(center: center, tracker: tracker)
        for index in 0..<10 { MeasurementEvent.post("app/launch_step", args: ["step": index], to: center) }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.count, 0)
        XCTAssertEqual(aggregator.diagnostics.held, 10)
        aggregator.markReady()
        MeasurementEvent.post("app/ready", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.compactMap { $0.args["step"]?.intValue }, Array(0..<10))
        XCTAssertEqual(tracker.names.last, "app/ready")
        XCTAssertEqual(aggregator.diagnostics.forwarded, 11)
        XCTAssertEqual(aggregator.diagnostics.held, 0)
    }

    func testATrackerAddedBeforeReadyReceivesTheHeldEvents() {
        let center = NotificationCenter()
        let early = RecordingTracker()
        let late = RecordingTracker()
        let aggregator = makeAggregator(center: center, tracker: early)
        MeasurementEvent.post("app/launched", to: center)
        aggregator.waitUntilDelivered()
        aggregator.addTracker(late)
        aggregator.markReady()
        XCTAssertEqual(late.names, ["app/launched"])
    }

    func testBeyondTheBoundTheOldestAreDroppedAndCounted() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = makeAggregator(center: center, tracker: tracker, limit: 5)
        for index in 0..<8 { MeasurementEvent.post("app/launch_step", args: ["step": index], to: center) }
        // Let the queue hold them first: events still queued at markReady() are simply delivered.
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.diagnostics.held, 5)
        aggregator.markReady()
        XCTAssertEqual(tracker.events.compactMap { $0.args["step"]?.intValue }, [3, 4, 5, 6, 7])
        XCTAssertEqual(aggregator.diagnostics.dropped, 3)
    }

    func testTheDefaultBoundIsOneThousand() {
        XCTAssertEqual(EventAggregator.Configuration.testing.heldEventLimit, 1_000)
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = makeAggregator(center: center, tracker: tracker)
        for _ in 0..<1_001 { MeasurementEvent.post("app/tick", to: center) }
        aggregator.waitUntilDelivered()
        aggregator.markReady()
        XCTAssertEqual(tracker.events.count, 1_000)
        XCTAssertEqual(aggregator.diagnostics.dropped, 1)
    }

    func testPendingConsentHoldsUntilGranted() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = makeAggregator(center: center, tracker: tracker, holds: false, consent: .pendingHolding)
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, [])
        aggregator.setConsent(.granted)
        XCTAssertEqual(tracker.names, ["feed/opened"])
    }

    func testPendingConsentCanDiscardInstead() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = makeAggregator(center: center, tracker: tracker, holds: false, consent: .pendingDiscarding)
        MeasurementEvent.post("feed/opened", to: center)
        aggregator.setConsent(.granted)
        MeasurementEvent.post("feed/closed", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["feed/closed"])
        XCTAssertEqual(aggregator.diagnostics.discarded, 1)
    }

    /// An event posted while consent discards is dropped as it is received: granting consent
    /// before the queue reaches it does not send it, and no processor ever sees it.
    func testAnEventPostedWithoutConsentIsNeverProcessedNorSentEvenIfConsentFollows() {
        for delivery in [EventAggregator.Delivery.asynchronous, .synchronous] {
            let center = NotificationCenter()
            let tracker = RecordingTracker()
            let processed = LockedValue<[EventName]>([])
            var configuration = EventAggregator.Configuration.testing
            configuration.delivery = delivery
            configuration.consent = .denied
            let aggregator = EventAggregator(
                center: center, filter: .allowAll, trackers: [tracker],
                processors: [
                    ClosureProcessor { event in
                        processed.withLock { $0.append(event.name) }
                        return event
                    }
                ],
                configuration: configuration)
            aggregator.start()
            MeasurementEvent.post("feed/opened", to: center)
            aggregator.setConsent(.granted)
            MeasurementEvent.post("feed/closed", to: center)
            aggregator.waitUntilDelivered()
            XCTAssertEqual(tracker.names, ["feed/closed"], "\(delivery)")
            XCTAssertEqual(processed.withLock { $0 }, ["feed/closed"], "\(delivery)")
            XCTAssertEqual(aggregator.diagnostics.discarded, 1, "\(delivery)")
            XCTAssertEqual(aggregator.diagnostics.received, 2, "\(delivery)")
        }
    }

    func testDenyingConsentDiscardsHeldEventsAndAsksTrackersToDiscardTheirs() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = makeAggregator(center: center, tracker: tracker, holds: false, consent: .pendingHolding)
        MeasurementEvent.post("feed/opened", to: center)
        MeasurementEvent.post("feed/closed", to: center)
        aggregator.setConsent(.denied)
        MeasurementEvent.post("feed/after_denial", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, [])
        XCTAssertEqual(tracker.discardCount, 1)
        XCTAssertEqual(aggregator.diagnostics.discarded, 3)
        XCTAssertEqual(aggregator.diagnostics.held, 0)
    }
}

final class ReentrantProblemHandlerTests: XCTestCase {
    /// The handler hears about a dropped held event outside the aggregator's lock, so it may
    /// read diagnostics and post (this used to deadlock).
    func testAProblemHandlerMayReadDiagnosticsAndPost() {
        for delivery in [EventAggregator.Delivery.asynchronous, .synchronous] {
            let center = NotificationCenter()
            let tracker = RecordingTracker()
            let seenDropped = LockedValue<[Int]>([])
            let box = LockedValue<EventAggregator?>(nil)
            var configuration = EventAggregator.Configuration.testing
            configuration.delivery = delivery
            configuration.holdsEventsUntilReady = true
            configuration.heldEventLimit = 1
            configuration.problemHandler = { problem in
                guard case .heldEventDropped = problem, let aggregator = box.withLock({ $0 }) else { return }
                let first = seenDropped.withLock { seen in
                    seen.append(aggregator.diagnostics.dropped)
                    return seen.count == 1
                }
                // Once only: while events are held, every post drops one more.
                if first { MeasurementEvent.post("sdk/problem", to: center) }
            }
            let aggregator = EventAggregator(
                center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
            box.withLock { $0 = aggregator }
            aggregator.start()
            MeasurementEvent.post("app/one", to: center)
            MeasurementEvent.post("app/two", to: center)
            aggregator.waitUntilDelivered()
            aggregator.markReady()
            aggregator.waitUntilDelivered()
            XCTAssertEqual(seenDropped.withLock { $0 }.first, 1, "\(delivery)")
            XCTAssertEqual(tracker.names.last, "sdk/problem", "\(delivery)")
            box.withLock { $0 = nil }
        }
    }
}
