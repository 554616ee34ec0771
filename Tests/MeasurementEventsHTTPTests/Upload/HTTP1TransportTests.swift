import Foundation
import LoopbackCollector
import MeasurementEvents
import XCTest

@testable import MeasurementEventsHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The package's own HTTP/1.1 client against a real server on loopback: keep-alive, a server
/// closing between requests, chunked and large replies, and the faults a collector can throw at
/// it (silence, a reset mid-reply, garbage, an endless reply), each an error, never a crash.
final class HTTP1TransportTests: LoopbackTestCase {
    private func post(
        _ transport: HTTP1Transport, to url: URL? = nil, body: String = "{}", timeout: TimeInterval = 10,
        headers: [String: String] = ["Content-Type": "application/json"]
    ) -> Result<HTTPResponse, HTTP1Failure> {
        let request = HTTPRequest(
            url: url ?? collector.baseURL.appendingPathComponent("v1/logs"), headers: headers, body: Array(body.utf8))
        return Result { () throws(HTTP1Failure) in try transport.exchange(request, timeout: timeout) }
    }

    private func failure(_ result: Result<HTTPResponse, HTTP1Failure>) -> HTTP1Failure? {
        guard case .failure(let failure) = result else { return nil }
        return failure
    }

    // MARK: Keep-alive

    func testRequestsReuseOneConnection() throws {
        let transport = HTTP1Transport()
        for _ in 0..<5 { XCTAssertEqual(try post(transport).get().status, 200) }
        XCTAssertEqual(collector.requests.count, 5)
        XCTAssertEqual(collector.connectionsAccepted, 1, "one connection for five requests")
    }

    func testAServerClosingAfterEachReplyGetsANewConnectionPerRequest() throws {
        collector.dropConnections(after: 0)
        let transport = HTTP1Transport()
        for _ in 0..<4 { XCTAssertEqual(try post(transport).get().status, 200) }
        XCTAssertEqual(collector.requests.count, 4, "each request sent once")
        XCTAssertEqual(collector.connectionsAccepted, 4)
    }

    func testAReusedConnectionClosedBeforeTheReplyIsReplacedOnceAndTheRequestSentAgain() throws {
        collector.script([.ok, .dropConnection])
        let transport = HTTP1Transport()
        XCTAssertEqual(try post(transport).get().status, 200)
        XCTAssertEqual(try post(transport).get().status, 200, "sent again on a new connection")
        XCTAssertEqual(collector.requests.count, 3)
        XCTAssertEqual(collector.connectionsAccepted, 2)
    }

    func testAReplacedConnectionThatFailsTooIsAnError() throws {
        collector.script([.ok, .dropConnection, .dropConnection, .ok])
        let transport = HTTP1Transport()
        XCTAssertEqual(try post(transport).get().status, 200)
        XCTAssertEqual(
            failure(post(transport)), .closedMidReply(host: "127.0.0.1", port: collector.port, bytesReceived: 0))
        XCTAssertEqual(collector.requests.count, 3, "one request, sent again once")
        XCTAssertEqual(try post(transport).get().status, 200)
    }

    func testAFreshConnectionClosedWithoutAReplyIsAnError() {
        collector.script([.dropConnection])
        XCTAssertEqual(
            failure(post(HTTP1Transport())), .closedMidReply(host: "127.0.0.1", port: collector.port, bytesReceived: 0))
        XCTAssertEqual(collector.requests.count, 1, "not sent again: nothing says the server did not act on it")
    }

    // MARK: Replies

    func testAChunkedReplyIsReadWholeAndKeepsTheConnection() throws {
        let body = String(repeating: "0123456789", count: 1_000)
        collector.script([.chunked(body: body, chunkSize: 7)])
        let transport = HTTP1Transport()
        let response = try post(transport).get()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), body)
        XCTAssertEqual(try post(transport).get().status, 200)
        XCTAssertEqual(collector.connectionsAccepted, 1)
    }

    func testATenMegabyteReplyIsReadWhole() throws {
        let body = String(repeating: "x", count: 10 * 1024 * 1024)
        collector.script([.status(200, body: body)])
        let response = try post(HTTP1Transport()).get()
        XCTAssertEqual(response.body.count, 10 * 1024 * 1024)
    }

    func testAReplyOverTheLimitIsAnErrorBeforeItsBodyIsRead() {
        collector.script([.status(200, body: String(repeating: "x", count: 2_000_000))])
        var limits = HTTP1ResponseParser.Limits()
        limits.body = 1_000_000
        XCTAssertEqual(
            failure(post(HTTP1Transport(limits: limits))),
            .replyTooLarge(host: "127.0.0.1", port: collector.port, part: "body", limit: 1_000_000))
    }

    func testAnEndlessReplyIsAnErrorAtTheLimit() {
        collector.script([.endless])
        var limits = HTTP1ResponseParser.Limits()
        limits.body = 1_000_000
        XCTAssertEqual(
            failure(post(HTTP1Transport(limits: limits))),
            .replyTooLarge(host: "127.0.0.1", port: collector.port, part: "body", limit: 1_000_000))
    }

    func testHeadersComeBackLowercasedWithTheStatus() throws {
        collector.script([.tooManyRequests(retryAfter: 7)])
        let response = try post(HTTP1Transport()).get()
        XCTAssertEqual(response.status, 429)
        XCTAssertEqual(response.headers["retry-after"], "7")
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "slow down")
    }

    // MARK: Faults

    func testASilentServerTimesOut() {
        collector.script([.silent])
        let result = post(HTTP1Transport(), timeout: 0.3)
        XCTAssertEqual(
            failure(result), .timedOut(phase: .waitingForReply, host: "127.0.0.1", port: collector.port, seconds: 0.3))
        XCTAssertEqual(
            failure(result)?.errorDescription,
            "127.0.0.1:\(collector.port): timed out after 0.3 s waiting for the reply; connection closed")
    }

    #if os(Linux)
        /// A listener whose accept queue is full drops further SYNs (Linux): the connection is
        /// never made, and connecting times out.
        func testAConnectionNeverAcceptedTimesOut() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)  // fits: a socket type constant
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, length) == 0 && listen(listener, 0) == 0
                        && getsockname(listener, $0, &length) == 0
                }
            }
            XCTAssertTrue(bound)
            var fillers: [Int32] = []
            defer { for descriptor in fillers + [listener] { close(descriptor) } }
            // The accept queue holds the backlog + 1 connections; these fill it, and more.
            for _ in 0..<4 {
                let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)  // fits: a socket type constant
                _ = fcntl(filler, F_SETFL, O_NONBLOCK)
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
                }
                var ready = pollfd(fd: filler, events: Int16(POLLOUT), revents: 0)  // fits: a poll flag
                _ = poll(&ready, 1, 200)
                fillers.append(filler)
            }
            let port = UInt16(bigEndian: address.sin_port)
            let url = URL(string: "http://127.0.0.1:\(port)/v1/logs")!
            XCTAssertEqual(
                failure(post(HTTP1Transport(connectTimeout: 0.3), to: url)),
                .timedOut(phase: .connecting, host: "127.0.0.1", port: port, seconds: 0.3))
        }
    #endif

    func testAResetMidReplyIsAnErrorAndTheNextRequestGoesOnANewConnection() throws {
        collector.script([.reset(afterBytes: 150, body: String(repeating: "y", count: 1_000))])
        let transport = HTTP1Transport()
        switch failure(post(transport)) {
        case .system(let call, _, _, _): XCTAssertEqual(call, "recv")
        case .closedMidReply(_, _, let bytes): XCTAssertGreaterThan(bytes, 0)
        case let other: XCTFail("expected a reset or a reply cut short, got \(String(describing: other))")
        }
        XCTAssertEqual(try post(transport).get().status, 200)
        XCTAssertEqual(collector.connectionsAccepted, 2)
    }

    func testAGarbageStatusLineIsAMalformedReply() {
        collector.script([.garbage("SPAM 200 OK\r\n\r\n")])
        let result = post(HTTP1Transport())
        XCTAssertEqual(
            failure(result),
            .malformedReply(
                host: "127.0.0.1", port: collector.port, what: "a status line such as \"HTTP/1.1 200 OK\"",
                found: "SPAM 200 OK"))
    }

    func testARefusedConnectionIsAnError() throws {
        let port = try LoopbackCollector.unusedPort()
        let result = post(HTTP1Transport(), to: URL(string: "http://127.0.0.1:\(port)/v1/logs")!)
        guard case .cannotConnect(let host, let refusedPort, _) = failure(result) else {
            return XCTFail("expected cannotConnect, got \(result)")
        }
        XCTAssertEqual(host, "127.0.0.1")
        XCTAssertEqual(refusedPort, port)
    }

    // MARK: Addresses

    func testIPv6Loopback() throws {
        let server = LoopbackCollector(host: "::1")
        do { try server.start() } catch { throw XCTSkip("no IPv6 loopback on this machine: \(error)") }
        defer { server.stop() }
        let response = try post(HTTP1Transport(), to: server.baseURL.appendingPathComponent("v1/logs")).get()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(server.requests.first?.headers["host"], "[::1]:\(server.port)")
    }

    func testAHostNameIsResolvedAndEachAddressTried() throws {
        // `localhost` may resolve to ::1 first, where nothing listens: the next address answers.
        let url = URL(string: "http://localhost:\(collector.port)/v1/logs")!
        XCTAssertEqual(try post(HTTP1Transport(), to: url).get().status, 200)
        XCTAssertEqual(collector.requests.first?.headers["host"], "localhost:\(collector.port)")
    }

    // MARK: Requests

    func testTheRequestGoesAsGiven() throws {
        let body = Array(#"{"events":[1,2,3]}"#.utf8)
        let gzip = try XCTUnwrap(GzipBody.compress(body))
        let request = HTTPRequest(
            url: URL(string: "\(collector.baseURL.absoluteString)/mp/collect?measurement_id=G-1&api_secret=a%20b")!,
            headers: ["Content-Encoding": "gzip", "Content-Type": "application/json", "Host": "ignored"], body: gzip)
        XCTAssertEqual(try HTTP1Transport().exchange(request, timeout: 10).status, 200)
        let received = try XCTUnwrap(collector.requests.first)
        XCTAssertEqual(received.method, "POST")
        XCTAssertEqual(received.target, "/mp/collect?measurement_id=G-1&api_secret=a%20b")
        XCTAssertEqual(received.headers["host"], "127.0.0.1:\(collector.port)")
        XCTAssertEqual(received.headers["content-length"], String(gzip.count))
        XCTAssertEqual(received.wireBody, gzip)
        XCTAssertEqual(received.body, body)
    }

    func testAHeaderValueWithALineBreakIsRefusedBeforeSending() {
        let result = post(HTTP1Transport(), headers: ["X-Key": "a\r\nX-Injected: 1"])
        XCTAssertEqual(
            failure(result), .invalidRequest("the value of the header X-Key contains a line break or NUL"))
        XCTAssertEqual(collector.requests.count, 0)
    }

    func testTheCompletionIsCalledOnceWithTheResponse() {
        let done = expectation(description: "completion")
        let request = HTTPRequest(url: collector.baseURL, body: [])
        HTTP1Transport().send(request, timeout: 10) { result in
            XCTAssertEqual(try? result.get().status, 200)
            done.fulfill()
        }
        wait(for: [done], timeout: 30)
    }

    // MARK: Through a tracker

    func testATrackerHonoursRetryAfterThroughThisClient() throws {
        collector.script([LoopbackCollector.Reply(status: 503, headers: ["Retry-After": "42"])])
        let clock = TestClock(runsImmediately: true)
        var configuration = testConfiguration(clock: clock, flushAt: 1_000)
        configuration.transport = HTTP1Transport()
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "k", baseURL: collector.baseURL), directory: directory,
            configuration: configuration)
        for event in numbered(4) { try tracker.track(event) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertEqual(clock.scheduledDelays, [42])
        XCTAssertEqual(tracker.diagnostics.delivered, 4)
        XCTAssertEqual(collector.requests.count, 2, "the refused request, then the same events again")
        XCTAssertTrue(collector.requests.allSatisfy(\.isGzip), "bodies in gzip, as the uploader made them")
    }
}
