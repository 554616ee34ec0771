import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// "Delete my data": one call deletes the queue, the stored identity and the session, and the
/// events after it come from a new anonymous user.
final class ForgetUserTests: LoopbackTestCase {
    func testForgettingTheUserDeletesWhatIsKeptAndRotatesTheAnonymousID() throws {
        var trackerConfiguration = testConfiguration()
        trackerConfiguration.flushPolicies = [ManualFlushPolicy()]
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL),
            directory: directory.appendingPathComponent("segment"), configuration: trackerConfiguration)
        let storeDirectory = directory.appendingPathComponent("identity")
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = FileIdentityStore(directory: storeDirectory)
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        MeasurementIdentity.identify(userID: "user-forget-me", traits: ["email_hash": "abc"], to: center)
        for index in 0..<5 { MeasurementEvent.post("feed/item_tapped", args: ["index": index], to: center) }
        aggregator.waitUntilDelivered()
        let before = aggregator.currentAttribution
        XCTAssertNotNil(before.sessionID)
        try Data("old damaged copy user-forget-me".utf8).write(
            to: storeDirectory.appendingPathComponent("identity.json.corrupt"))

        aggregator.forgetUser()

        XCTAssertEqual(tracker.diagnostics.queued, 0)
        XCTAssertEqual(tracker.diagnostics.discarded, 6, "five events and the identify call")
        let after = aggregator.currentAttribution
        XCTAssertNotEqual(after.identity.anonymousID, before.identity.anonymousID)
        XCTAssertNil(after.identity.userID)
        XCTAssertEqual(after.identity.traits, [:])
        XCTAssertNil(after.sessionID)
        let stored = try String(contentsOf: storeDirectory.appendingPathComponent("identity.json"), encoding: .utf8)
        XCTAssertFalse(stored.contains("user-forget-me"), stored)
        XCTAssertFalse(stored.contains(before.identity.anonymousID))
        XCTAssertTrue(stored.contains(after.identity.anonymousID))
        XCTAssertFalse(FileManager.default.fileExists(atPath: storeDirectory.path + "/identity.json.corrupt"))

        MeasurementEvent.post("feed/item_tapped", args: ["index": 99], to: center)
        aggregator.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let calls = segmentCalls(collector.requests)
        XCTAssertEqual(receivedIndices(collector.requests), [99], "nothing from before was sent")
        XCTAssertEqual(calls.map { $0["anonymousId"] as? String }, [after.identity.anonymousID])
        XCTAssertNil(calls.first?["userId"] ?? nil)
    }
}
