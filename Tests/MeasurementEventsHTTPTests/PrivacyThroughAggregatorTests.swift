import Foundation
import LoopbackCollector
import MeasurementEvents
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
        _ tracker: HTTPTracker, consent: EventAggregator.Consent, processors: [any EventProcessor] = []
    ) -> (EventAggregator, NotificationCenter) {
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration()
        configuration.consent = consent
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["*"]), trackers: [tracker], processors: processors,
            configuration: configuration)
        aggregator.start()
        return (aggregator, center)
    }

    func testWithoutConsentServerReceivesNothingAndQueueStaysEmpty() throws {
        for consent in [EventAggregator.Consent.pendingDiscarding, .denied] {
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
