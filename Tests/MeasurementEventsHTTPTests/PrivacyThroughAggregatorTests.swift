import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

/// Consent and personal data, end to end: notification → aggregator → HTTP tracker → server.
final class PrivacyThroughAggregatorTests: LoopbackTestCase {
    private func makeTracker(flushAt: Int = 20, directory: URL? = nil) throws -> HTTPTracker {
        try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL),
            directory: directory ?? self.directory,
            configuration: testConfiguration(flushAt: flushAt))
    }

    private func aggregator(
        _ tracker: HTTPTracker, consent: Consent, processors: [any EventProcessor] = []
    ) -> (EventAggregator, NotificationCenter) {
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration.testing
        configuration.consent = consent
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["*"]), trackers: [tracker], processors: processors,
            configuration: configuration)
        aggregator.start()
        return (aggregator, center)
    }

    func testWithoutConsentServerReceivesNothingAndQueueStaysEmpty() throws {
        for consent in [Consent.pendingDiscarding, .denied] {
            // One directory per tracker: each tracker holds its directory while it lives.
            let trackerDirectory = directory.appendingPathComponent("\(consent)")
            let tracker = try makeTracker(flushAt: 1, directory: trackerDirectory)
            let (aggregator, center) = aggregator(tracker, consent: consent)
            for index in 0..<50 { MeasurementEvent.post("feed/item_tapped", args: ["index": index], to: center) }
            aggregator.flush()
            XCTAssertTrue(tracker.waitUntilDelivered(timeout: 10))
            XCTAssertEqual(queueFiles(trackerDirectory), [], "\(consent)")
            XCTAssertEqual(tracker.diagnostics.accepted, 0)
            XCTAssertEqual(aggregator.diagnostics.discarded, 50)
        }
        XCTAssertFalse(collector.waitForRequests(1, timeout: 0.3))
    }

    func testRevokingConsentDeletesWhatIsQueued() throws {
        let tracker = try makeTracker(flushAt: 1_000)
        let (aggregator, center) = aggregator(tracker, consent: .granted)
        for index in 0..<30 { MeasurementEvent.post("feed/item_tapped", args: ["index": index], to: center) }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.diagnostics.queued, 30)
        XCTAssertFalse(queueFiles(directory).isEmpty)
        aggregator.setConsent(.denied)
        XCTAssertEqual(queueFiles(directory), [])
        XCTAssertEqual(tracker.diagnostics.discarded, 30)
        MeasurementEvent.post("feed/after_revoke", to: center)
        aggregator.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 10))
        XCTAssertFalse(collector.waitForRequests(1, timeout: 0.3))
        XCTAssertEqual(queueFiles(directory), [])
    }

    /// Consent flips 1,000 times while a thread posts and the tracker uploads: the server
    /// receives no request between the return of `setConsent(.denied)` and the next grant.
    /// The poster posts thirty events as each flip starts, racing it: a bounded amount of work
    /// (a thread posting without pause posted more the longer the flips took, and the test ran
    /// from 24 to 172 seconds). With the uploader not waiting for the request on the wire when
    /// consent closes, it failed in three runs of four.
    func testNoByteLeavesAfterADenialReturnsWhileConsentFlips() throws {
        let tracker = try makeTracker(flushAt: 1)
        let (aggregator, center) = aggregator(tracker, consent: .granted)
        // True from the return of a denial until just before the next grant.
        let denied = LockedValue(false)
        let leaked = LockedValue(0)
        collector.respond { _ in
            if denied.withLock({ $0 }) { leaked.withLock { $0 += 1 } }
            return .ok
        }
        let stop = LockedValue(false)
        let flipStarted = DispatchSemaphore(value: 0)
        let posted = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var index = 0
            while true {
                flipStarted.wait()
                if stop.withLock({ $0 }) { break }
                for _ in 0..<30 {
                    MeasurementEvent.post("feed/item_tapped", args: ["index": index], to: center)
                    index += 1
                }
            }
            posted.signal()
        }
        for flip in 0..<1_000 {
            flipStarted.signal()
            if flip.isMultiple(of: 2) {
                aggregator.setConsent(.denied)
                denied.withLock { $0 = true }
            } else {
                denied.withLock { $0 = false }
                aggregator.setConsent(.granted)
                aggregator.flush()
            }
        }
        stop.withLock { $0 = true }
        flipStarted.signal()
        posted.wait()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(leaked.withLock { $0 }, 0)
        XCTAssertFalse(collector.requests.isEmpty, "uploads ran between the denials")
    }

    func testPersonalArgNeverReachesTheServerInPlainText() throws {
        let tracker = try makeTracker()
        let privacy = PersonalDataProcessor(
            personalArgs: ["email"], personalArgsByEvent: ["checkout/paid": ["card_holder"]],
            treatment: .hash(salt: "app-salt"))
        let (aggregator, center) = aggregator(tracker, consent: .granted, processors: [privacy])
        MeasurementEvent.post("account/signed_up", args: ["email": "jane@example.com", "plan": "pro"], to: center)
        MeasurementEvent.post("checkout/paid", args: ["card_holder": "Jane Q Public", "amount": 12.5], to: center)
        aggregator.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 10))
        let bodies = collector.requests.map(\.bodyText).joined()
        XCTAssertFalse(bodies.isEmpty)
        XCTAssertFalse(bodies.contains("jane@example.com"))
        XCTAssertFalse(bodies.contains("Jane Q Public"))
        XCTAssertTrue(bodies.contains(PersonalDataProcessor.hashed("jane@example.com", salt: "app-salt")))
        // Nor on disk, on the way.
        for name in queueFiles(directory) {
            let data = try Data(contentsOf: directory.appendingPathComponent("queue/\(name)"))
            XCTAssertNil(String(decoding: data, as: UTF8.self).range(of: "jane@example.com"))
        }
    }

    func testGlobalContextIsSentButNeverOverridesEventArgs() throws {
        let tracker = try makeTracker()
        let context = GlobalContextProcessor(["app_version": "4.2.0", "screen": "context"])
        let (aggregator, center) = aggregator(tracker, consent: .granted, processors: [context])
        MeasurementEvent.post("feed/opened", args: ["screen": "feed"], to: center)
        aggregator.flush()
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 10))
        let properties = segmentCalls(collector.requests).first?["properties"] as? [String: Any]
        XCTAssertEqual(properties?["app_version"] as? String, "4.2.0")
        XCTAssertEqual(properties?["screen"] as? String, "feed")
    }
}
