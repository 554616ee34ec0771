import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsStandard
import XCTest

@testable import MeasurementEventsGA4
@testable import MeasurementEventsHTTP

/// GA4's validation server (`/debug/mp/collect`), played by the loopback collector: each
/// `validationMessages` entry reaches the problem handler with its event's name; a reply that
/// is not JSON is reported and nothing is dropped. The reply's shape:
/// developers.google.com/analytics/devguides/collection/protocol/ga4/validating-events, "Response"
/// (`validationMessages`: `fieldPath`, `description`, `validationCode`).
final class GA4ValidationTests: LoopbackTestCase {
    private let clock = TestClock(runsImmediately: true)

    private func makeTracker(_ stream: GA4Encoder.Stream, problems: LockedValue<[String]>) throws -> HTTPTracker {
        var configuration = testConfiguration(clock: clock, flushAt: 1)
        configuration.logHandler = { message in problems.withLock { $0.append(message) } }
        return try HTTPTracker(
            encoder: GA4Encoder(stream: stream, apiSecret: "s", baseURL: collector.baseURL, validation: .always),
            directory: directory, configuration: configuration)
    }

    private func event(_ name: EventName, args: EventArgs = [:]) -> MeasurementEvent {
        MeasurementEvent(name, args: args, timestamp: clock.now())
    }

    /// Waits (real time, bounded) for a log line containing `text`: the validation reply comes
    /// on the transport's thread after the real request.
    private func waitForProblem(_ text: String, in problems: LockedValue<[String]>) -> [String] {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let lines = problems.withLock { $0 }
            if lines.contains(where: { $0.contains(text) }) { return lines }
            usleep(5_000)
        }
        return problems.withLock { $0 }
    }

    func testEachValidationMessageIsReportedWithTheEventName() throws {
        collector.playGA4ValidationServer()
        let problems = LockedValue<[String]>([])
        let tracker = try makeTracker(.web(measurementID: "G-1"), problems: problems)
        // A good event: validated, no message.
        try tracker.track(event("feed/opened"))
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertTrue(collector.waitForRequests(2, timeout: 20))
        let targets = collector.requests.map { String($0.target.prefix(while: { $0 != "?" })) }
        XCTAssertEqual(Set(targets), ["/mp/collect", "/debug/mp/collect"])
        XCTAssertEqual(
            collector.requests.first { $0.target.hasPrefix("/debug/") }?.body,
            collector.requests.first { $0.target.hasPrefix("/mp/") }?.body, "the same body is validated")
        XCTAssertFalse(problems.withLock { $0 }.contains { $0.contains("GA4 validation") })
    }

    func testScreenViewOnAnAppStreamPassesTheValidator() throws {
        collector.playGA4ValidationServer()
        let problems = LockedValue<[String]>([])
        let tracker = try makeTracker(
            .app(firebaseAppID: "1:1:ios:a", appInstanceID: "0123456789abcdef0123456789abcdef"), problems: problems)
        try tracker.track(event("screen/viewed", args: ScreenView("Feed").args))
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        XCTAssertTrue(collector.waitForRequests(2, timeout: 20))
        let validation = try XCTUnwrap(collector.requests.first { $0.target.hasPrefix("/debug/") })
        XCTAssertEqual(GA4ValidationRules.messages(for: validation.body).count, 0, validation.bodyText)
        XCTAssertTrue(validation.bodyText.contains(#""name":"screen_viewed""#), validation.bodyText)
        XCTAssertEqual(tracker.diagnostics.delivered, 1)
    }

    func testAReservedNameIsReportedAsGA4ReportsIt() throws {
        // The encoder never sends a reserved name; the report of one the validator flags names the event.
        let body = Array(#"{"client_id":"c","events":[{"name":"screen_view","params":{}}]}"#.utf8)
        let reply = try JSONSerialization.data(
            withJSONObject: ["validationMessages": GA4ValidationRules.messages(for: body)])
        let reports = GA4Validator.messages(
            in: .success(HTTPResponse(status: 200, headers: [:], body: [UInt8](reply))), requestBody: body)
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports[0].contains("event screen_view: NAME_RESERVED at \"events[0].name\""), reports[0])
    }

    func testAValidationReplyThatIsNotJSONIsReportedAndNothingIsDropped() throws {
        collector.playGA4ValidationServer(answersWithoutJSON: true)
        let problems = LockedValue<[String]>([])
        let tracker = try makeTracker(.web(measurementID: "G-1"), problems: problems)
        for index in 0..<3 { try tracker.track(event("feed/opened", args: ["index": .int(index)])) }
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let lines = waitForProblem("not the JSON it documents", in: problems)
        let report = try XCTUnwrap(lines.first { $0.contains("not the JSON it documents") }, "\(lines)")
        XCTAssertTrue(report.contains("<html>Service Unavailable</html>"), report)
        XCTAssertTrue(report.contains("nothing was dropped"), report)
        XCTAssertEqual(tracker.diagnostics.delivered, 3)
        XCTAssertEqual(tracker.diagnostics.refusedEvents + tracker.diagnostics.rejectedByServer, 0)
    }

    func testEventsPastTheBackdatingWindowAreCountedAndReportedOncePerEpisode() throws {
        let problems = LockedValue<[String]>([])
        var configuration = testConfiguration(clock: clock, flushAt: 1)
        configuration.logHandler = { message in problems.withLock { $0.append(message) } }
        let tracker = try HTTPTracker(
            encoder: GA4Encoder(measurementID: "G-1", apiSecret: "s", baseURL: collector.baseURL, validation: .off),
            directory: directory, configuration: configuration)
        let old = clock.now().addingTimeInterval(-GA4Encoder.backdatingWindow - 3600)
        for index in 0..<3 {
            try tracker.track(MeasurementEvent("feed/opened", args: ["index": .int(index)], timestamp: old))
            XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        }
        try tracker.track(event("feed/opened"))
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        try tracker.track(MeasurementEvent("feed/opened", timestamp: old))
        XCTAssertTrue(tracker.waitUntilDelivered(timeout: 30))
        let diagnostics = tracker.diagnostics
        XCTAssertEqual(diagnostics.expiredBeforeSending, 4)
        XCTAssertEqual(diagnostics.delivered, 1)
        XCTAssertEqual(diagnostics.rejectedByEncoder, 0)
        let reports = problems.withLock { $0 }.filter { $0.contains("older than the vendor takes") }
        XCTAssertEqual(reports.count, 2, "one per episode: \(reports)")
        XCTAssertTrue(reports[0].contains("72-hour backdating window"), reports[0])
        XCTAssertEqual(collector.requests.count, 1)
    }

    func testValidationURLKeepsTheQueryAndABasePath() {
        let url = URL(string: "https://example.com/proxy/mp/collect?measurement_id=G-1&api_secret=s")!
        XCTAssertEqual(
            GA4Validator.validationURL(for: url)?.absoluteString,
            "https://example.com/proxy/debug/mp/collect?measurement_id=G-1&api_secret=s")
    }
}
