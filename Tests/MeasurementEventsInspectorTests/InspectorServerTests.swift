import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsTesting
import Testing

@testable import MeasurementEventsInspector
@testable import MeasurementEventsInspectorServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The inspector served on loopback, driven as the app and a browser drive it.
@Suite struct InspectorServerTests {
    func request(
        _ method: String, _ path: String, host: String = "127.0.0.1:9400", headers: [String: String] = [:],
        body: String = ""
    ) -> InspectorServer.Request {
        var all = headers
        all["host"] = host
        return InspectorServer.Request(method: method, path: path, query: [:], headers: all, body: Array(body.utf8))
    }

    func server(capacity: Int = 100, catalog: InspectorCatalog? = nil) throws -> InspectorServer {
        var configuration = InspectorServer.Configuration()
        configuration.port = 0
        configuration.capacity = capacity
        let server = InspectorServer(configuration: configuration, catalog: catalog)
        try server.start()
        return server
    }

    /// A socket connected to the server on loopback; the caller closes it.
    func connectedSocket(to server: InspectorServer) throws -> Int32 {
        #if canImport(Darwin)
            let socketFD = socket(AF_INET, SOCK_STREAM, 0)
        #else
            let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = server.port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socketFD)
            throw InspectorTestError.connectionRefused(port: server.port)
        }
        return socketFD
    }

    /// Sends raw bytes and returns the whole answer (the server closes after refusals).
    func exchange(_ server: InspectorServer, _ raw: [UInt8]) throws -> String {
        let socketFD = try connectedSocket(to: server)
        defer { close(socketFD) }
        _ = raw.withUnsafeBytes { send(socketFD, $0.baseAddress, $0.count, 0) }
        shutdown(socketFD, Int32(SHUT_WR))
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socketFD, &chunk, chunk.count, 0)
            guard count > 0 else { break }
            answer.append(contentsOf: chunk[..<count])
        }
        return String(decoding: answer, as: UTF8.self)
    }

    @Test func refusesAnotherHostAgainstDNSRebinding() throws {
        let server = try server()
        defer { server.stop() }
        let port = server.port
        #expect(server.acceptsHost("127.0.0.1:\(port)"))
        #expect(server.acceptsHost("localhost:\(port)"))
        #expect(server.acceptsHost("[::1]:\(port)"))
        #expect(!server.acceptsHost("attacker.example:\(port)"))
        #expect(!server.acceptsHost("127.0.0.1.attacker.example:\(port)"))
        #expect(!server.acceptsHost("127.0.0.1:\(port &+ 1)"))
        #expect(!server.acceptsHost(nil))
        let answer = try exchange(
            server, Array("GET /api/events HTTP/1.1\r\nHost: attacker.example:\(port)\r\n\r\n".utf8))
        #expect(answer.hasPrefix("HTTP/1.1 421"))
        #expect(!answer.lowercased().contains("access-control-allow-origin"))
        #expect(server.store.currentCounts.refusedRequests["wrong Host"] == 1)
        // A cross-site page reaching the right Host (a form or fetch from elsewhere) is refused too.
        let crossSite = server.handle(
            request("GET", "/api/events", host: "127.0.0.1:\(port)", headers: ["origin": "https://attacker.example"]))
        #expect(crossSite.status == 403)
    }

    @Test func badInputGetsA4xxIsCountedAndTheServerKeepsServing() throws {
        let server = try server()
        defer { server.stop() }
        let host = "127.0.0.1:\(server.port)"
        let cases: [(String, String)] = [
            (
                "POST /v1/batch HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n{bad",
                "400"
            ),
            (
                "POST /v1/batch HTTP/1.1\r\nHost: \(host)\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}",
                "415"
            ),
            (
                "POST /v1/batch HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n",
                "413"
            ),
            (
                "POST /mp/collect HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\n\u{1f}\u{8b}\u{8}\u{0}",
                "400"
            ),
            (
                "POST /v1/batch HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n[1, 2, 3]",
                "400"
            ),
            ("GET /nowhere HTTP/1.1\r\nHost: \(host)\r\n\r\n", "404"),
        ]
        for (raw, status) in cases {
            let answer = try exchange(server, Array(raw.utf8))
            #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(raw.prefix(40)) → \(answer.prefix(60))")
        }
        let refused = server.store.currentCounts.refusedRequests
        #expect(refused["malformed JSON"] == 1)
        #expect(refused["wrong content type"] == 1)
        #expect(refused["body too large"] == 1)
        #expect(refused["bad gzip"] == 1)
        #expect(refused["unexpected JSON shape"] == 1)
        #expect(refused["unknown path"] == 1)
        let healthy = try exchange(
            server, Array("GET /api/counts HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8))
        #expect(healthy.hasPrefix("HTTP/1.1 200"))
    }

    @Test func aClientThatStopsSendingIsCutOff() throws {
        var configuration = InspectorServer.Configuration()
        configuration.port = 0
        configuration.requestDeadline = 0  // the first receive that waits ends the request
        let server = InspectorServer(configuration: configuration)
        try server.start()
        defer { server.stop() }
        let socketFD = try connectedSocket(to: server)
        defer { close(socketFD) }
        let partial = Array("POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n{".utf8)
        _ = partial.withUnsafeBytes { send(socketFD, $0.baseAddress, $0.count, 0) }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = recv(socketFD, &chunk, chunk.count, 0)  // the server answers 408 and closes
        #expect(String(decoding: chunk[..<max(0, count)], as: UTF8.self).hasPrefix("HTTP/1.1 408"))
        #expect(server.store.currentCounts.refusedRequests["slow client"] == 1)
    }

    @Test func vendorRequestsAreCheckedAgainstTheVendorsLimits() throws {
        let server = try server()
        defer { server.stop() }
        let host = "127.0.0.1:\(server.port)"
        let json = ["content-type": "application/json"]
        let long = String(repeating: "v", count: 101)
        let ga4 = server.handle(
            request(
                "POST", "/debug/mp/collect", host: host, headers: json,
                body: #"{"client_id":"c","events":[{"name":"session_start","params":{"p":"\#(long)"}}]}"#))
        #expect(ga4.status == 200)
        #expect(String(decoding: ga4.body, as: UTF8.self).contains("validationMessages"))
        _ = server.handle(
            request("POST", "/v1/batch", host: host, headers: json, body: #"{"batch":[{"type":"track","event":"x"}]}"#))
        _ = server.handle(
            request(
                "POST", "/2/httpapi", host: host, headers: json,
                body: #"{"events":[{"event_type":"x","user_id":"abc"}]}"#))
        _ = server.handle(
            request(
                "POST", "/batch", host: host, headers: json,
                body: #"{"api_key":"k","events":[{"event_type":"backlog","device_id":"device-1"}]}"#))
        _ = server.handle(
            request(
                "POST", "/v1/logs", host: host, headers: json,
                body:
                    #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1","eventName":"feed/open","attributes":[{"key":"item","value":{"stringValue":"42"}}]}]}]}]}"#
            ))
        let events = server.store.events()
        #expect(events.map(\.source) == ["ga4", "segment", "amplitude", "amplitude", "otlp"])
        #expect(events[0].findings.contains("event name \"session_start\" is reserved by GA4"))
        #expect(events[0].findings.contains("param \"p\" is 101 characters; GA4 cuts values at 100"))
        #expect(events[1].findings == ["neither \"userId\" nor \"anonymousId\": Segment requires one"])
        #expect(events[2].findings.contains("no \"api_key\": Amplitude answers 400"))
        #expect(events[2].findings.contains("user_id \"abc\" is shorter than 5 characters"))
        #expect(events[3].name == "backlog", "Amplitude's Batch Event Upload API, where backlogs go")
        #expect(events[3].findings.isEmpty)
        #expect(events[4].name == "feed/open")
        #expect(events[4].args == ["item": "42"])
        #expect(events[4].findings.isEmpty)
    }

    @Test func theAPIListsCountsAndResets() throws {
        let catalog = InspectorCatalog(events: [
            "feed/open": .init(module: "DemoFeed", description: "Opened.", rules: ["type: click"])
        ])
        let server = try server(capacity: 2, catalog: catalog)
        defer { server.stop() }
        let host = "127.0.0.1:\(server.port)"
        let body =
            #"{"entries":[{"name":"feed/open","fate":"forwarded","args":{"item":"1"}},{"name":"feed/debug","fate":"filtered_out","reason":"denied by \"feed/debug\""},{"name":"feed/open","fate":"forwarded"}]}"#
        let posted = server.handle(
            request(
                "POST", "/inspector/v1/entries", host: host, headers: ["content-type": "application/json"], body: body))
        #expect(posted.status == 200)
        var list = request("GET", "/api/events", host: host)
        list.query = ["status": "filtered_out"]
        let page = try JSONSerialization.jsonObject(with: Data(server.handle(list).body)) as? [String: Any]
        let events = try #require(page?["events"] as? [[String: Any]])
        #expect(events.count == 1)
        #expect(events.first?["reason"] as? String == "denied by \"feed/debug\"")
        #expect(page?["evicted"] as? Int == 1)
        #expect(server.store.events(name: "feed/open").first?.catalog?.description == "Opened.")
        let counts = server.store.currentCounts
        #expect(counts.byName == ["feed/open": 2, "feed/debug": 1])
        #expect(server.handle(request("POST", "/api/reset", host: host)).status == 415)  // a plain form cannot reset
        #expect(
            server.handle(request("POST", "/api/reset", host: host, headers: ["content-type": "application/json"]))
                .status == 200)
        #expect(server.store.events().isEmpty)
    }

    @Test func thePageLoadsNothingFromTheNetwork() throws {
        let page = InspectorPage.html(nonce: "n")
        // No URL of another origin, and nothing that loads one.
        #expect(!page.contains("http://"))
        #expect(!page.contains("https://"))
        #expect(!page.contains("//"))  // not even a scheme-relative URL (the script has no // comments)
        #expect(!page.contains("<link"))
        #expect(!page.contains("@import"))
        #expect(!page.contains("url("))
        #expect(!page.contains(" src="))
        #expect(!page.contains("innerHTML"))
        #expect(!page.contains("outerHTML"))
        #expect(!page.contains("insertAdjacentHTML"))
        #expect(!page.contains("document.write"))
        // The only requests: its own API, by relative path.
        let fetches = page.components(separatedBy: "fetch(").dropFirst().map { $0.prefix(12) }
        #expect(fetches.allSatisfy { $0.hasPrefix("\"api/") })
        #expect(page.contains("<script nonce=\"n\">"))
        let policy = InspectorPage.contentSecurityPolicy(nonce: "n")
        #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"))
    }

    @Test func theAppSendsItsTrailToTheInspector() throws {
        let server = try server()
        defer { server.stop() }
        var configuration = InspectorConnection.Configuration(baseURL: server.baseURL)
        configuration.batchDelay = 0
        let connection = InspectorConnection(configuration: configuration)
        let event = MeasurementEvent("feed/item/open", args: ["title": "<script>alert(1)</script>"])
        connection.record(
            EventTrailEntry(event: event, fate: .forwarded, trackers: [.init(tracker: "HTTPTracker", body: "{}")]))
        connection.record(
            EventTrailEntry(
                event: MeasurementEvent("feed/debug/x"), fate: .filteredOut(reason: "denied by \"feed/debug/*\"")))
        #expect(connection.flush(timeout: 30))
        #expect(connection.diagnostics.sent == 2)
        let events = server.store.events()
        #expect(events.map(\.name) == ["feed/item/open", "feed/debug/x"])
        #expect(events[0].args == ["title": "<script>alert(1)</script>"])
        #expect(
            events[0].trackers == [
                .init(
                    tracker: "HTTPTracker", destination: "HTTPTracker", decision: "forwarded", forwarded: true,
                    error: nil,
                    body: "{}")
            ])
        #expect(events[1].status == "filtered_out")
        #expect(events[1].reason == "denied by \"feed/debug/*\"")
    }

    @Test func anUnreachableInspectorIsCountedAndReportedOnce() throws {
        let port = try {
            let probe = try server()
            defer { probe.stop() }
            return probe.port
        }()
        let problems = ProblemLog()
        var configuration = InspectorConnection.Configuration(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
        configuration.batchDelay = 0
        configuration.maximumBatchSize = 1
        configuration.problemHandler = { problems.append($0) }
        let connection = InspectorConnection(configuration: configuration)
        for index in 0..<3 {
            connection.record(EventTrailEntry(event: MeasurementEvent(EventName("a/\(index)")), fate: .forwarded))
        }
        #expect(connection.flush(timeout: 30))
        #expect(connection.diagnostics.failedRequests == 3)
        #expect(connection.diagnostics.lostInFailedRequests == 3)
        #expect(problems.messages.count == 1)
        #expect(problems.messages.first?.contains("cannot be reached") == true)
    }

    @Test func thePendingBufferDropsTheOldestAtItsCap() {
        var configuration = InspectorConnection.Configuration(baseURL: URL(string: "http://127.0.0.1:9")!)
        configuration.maximumPendingEntries = 2
        configuration.batchDelay = 3_600  // nothing leaves during the test
        let connection = InspectorConnection(configuration: configuration)
        for index in 0..<5 {
            connection.record(EventTrailEntry(event: MeasurementEvent(EventName("a/\(index)")), fate: .forwarded))
        }
        #expect(connection.diagnostics.recorded == 5)
        #expect(connection.diagnostics.droppedAtCap == 3)
    }

    @Test func localIsOnInDebugBuilds() {
        #if DEBUG
            #expect(InspectorConnection.local()?.configuration.baseURL.absoluteString == "http://127.0.0.1:9400")
        #else
            #expect(InspectorConnection.local() == nil)
            #expect(InspectorConnection.local(enabledInRelease: true) != nil)
        #endif
        #expect(InspectorConnection.local(port: 0) == nil)
    }

    @Test func anHTTPTrackerShowsTheBodyItsVendorGets() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inspector-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tracker = try HTTPTracker(encoder: SegmentEncoder(writeKey: "key"), directory: directory)
        let body = try #require(tracker.describeBody(for: MeasurementEvent("feed/item/open", args: ["item": 42])))
        #expect(body.hasPrefix("POST https://"))
        #expect(body.contains("\"event\":\"feed/item/open\""))
    }
}

final class ProblemLog: @unchecked Sendable {
    // @unchecked: `lock` guards `stored`.
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ message: String) {
        lock.lock()
        stored.append(message)
        lock.unlock()
    }
    var messages: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

/// The test kit's assertions, against the same events in-process and from a running inspector.
@Suite struct InspectedTrailSourceTests {
    @Test func theSameAssertionsServeInProcessAndARunningInspector() throws {
        var configuration = InspectorServer.Configuration()
        configuration.port = 0
        let server = InspectorServer(configuration: configuration)
        try server.start()
        defer { server.stop() }
        var connectionConfiguration = InspectorConnection.Configuration(baseURL: server.baseURL)
        connectionConfiguration.batchDelay = 0
        let connection = InspectorConnection(configuration: connectionConfiguration)
        let recorder = TrailRecorder()
        let entries = [
            EventTrailEntry(event: MeasurementEvent("feed/item_tapped", args: ["item_id": "42"]), fate: .forwarded),
            EventTrailEntry(event: MeasurementEvent("debug/x"), fate: .filteredOut(reason: "not on the allow-list")),
        ]
        for entry in entries {
            recorder.record(entry)
            connection.record(entry)
        }
        #expect(connection.flush(timeout: 30))
        let client = InspectorClient(baseURL: server.baseURL)
        for source in [recorder, client] as [any InspectedTrailSource] {
            try source.expectEvent(named: "feed/item_tapped", args: ["item_id": "42"])
            let filtered = try source.expectEvent(named: "debug/x", status: "filtered_out")
            #expect(filtered.reason == "not on the allow-list")
            #expect(throws: InspectedTrailMismatch.self) {
                try source.expectEvent(named: "feed/item_tapped", args: ["item_id": "7"])
            }
            #expect(try source.events(status: "forwarded").map(\.name) == ["feed/item_tapped"])
        }
        let mismatch = try? recorder.expectEvent(named: "debug/x")
        #expect(mismatch == nil)
        try client.reset()
        #expect(try client.inspectedEvents().isEmpty)
    }
}

/// A loopback connection to the server under test failed.
enum InspectorTestError: Error {
    case connectionRefused(port: UInt16)
}
