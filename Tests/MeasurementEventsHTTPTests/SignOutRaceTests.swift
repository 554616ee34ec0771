import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// Issue 15, "Sign-out race": `post(signed_out)` immediately followed by `reset`, delivered
/// asynchronously through an aggregator and an HTTP tracker to a collector on loopback.
final class SignOutRaceTests: LoopbackTestCase {
    private static let rounds = 1_000

    private func makePipeline(center: NotificationCenter) throws -> (EventAggregator, HTTPTracker) {
        var configuration = testConfiguration(flushAt: 100)
        configuration.maximumQueuedEvents = 10_000
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), directory: directory,
            configuration: configuration)
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["account/*", "app/*"]), trackers: [tracker],
            configuration: .testing)
        aggregator.start()
        return (aggregator, tracker)
    }

    /// One round of the race, as an app signs a user in and out.
    private static func round(_ user: String, center: NotificationCenter) {
        MeasurementIdentity.identify(userID: user, to: center)
        MeasurementEvent.post("account/signed_out", args: ["user": user], to: center)
        MeasurementIdentity.reset(to: center)
        MeasurementEvent.post("app/after", args: ["user": user], to: center)
    }

    private func deliveredTrackCalls(_ aggregator: EventAggregator, _ tracker: HTTPTracker) -> [[String: Any]] {
        aggregator.waitUntilDelivered()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 120))
        return segmentCalls(collector.requests).filter { $0["type"] as? String == "track" }
    }

    func testOnOneThreadEverySignOutCarriesItsUserAndEveryEventAfterItAFreshAnonymousID() throws {
        let center = NotificationCenter()
        let (aggregator, tracker) = try makePipeline(center: center)
        for index in 0..<Self.rounds { Self.round("user-\(index)", center: center) }
        let calls = deliveredTrackCalls(aggregator, tracker)
        let signOuts = calls.filter { $0["event"] as? String == "account/signed_out" }
        let afters = calls.filter { $0["event"] as? String == "app/after" }
        XCTAssertEqual(signOuts.count, Self.rounds)
        XCTAssertEqual(afters.count, Self.rounds)
        let carryingTheirUser = signOuts.filter {
            $0["userId"] as? String == ($0["properties"] as? [String: Any])?["user"] as? String
        }
        XCTAssertEqual(carryingTheirUser.count, Self.rounds, "sign-out events carrying the user id that was set")
        XCTAssertEqual(afters.filter { $0["userId"] == nil }.count, Self.rounds, "events after reset without a user id")
        let afterIDs = afters.compactMap { $0["anonymousId"] as? String }
        var earlier: Set<String> = []
        var fresh = 0
        for (signOut, after) in zip(signOuts, afters) {
            let id = after["anonymousId"] as? String ?? ""
            earlier.insert(signOut["anonymousId"] as? String ?? "")
            if !earlier.contains(id) { fresh += 1 }
            earlier.insert(id)
        }
        XCTAssertEqual(fresh, Self.rounds, "events after reset with an anonymous id never seen before")
        XCTAssertEqual(Set(afterIDs).count, Self.rounds)
    }

    /// Four threads, each with its own users, on one center and one aggregator. Identity is
    /// one state for the app, so the threads' rounds interleave: what must hold is that every
    /// event carries the identity in force at its place in the posting order. Replaying the
    /// calls in the order the collector received them (identify calls set the user; a new
    /// anonymous id means a reset) checks exactly that.
    func testOnFourThreadsEveryEventCarriesTheIdentityInForceWhenItWasPosted() throws {
        let center = NotificationCenter()
        let (aggregator, tracker) = try makePipeline(center: center)
        let threads = 4
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<(SignOutRaceTests.rounds / threads) {
                SignOutRaceTests.round("user-\(thread)-\(index)", center: center)
            }
        }
        aggregator.waitUntilDelivered()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 120))
        let calls = segmentCalls(collector.requests)
        var anonymousID: String?
        var userID: String?
        var seenAnonymousIDs: Set<String> = []
        var consistent = 0
        var signOutsWithOwnUser = 0
        var aftersWithoutUser = 0
        for call in calls {
            let id = call["anonymousId"] as? String ?? ""
            if id != anonymousID {
                XCTAssertFalse(seenAnonymousIDs.contains(id), "an anonymous id came back after a reset")
                if anonymousID != nil { userID = nil }  // a reset: no user until the next identify
                anonymousID = id
                seenAnonymousIDs.insert(id)
            }
            if call["type"] as? String == "identify" {
                userID = call["userId"] as? String
                continue
            }
            if call["userId"] as? String == userID { consistent += 1 }
            let postedBy = (call["properties"] as? [String: Any])?["user"] as? String
            switch call["event"] as? String {
            case "account/signed_out": if call["userId"] as? String == postedBy { signOutsWithOwnUser += 1 }
            case "app/after": if call["userId"] == nil { aftersWithoutUser += 1 }
            default: break
            }
        }
        let tracked = calls.filter { $0["type"] as? String == "track" }.count
        XCTAssertEqual(tracked, 2 * Self.rounds)
        XCTAssertEqual(consistent, tracked, "events carrying the identity in force when posted")
        print(
            "sign-out race, \(threads) threads: \(consistent) of \(tracked) events carry the identity in force; "
                + "\(signOutsWithOwnUser) of \(Self.rounds) sign-outs carry their own thread's user; "
                + "\(aftersWithoutUser) of \(Self.rounds) events after a reset carry no user; "
                + "\(seenAnonymousIDs.count) anonymous ids")
    }
}
