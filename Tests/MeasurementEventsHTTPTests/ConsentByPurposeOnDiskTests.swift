import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsGA4
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEventsHTTP

/// A purpose denied deletes the on-disk queue of each destination that needs it, before the call
/// returns, and nothing of the others.
final class ConsentByPurposeOnDiskTests: LoopbackTestCase {
    func testDenyingAdvertisingDeletesGA4sQueueAndKeepsAmplitudes() throws {
        var configuration = testConfiguration()
        configuration.flushPolicies = [ManualFlushPolicy()]  // nothing leaves unasked: the queues stay
        let amplitudeDirectory = directory.appendingPathComponent("amplitude")
        let ga4Directory = directory.appendingPathComponent("ga4")
        let amplitude = try HTTPTracker(
            encoder: AmplitudeEncoder(apiKey: "key", baseURL: collector.baseURL), directory: amplitudeDirectory,
            configuration: configuration)
        let ga4 = try HTTPTracker(
            encoder: GA4Encoder(measurementID: "G-1", apiSecret: "s", baseURL: collector.baseURL, validation: .off),
            directory: ga4Directory, configuration: configuration)
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll,
            destinations: [
                Destination(amplitude, name: "amplitude", purposes: [.analytics]),
                Destination(ga4, name: "ga4", purposes: [.analytics, .advertising]),
            ], configuration: .testing)
        aggregator.start()
        aggregator.setConsents([.analytics: .granted, .advertising: .granted])
        for index in 0..<30 { MeasurementEvent.post("shop/viewed", args: ["index": index], to: center) }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(ga4.diagnostics.queued, 30)
        XCTAssertEqual(amplitude.diagnostics.queued, 30)
        let ga4Before = queueFiles(ga4Directory)
        XCTAssertFalse(ga4Before.isEmpty)

        aggregator.setConsent(.denied, for: [.advertising])
        XCTAssertEqual(ga4.diagnostics.queued, 0, "deleted before setConsent returned")
        XCTAssertEqual(queueFiles(ga4Directory), [], "on disk too")
        XCTAssertEqual(amplitude.diagnostics.queued, 30, "analytics' destination keeps its queue")
        XCTAssertFalse(queueFiles(amplitudeDirectory).isEmpty)
        XCTAssertEqual(collector.requests.count, 0, "nothing was sent meanwhile")
        print(
            "GA4's queue before the denial: \(ga4Before); after: \(queueFiles(ga4Directory)); "
                + "Amplitude's after: \(queueFiles(amplitudeDirectory))")
    }
}
