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
