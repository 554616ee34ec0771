import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsOTLP
import XCTest

@testable import MeasurementEventsHTTP

/// `maximumRequestsInFlight` 2 (the server configuration's): the next request goes while the
/// collector reads the one before; replies are handled in order; every event is delivered, and
/// counted delivered, once. Against the loopback collector, whose threads answer each
/// connection: a reply held until another request arrives shows two on the wire without timing.
final class RequestsInFlightTests: LoopbackTestCase {
    /// Records of 100 a request, in batches of 100: 1,000 events make 10 requests.
    private func tracker(inFlight: Int) throws -> HTTPTracker {
        var configuration = testConfiguration(flushAt: 1_000)
        configuration.maximumRequestsInFlight = inFlight
        return try HTTPTracker(
            encoder: OTLPLogsEncoder(
                baseURL: collector.baseURL, limits: BatchLimits(maximumEvents: 100, maximumBytes: 1_000_000)),
            directory: directory, configuration: configuration)
    }

    /// The `index` args of a request's records, in order.
    private func indices(_ request: LoopbackCollector.Request) -> [Int] {
        guard let root = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return []
        }
        let records = (root["resourceLogs"] as? [[String: Any]] ?? [])
            .flatMap { $0["scopeLogs"] as? [[String: Any]] ?? [] }
            .flatMap { $0["logRecords"] as? [[String: Any]] ?? [] }
        return records.compactMap { OTLPServer.attribute("index", of: $0).flatMap { Int($0) } }
    }

    /// Holds the reply to the `held`th request to arrive until the next one arrives (at most
    /// `seconds`); says whether it did, and which request it held (two requests on the wire
    /// arrive in either order).
    private final class Overlap: @unchecked Sendable {
        // @unchecked: `arrived` and `request` are behind `lock`.
        private let lock = NSLock()
        private var arrived: Bool?
        private var request: LoopbackCollector.Request?
        var sawTwoOnTheWire: Bool? { lock.lock(); defer { lock.unlock() }; return arrived }
        var heldRequest: LoopbackCollector.Request? { lock.lock(); defer { lock.unlock() }; return request }

        func respond(
            _ collector: LoopbackCollector, held: Int, reply: LoopbackCollector.Reply, seconds: TimeInterval = 30
        ) {
            collector.respond { [weak collector] request in
                guard let collector, collector.requestsReceived == held else { return nil }
                let came = collector.waitForRequests(held + 1, timeout: seconds)
                self.lock.lock()
                self.arrived = came
                self.request = request
                self.lock.unlock()
                return reply
            }
        }
    }

    func testTheNextRequestGoesWhileTheCollectorReadsTheOneBefore() throws {
        let overlap = Overlap()
        // The first request goes alone (nothing is prepared before a reply); from the second on,
        // the next one goes at once.
        overlap.respond(collector, held: 2, reply: .ok)
        let tracker = try tracker(inFlight: 2)
        for event in numbered(1_000) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 60))
        XCTAssertEqual(overlap.sawTwoOnTheWire, true, "the third request came while the second waited for its reply")
        XCTAssertEqual(tracker.diagnostics.delivered, 1_000)
        XCTAssertEqual(collector.requests.flatMap(indices).sorted(), Array(0..<1_000), "each event once")
        XCTAssertEqual(tracker.diagnostics.requests, 10)
    }

    /// An app's tracker: no third request while the second waits (2 seconds, in which one sent
    /// at once would have come).
    func testOneAtATimeByDefault() throws {
        let overlap = Overlap()
        overlap.respond(collector, held: 2, reply: .ok, seconds: 2)
        var configuration = testConfiguration(flushAt: 1_000)
        configuration.requestTimeout = 60
        XCTAssertEqual(configuration.maximumRequestsInFlight, 1)
        XCTAssertEqual(HTTPTracker.Configuration.server.maximumRequestsInFlight, 2)
        let tracker = try HTTPTracker(
            encoder: OTLPLogsEncoder(
                baseURL: collector.baseURL, limits: BatchLimits(maximumEvents: 100, maximumBytes: 1_000_000)),
            directory: directory, configuration: configuration)
        for event in numbered(300) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 90))
        XCTAssertEqual(overlap.sawTwoOnTheWire, false, "no third request while the second waited")
        XCTAssertEqual(tracker.diagnostics.delivered, 300)
    }

    /// A request is answered 503 while the one sent after it is on the wire (and accepted): that
    /// one's reply is ignored (its events no longer follow what was handled), the refused one is
    /// sent again, then the next one's events again; each counted delivered once. Which of the two
    /// requests on the wire arrives second, and so gets the 503, is up to the threads: the test
    /// reads it from the collector.
    func testARetriedRequestSendsTheEventsOfTheRequestsAfterItAgain() throws {
        let overlap = Overlap()
        overlap.respond(collector, held: 2, reply: .status(503))
        let tracker = try tracker(inFlight: 2)
        for event in numbered(1_000) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 60))
        XCTAssertEqual(overlap.sawTwoOnTheWire, true)
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.delivered, 1_000, "delivered counts each event once")
        XCTAssertEqual(diagnostics.retries, 1)
        let received = collector.requests.flatMap(indices)
        XCTAssertEqual(Set(received), Set(0..<1_000), "nothing lost")
        let refused = indices(try XCTUnwrap(overlap.heldRequest))
        XCTAssertEqual(refused.count, 100)
        let refusedBlock = try XCTUnwrap(refused.min())..<(try XCTUnwrap(refused.max()) + 1)
        let nextBlock = refusedBlock.upperBound..<(refusedBlock.upperBound + 100)
        let sentTwice = Set(received.filter { index in received.filter { $0 == index }.count == 2 })
        XCTAssertEqual(
            sentTwice, Set(refusedBlock).union(nextBlock), "the refused request's events and the next one's, again")
        XCTAssertEqual(
            received.count, 1_000 + 100 + 100, "the refused request and the ignored next one, again; nothing after them"
        )
    }
}
