import EncoderTestSupport
import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsGA4
import MeasurementEventsOTLP
import XCTest

@testable import MeasurementEventsHTTP

/// Request bodies in gzip for the vendors that take them (Segment, OTLP), checked by a real
/// server on loopback that decompresses them.
final class CompressedBodiesTests: LoopbackTestCase {
    private func deliver(_ encoder: any BatchEncoder, compressing: Bool = true) throws -> [LoopbackCollector.Request] {
        var configuration = testConfiguration()
        configuration.compressesBodies = compressing
        let tracker = try HTTPTracker(encoder: encoder, directory: directory, configuration: configuration)
        for event in numbered(20) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.delivered, 20)
        return collector.requests
    }

    func testSegmentBodiesGoInGzipAndDecompressToTheBatch() throws {
        let requests = try deliver(SegmentEncoder(writeKey: "key", baseURL: collector.baseURL))
        XCTAssertEqual(requests.map(\.isGzip), [true])
        XCTAssertEqual(Array(requests[0].wireBody.prefix(2)), [0x1f, 0x8b], "a gzip stream")
        XCTAssertLessThan(requests[0].wireBody.count, requests[0].body.count / 4)
        XCTAssertEqual(receivedIndices(requests), Array(0..<20))
    }

    func testOTLPBodiesGoInGzip() throws {
        let requests = try deliver(OTLPLogsEncoder(baseURL: collector.baseURL))
        XCTAssertEqual(requests.map(\.isGzip), [true])
        XCTAssertEqual(otlpIndices(requests[0]), Array(0..<20))
    }

    func testCompressionCanBeTurnedOff() throws {
        let requests = try deliver(SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), compressing: false)
        XCTAssertEqual(requests.map(\.isGzip), [false])
        XCTAssertEqual(requests[0].wireBody, requests[0].body)
        XCTAssertEqual(receivedIndices(requests), Array(0..<20))
    }

    func testAmplitudeAndGA4BodiesAreSentAsTheyAre() throws {
        // Neither documents gzip request bodies (see DeliveringToVendors.md, "Compressed bodies").
        XCTAssertFalse(AmplitudeEncoder(apiKey: "key").acceptsGzipBodies)
        XCTAssertFalse(GA4Encoder(measurementID: "G-1", apiSecret: "s").acceptsGzipBodies)
        let requests = try deliver(AmplitudeEncoder(apiKey: "key", baseURL: collector.baseURL))
        XCTAssertEqual(requests.map(\.isGzip), [false])
    }

    func testGzipRoundTripsAnyBody() throws {
        for body in [[], Array("{}".utf8), (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }] {
            let compressed = try XCTUnwrap(GzipBody.compress(body))
            XCTAssertEqual(LoopbackCollector.gunzip(compressed), body)
        }
        XCTAssertNil(LoopbackCollector.gunzip(Array("not gzip".utf8)))
    }

    func testBytesPerEventBeforeAndAfterCompression() throws {
        let events = (0..<100).map { index -> QueuedEvent in
            var event = MeasurementEvent(
                "feed/item_tapped", type: .click, category: "feed",
                args: ["item_id": .string("item-\(index * 37 % 1000)"), "position": .int(index % 12)],
                label: "Feed Item Tapped", id: UUID(),
                timestamp: Date(timeIntervalSince1970: 1_714_566_600 + Double(index) * 1.37))
            event.attribution = EncoderSamples.attribution
            return QueuedEvent(event: event)
        }
        let encoders: [(String, any BatchEncoder)] = [
            ("Segment", SegmentEncoder(writeKey: "key")),
            ("Amplitude", AmplitudeEncoder(apiKey: "key")),
            ("GA4", GA4Encoder(measurementID: "G-1", apiSecret: "s")),
            ("OTLP", OTLPLogsEncoder(baseURL: URL(string: "https://otel.example.com")!)),
        ]
        var perEvent: [String: (plain: Int, gzip: Int)] = [:]
        for (name, encoder) in encoders {
            let body = try XCTUnwrap(encoder.encode(events, context: EncoderTestContext.value).request?.body)
            let compressed = try XCTUnwrap(GzipBody.compress(body))
            perEvent[name] = (body.count / events.count, compressed.count / events.count)
            print("\(name): \(body.count / events.count) bytes per event, \(compressed.count / events.count) in gzip")
        }
        let segment = try XCTUnwrap(perEvent["Segment"])
        XCTAssertLessThanOrEqual(segment.gzip * 8, segment.plain, "Segment: at most an eighth on the wire")
    }

    /// The server configuration's level 1 (`gzipLevel`) and any level out of range give whole
    /// gzip streams of the same body.
    func testEveryLevelGivesTheSameBodyBack() throws {
        XCTAssertEqual(HTTPTracker.Configuration.server.gzipLevel, 1)
        XCTAssertEqual(HTTPTracker.Configuration().gzipLevel, 6)
        let body = try XCTUnwrap(
            OTLPLogsEncoder(baseURL: URL(string: "https://otel.example.com")!)
                .encode(Array(repeating: EncoderSamples.track, count: 200), context: EncoderTestContext.value).request?
                .body)
        for level in [1, 6, 9, 0, 42] {
            let compressed = try XCTUnwrap(GzipBody.compress(body, level: level), "level \(level)")
            XCTAssertEqual(GzipBody.decompress(compressed, limit: body.count), body, "level \(level)")
        }
    }
}
