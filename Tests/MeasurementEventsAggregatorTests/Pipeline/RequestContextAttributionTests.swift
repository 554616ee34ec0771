import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// The attribution step and a request context: events posted inside one carry its user, session
/// and attributes, with the aggregator's device; the aggregator's own identity is left alone.
final class RequestContextAttributionTests: XCTestCase {
    private func makeAggregator(
        delivery: EventAggregator.Delivery = .asynchronous, coalescing: TimeInterval = 0,
        problems: LockedValue<[EventAggregator.Problem]>? = nil
    ) -> (EventAggregator, RecordingTracker, NotificationCenter) {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        var configuration = EventAggregator.Configuration.testing
        configuration.delivery = delivery
        configuration.deliveryCoalescing = coalescing
        if let problems { configuration.problemHandler = { problem in problems.withLock { $0.append(problem) } } }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        return (aggregator, tracker, center)
    }

    func testEventsInsideCarryTheContextsUserAndOutsideTheAggregators() {
        for delivery in [EventAggregator.Delivery.asynchronous, .synchronous] {
            let (aggregator, tracker, center) = makeAggregator(delivery: delivery)
            MeasurementIdentity.identify(userID: "app-user", to: center)
            let context = MeasurementRequestContext(userID: "request-user", anonymousID: "anon-r", sessionID: 42)
            MeasurementEvent.post("checkout/before", to: center)
            context.run { MeasurementEvent.post("checkout/inside", to: center) }
            MeasurementEvent.post("checkout/after", to: center)
            aggregator.waitUntilDelivered()

            XCTAssertEqual(tracker.names, ["checkout/before", "checkout/inside", "checkout/after"], "\(delivery)")
            XCTAssertEqual(tracker.events.map(\.userID), ["app-user", "request-user", "app-user"], "\(delivery)")
            XCTAssertEqual(tracker.events[1].anonymousID, "anon-r")
            XCTAssertEqual(tracker.events[1].sessionID, 42)
            XCTAssertEqual(
                tracker.events[1].context, aggregator.currentAttribution.context, "the device is the aggregator's")
            XCTAssertEqual(aggregator.currentAttribution.identity.userID, "app-user")
        }
    }

    /// A server's requests post in turn: each request's events share one stamped attribution
    /// (made once, not once a turn), right for each, also with more requests than are remembered.
    func testRequestsPostingInTurnEachShareOneAttribution() {
        let (aggregator, tracker, center) = makeAggregator(delivery: .synchronous)
        let count = 20  // more than the step remembers (16)
        let contexts = (0..<count).map { MeasurementRequestContext(userID: "user-\($0)") }
        for _ in 0..<2 {
            for index in [0, 1, 0, 1, 2, 0] { contexts[index].run { MeasurementEvent.post("api/a", to: center) } }
        }
        for context in contexts { context.run { MeasurementEvent.post("api/b", to: center) } }
        aggregator.waitUntilDelivered()

        let events = tracker.events
        XCTAssertEqual(
            events.map(\.userID), ([0, 1, 0, 1, 2, 0] + [0, 1, 0, 1, 2, 0] + Array(0..<count)).map { "user-\($0)" })
        let firstRound = events.prefix(6)
        XCTAssertTrue(firstRound[0].attributionStorage === firstRound[2].attributionStorage)
        XCTAssertTrue(firstRound[0].attributionStorage === firstRound[5].attributionStorage)
        XCTAssertTrue(firstRound[1].attributionStorage === firstRound[3].attributionStorage)
        XCTAssertFalse(firstRound[0].attributionStorage === firstRound[1].attributionStorage)
        XCTAssertTrue(firstRound[0].attributionStorage === events[6].attributionStorage)
        XCTAssertEqual(Set(events.map { $0.context }), [aggregator.currentAttribution.context])
    }

    func testIdentifyInsideChangesTheContextsEventsAndNotTheAggregators() {
        let (aggregator, tracker, center) = makeAggregator()
        MeasurementIdentity.identify(userID: "app-user", to: center)
        MeasurementRequestContext(userID: "guest-1").run {
            MeasurementEvent.post("account/before_sign_in", to: center)
            MeasurementIdentity.identify(userID: "user-7", traits: ["plan": "pro"], to: center)
            MeasurementEvent.post("account/signed_in", to: center)
        }
        MeasurementEvent.post("app/outside", to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(tracker.events.map(\.userID), ["guest-1", "user-7", "app-user"])
        XCTAssertEqual(tracker.events[1].identity?.traits, ["plan": "pro"])
        XCTAssertEqual(aggregator.currentAttribution.identity.userID, "app-user")
        XCTAssertEqual(tracker.identityEvents.map(\.attribution.identity.userID), ["app-user"])
        XCTAssertEqual(aggregator.diagnostics.identityChanges, 1)
    }

    /// The identity is read when the event is posted, on the posting thread, not when delivery
    /// (later, on the aggregator's queue) runs.
    func testTheContextIsReadWhenTheEventIsPosted() {
        // A long coalescing delay: nothing is delivered before `waitUntilDelivered`.
        let (aggregator, tracker, center) = makeAggregator(coalescing: 60)
        let context = MeasurementRequestContext(userID: "user-1")
        context.run {
            MeasurementEvent.post("account/first", to: center)
            MeasurementIdentity.identify(userID: "user-2", to: center)
            MeasurementEvent.post("account/second", to: center)
        }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map(\.userID), ["user-1", "user-2"])
    }

    func testARawNotificationPostedInsideCarriesTheContext() {
        let (aggregator, tracker, center) = makeAggregator()
        MeasurementRequestContext(userID: "user-1").run {
            center.post(
                name: .measurementEvent, object: nil,
                userInfo: ["name": "legacy/raw_post", "args": ["id": "1"] as [String: Any]])
            center.post(name: .measurementIdentity, object: nil, userInfo: ["change": "identify", "user_id": "user-2"])
            center.post(name: .measurementEvent, object: nil, userInfo: ["name": "legacy/raw_post"])
        }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map(\.userID), ["user-1", "user-2"])
        XCTAssertNotEqual(aggregator.currentAttribution.identity.userID, "user-2")
    }

    func testAttributesJoinTheArgsAndTheEventsOwnArgsWin() {
        let (aggregator, tracker, center) = makeAggregator()
        MeasurementRequestContext(userID: "user-1", attributes: ["tenant": "acme", "request_id": "r-1", "step": 0])
            .run { MeasurementEvent.post("checkout/step", args: ["step": 2], to: center) }
        MeasurementEvent.post("checkout/step", args: ["step": 3], to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map(\.args), [["tenant": "acme", "request_id": "r-1", "step": 2], ["step": 3]])
    }

    func testAContextOverItsLimitsIsReportedOnceAndCounted() {
        let problems = LockedValue<[EventAggregator.Problem]>([])
        let (aggregator, tracker, center) = makeAggregator(problems: problems)
        let attributes = Dictionary(
            uniqueKeysWithValues: (0..<10_000).map { ("attr_\($0)", $0 as any EventValueConvertible) })
        MeasurementRequestContext(userID: "user-1", attributes: attributes).run {
            for _ in 0..<3 { MeasurementEvent.post("checkout/step", to: center) }
        }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.count, 3)
        XCTAssertEqual(tracker.events.first?.args.count, MeasurementRequestContext.maximumAttributes)
        let reported = problems.withLock { $0 }.compactMap { problem -> String? in
            guard case .requestContextTrimmed = problem else { return nil }
            return problem.description
        }
        XCTAssertEqual(reported.count, 1, "\(reported)")
        XCTAssertTrue(reported.first?.contains("10000 attributes, expected at most 100") == true, "\(reported)")
        XCTAssertEqual(aggregator.diagnostics.requestContextsTrimmed, 1)
    }
}
