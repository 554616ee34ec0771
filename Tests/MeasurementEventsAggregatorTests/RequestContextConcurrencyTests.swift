import DemoServer
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// Many requests at once, each in its own context, with identity calls inside and outside
/// contexts: no event carries another request's user. In the ThreadSanitizer run (.ci/run).
final class RequestContextConcurrencyTests: XCTestCase {
    func testSixteenTasksWithIdentityCallsInsideAndOutsideContextsKeepEachRequestsUser() async {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        let requestsPerTask = 50

        await withTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    for request in 0..<requestsPerTask {
                        if task % 4 == 3 {
                            // Outside any context: the aggregator's identity, changed and used
                            // while the other tasks handle requests.
                            MeasurementIdentity.identify(userID: "app-\(task)", to: center)
                            MeasurementEvent.post("app/outside", args: ["task": task], to: center)
                            continue
                        }
                        let user = "user-\(task)-\(request)"
                        let context = MeasurementRequestContext(
                            userID: "guest-\(task)-\(request)", attributes: ["request_id": "\(task)-\(request)"])
                        await context.run {
                            MeasurementEvent.post(
                                "request/started", args: ["expected": "guest-\(task)-\(request)"], to: center)
                            await Task.yield()
                            MeasurementIdentity.identify(userID: user, traits: ["task": task], to: center)
                            MeasurementEvent.post("request/identified", args: ["expected": user], to: center)
                            await Task.yield()
                            MeasurementEvent.post("request/finished", args: ["expected": user], to: center)
                        }
                    }
                }
            }
        }
        aggregator.waitUntilDelivered()

        let events = tracker.events
        let inside = events.filter { $0.name.rawValue.hasPrefix("request/") }
        XCTAssertEqual(inside.count, 12 * requestsPerTask * 3)
        let wrong = inside.filter { $0.userID != $0.args["expected"]?.stringValue }
        XCTAssertEqual(wrong.count, 0, "events with another request's user: \(wrong.prefix(3))")
        for event in inside {
            let request = event.args["request_id"]?.stringValue ?? ""
            XCTAssertTrue(event.userID?.hasSuffix("-" + request) == true, "\(event) of request \(request)")
        }
        let outside = events.filter { $0.name == "app/outside" }
        XCTAssertEqual(outside.count, 4 * requestsPerTask)
        XCTAssertTrue(outside.allSatisfy { $0.userID?.hasPrefix("app-") == true }, "outside: the aggregator's user")
        XCTAssertTrue(aggregator.currentAttribution.identity.userID?.hasPrefix("app-") == true)
        XCTAssertEqual(aggregator.diagnostics.identityChanges, 4 * requestsPerTask, "only the calls outside")
    }

    /// `swift run measurement-demo server`'s check, smaller: concurrent requests of a few users,
    /// half of them signing in inside their context.
    func testTheServerDemosRequestsEachCarryTheirOwnUser() async {
        let report = await ServerSimulation(requests: 200, users: 20, eventsPerRequest: 5).run()
        XCTAssertEqual(report.delivered, 1_000)
        XCTAssertEqual(report.wrongUser, 0, "\(report)")
        XCTAssertEqual(report.carriedTheServicesUser, 0, "\(report)")
        XCTAssertEqual(report.incompleteRequests, 0, "\(report)")
        XCTAssertTrue(report.isCorrect, "\(report)")
    }
}
