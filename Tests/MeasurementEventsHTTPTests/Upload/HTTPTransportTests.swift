import Foundation
import LoopbackCollector
import XCTest

@testable import MeasurementEventsHTTP

/// Which transport a tracker given none sends through: the package's own HTTP/1.1 client for
/// plain http on Linux, `URLSession` for the rest.
final class HTTPTransportTests: LoopbackTestCase {
    func testPlainHTTPGoesThroughTheOwnClientOnLinuxOnly() {
        #if canImport(Darwin)
            XCTAssertFalse(DefaultTransport.routesPlainHTTPToOwnClient, "Apple platforms keep URLSession")
        #else
            XCTAssertTrue(DefaultTransport.routesPlainHTTPToOwnClient, "FoundationNetworking only where TLS needs it")
        #endif
    }

    func testHTTPSGoesThroughURLSessionAndHTTPThroughTheOwnClient() {
        let transport = DefaultTransport(requestTimeout: 5, routesPlainHTTP: true)
        XCTAssertTrue(transport.route(URL(string: "http://127.0.0.1:4318/v1/logs")!) is HTTP1Transport)
        XCTAssertTrue(transport.route(URL(string: "HTTP://localhost/v1/logs")!) is HTTP1Transport)
        XCTAssertTrue(transport.route(URL(string: "https://api.segment.io/v1/batch")!) is URLSessionTransport)
    }

    func testWithoutRoutingEverythingGoesThroughURLSession() {
        let transport = DefaultTransport(requestTimeout: 5, routesPlainHTTP: false)
        XCTAssertTrue(transport.route(URL(string: "http://127.0.0.1:4318/v1/logs")!) is URLSessionTransport)
    }

    func testATrackerGivenNoTransportDeliversToPlainHTTP() throws {
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "k", baseURL: collector.baseURL), directory: directory,
            configuration: testConfiguration(flushAt: 1_000))
        for event in numbered(10) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(tracker.diagnostics.delivered, 10)
        XCTAssertEqual(segmentCalls(collector.requests).count, 10)
    }
}
