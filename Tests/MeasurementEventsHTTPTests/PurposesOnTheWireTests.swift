import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsGA4
import MeasurementEventsOTLP
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEventsHTTP

/// Consent by purpose through real trackers into a loopback collector (issue 46): each vendor
/// receives the purposes an event was posted under as it documents them, and a destination
/// whose purpose was denied when an event was posted never receives it.
final class PurposesOnTheWireTests: LoopbackTestCase {
    private struct App {
        let aggregator: EventAggregator
        let center: NotificationCenter
        let amplitude: HTTPTracker
        let ga4: HTTPTracker
        let otlp: HTTPTracker
        var trackers: [HTTPTracker] { [amplitude, ga4, otlp] }
    }

    /// Amplitude, GA4 and OTLP trackers into the collector. `ga4Purposes`: what GA4's
    /// destination needs (its default, analytics, when `nil`).
    private func makeApp(ga4Purposes: Set<ConsentPurpose>? = nil, flushAt: Int = 1_000) throws -> App {
        collector.respond { request in
            if request.target.hasPrefix("/mp/collect") { return .status(204) }
            if request.target.hasPrefix("/v1/logs") { return LoopbackCollector.Reply(status: 200, body: "{}") }
            return .ok
        }
        var configuration = testConfiguration(flushAt: flushAt)
        configuration.maximumQueuedEvents = 100_000
        let amplitude = try HTTPTracker(
            encoder: AmplitudeEncoder(apiKey: "key", baseURL: collector.baseURL),
            directory: directory.appendingPathComponent("amplitude"), configuration: configuration)
        let ga4 = try HTTPTracker(
            encoder: GA4Encoder(measurementID: "G-1", apiSecret: "s", baseURL: collector.baseURL, validation: .off),
            directory: directory.appendingPathComponent("ga4"), configuration: configuration)
        let otlp = try HTTPTracker(
            encoder: OTLPLogsEncoder(baseURL: collector.baseURL), directory: directory.appendingPathComponent("otlp"),
            configuration: configuration)
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll,
            destinations: [
                Destination(amplitude, name: "amplitude"),
                Destination(ga4, name: "ga4", purposes: ga4Purposes),
                Destination(otlp, name: "otlp"),
            ], configuration: .testing)
        aggregator.start()
        return App(aggregator: aggregator, center: center, amplitude: amplitude, ga4: ga4, otlp: otlp)
    }

    /// Flushes every tracker and waits (10 s of real time at most) until none has anything queued.
    private func deliverEverything(_ app: App) throws {
        app.aggregator.waitUntilDelivered()
        for tracker in app.trackers { try tracker.flush() }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, app.trackers.contains(where: { $0.diagnostics.queued > 0 || !$0.uploader.isIdle }) {
            usleep(1_000)
        }
    }

    private func bodies(at path: String) -> [[String: Any]] {
        collector.requests.filter { $0.target.hasPrefix(path) }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any]
        }
    }

    func testEachVendorReceivesThePurposesAsItDocumentsThem() throws {
        let app = try makeApp()
        XCTAssertEqual(app.amplitude.defaultPurposes, [.analytics])
        XCTAssertEqual(app.ga4.defaultPurposes, [.analytics])
        XCTAssertEqual(app.otlp.defaultPurposes, [.analytics])
        app.aggregator.setConsents([.analytics: .granted, .advertising: .denied, .personalization: .denied])
        MeasurementEvent.post("shop/viewed", args: ["step": 1], to: app.center)
        try deliverEverything(app)
        app.aggregator.setConsent(.granted, for: [.advertising, .personalization])
        MeasurementEvent.post("shop/viewed", args: ["step": 2], to: app.center)
        try deliverEverything(app)

        // Amplitude: no consent field in its API; both events, as before.
        let amplitude = bodies(at: "/2/httpapi").flatMap { $0["events"] as? [[String: Any]] ?? [] }
        XCTAssertEqual(amplitude.map { ($0["event_properties"] as? [String: Any])?["step"] as? Int }, [1, 2])
        XCTAssertFalse(bodies(at: "/2/httpapi").description.contains("consent"))

        // GA4: analytics is all its destination needs; its Consent Mode signals follow
        // advertising and personalization, one request per pair of signals.
        let ga4 = bodies(at: "/mp/collect")
        XCTAssertEqual(ga4.count, 2)
        XCTAssertEqual(
            ga4.map { $0["consent"] as? [String: String] },
            [
                ["ad_user_data": "DENIED", "ad_personalization": "DENIED"],
                ["ad_user_data": "GRANTED", "ad_personalization": "GRANTED"],
            ])
        for request in collector.requests where request.target.hasPrefix("/mp/collect") {
            XCTAssertEqual(GA4ValidationRules.messages(for: request.body), [], request.bodyText)
        }

        // OTLP: one boolean attribute per purpose.
        let records = bodies(at: "/v1/logs").flatMap(otlpRecords)
        XCTAssertEqual(records.count, 2)
        XCTAssertEqual(
            records.map { otlpBools($0, prefix: OTLPLogsEncoder.consentAttributePrefix) },
            [
                ["advertising": false, "analytics": true, "personalization": false],
                ["advertising": true, "analytics": true, "personalization": true],
            ])
        for path in ["/2/httpapi", "/mp/collect", "/v1/logs"] {
            print("\(path): \(collector.requests.filter { $0.target.hasPrefix(path) }.map(\.bodyText))")
        }
    }

    func testWithoutPurposesNothingAboutConsentGoesOnTheWire() throws {
        let app = try makeApp()
        MeasurementEvent.post("shop/viewed", to: app.center)
        try deliverEverything(app)
        XCTAssertEqual(collector.requests.count, 3)
        for request in collector.requests {
            XCTAssertFalse(request.bodyText.contains("consent"), request.bodyText)
        }
    }

    /// A consent platform flips advertising 1,000 times while 4 threads post to three
    /// destinations, GA4's needing advertising. Each event says which flips had finished before
    /// it was posted and which had started after: when they are the same flip, the consent in
    /// force at the post is known. Nothing reaches GA4 that was posted while advertising was
    /// denied; Amplitude and OTLP (analytics, always granted) receive every event; what GA4 does
    /// not receive of what was granted was deleted by a later denial (counted by its tracker).
    func testAPurposeFlippedAThousandTimesWhileFourThreadsPost() throws {
        let app = try makeApp(ga4Purposes: [.analytics, .advertising], flushAt: 20)
        app.aggregator.setConsents([.analytics: .granted, .advertising: .granted])
        let started = LockedValue(0)
        let finished = LockedValue(0)
        let postedCount = LockedValue(0)
        let quietClaimed = LockedValue(-1)
        let quietDone = LockedValue(-1)
        let flips = 1_000
        // Per event: (n, flips finished before the post, flips started after it).
        let posted = LockedValue<[(n: Int, before: Int, after: Int)]>([])
        @Sendable func work(_ worker: Int) {
            if worker == 4 {
                for flip in 1...flips {
                    // Paced by the posts, not by time: 4 events posted between two flips, one of
                    // them while no flip was under way (so its consent at the post is known).
                    while postedCount.withLock({ $0 }) < flip * 4 || quietDone.withLock({ $0 }) < flip - 1 {
                        sched_yield()
                    }
                    started.withLock { $0 = flip }
                    // Odd flips deny, even ones grant: flip k leaves advertising denied when k is odd.
                    app.aggregator.setConsent(flip % 2 == 1 ? .denied : .granted, for: [.advertising])
                    finished.withLock { $0 = flip }
                }
                return
            }
            var mine: [(n: Int, before: Int, after: Int)] = []
            var sequence = 0
            while true {
                let done = finished.withLock { $0 }
                if done >= flips { break }
                // At most 2 events a flip ahead of the flips (and 8 to start): posts and flips
                // interleave however slowly either runs, and the test stays bounded.
                if sequence >= done * 2 + 8 {
                    sched_yield()
                    continue
                }
                let n = worker * 100_000 + sequence
                // One post after each flip claims to be the quiet one the flipper waits for.
                let quiet = quietClaimed.withLock { claimed -> Bool in
                    guard claimed < done else { return false }
                    claimed = done
                    return true
                }
                let before = finished.withLock { $0 }
                MeasurementEvent.post("shop/viewed", args: ["n": n], to: app.center)
                mine.append((n, before, started.withLock { $0 }))
                if quiet { quietDone.withLock { $0 = max($0, done) } }
                postedCount.withLock { $0 += 1 }
                sequence += 1
            }
            posted.withLock { $0 += mine }
        }
        // Threads of their own: `concurrentPerform` runs as many at once as there are cores, and
        // on two cores the flipper would wait for posters that wait for it.
        let group = DispatchGroup()
        for worker in 0..<5 {
            group.enter()
            Thread {
                work(worker)
                group.leave()
            }.start()
        }
        group.wait()
        try deliverEverything(app)

        let all = posted.withLock { $0 }
        let known = all.filter { $0.before == $0.after }
        let deniedAtPost = Set(known.filter { $0.before % 2 == 1 }.map(\.n))
        let grantedAtPost = Set(known.filter { $0.before % 2 == 0 }.map(\.n))
        func received(_ path: String, _ numbers: ([String: Any]) -> [Int]) -> [Int] {
            bodies(at: path).flatMap(numbers)
        }
        // Amplitude: a backlog goes to its Batch Event Upload API, the rest to HTTP V2.
        let amplitude = ["/batch", "/2/httpapi"].flatMap { path in
            received(path) { body in
                (body["events"] as? [[String: Any]] ?? []).compactMap {
                    ($0["event_properties"] as? [String: Any])?["n"] as? Int
                }
            }
        }
        let ga4 = received("/mp/collect") { body in
            (body["events"] as? [[String: Any]] ?? []).compactMap { ($0["params"] as? [String: Any])?["n"] as? Int }
        }
        let otlp = received("/v1/logs") { body in
            otlpRecords(body).compactMap { record in otlpInts(record)["n"] }
        }
        let ga4Tracker = app.ga4.diagnostics

        print(
            "Flip test: \(all.count) events posted by 4 threads during \(flips) flips of advertising; "
                + "consent at the post known for \(known.count) (granted \(grantedAtPost.count), denied "
                + "\(deniedAtPost.count)); received: Amplitude \(amplitude.count), OTLP \(otlp.count), GA4 "
                + "\(ga4.count) (deleted from GA4's queue by later denials: \(ga4Tracker.discarded)); GA4 events "
                + "posted while advertising was denied that reached it: "
                + "\(Set(ga4).intersection(deniedAtPost).count); withheld by purpose: "
                + "\(app.aggregator.diagnostics.withheldByPurpose); Amplitude's tracker: \(app.amplitude.diagnostics)")

        XCTAssertEqual(Set(ga4).intersection(deniedAtPost).count, 0, "nothing posted under a denial reaches GA4")
        XCTAssertEqual(ga4.count, Set(ga4).count, "each at most once")
        let everyEvent = Set(all.map(\.n))
        XCTAssertEqual(amplitude.count, all.count, "analytics was never denied: every event, once")
        XCTAssertEqual(Set(amplitude), everyEvent)
        XCTAssertEqual(otlp.count, all.count)
        XCTAssertEqual(Set(otlp), everyEvent)
        XCTAssertFalse(deniedAtPost.isEmpty, "the posts overlapped denials")
        XCTAssertFalse(grantedAtPost.isEmpty)
        // GA4's copies: every event granted at its post was sent or deleted by a later denial,
        // counted; every withheld one counted under advertising.
        let withheld = app.aggregator.diagnostics.withheldByPurpose[.advertising, default: 0]
        XCTAssertEqual(ga4.count + ga4Tracker.discarded + withheld, all.count)
        XCTAssertGreaterThanOrEqual(withheld, deniedAtPost.count)
        XCTAssertEqual(ga4Tracker.queued, 0)
    }
}

/// The log records of an OTLP logs request body.
private func otlpRecords(_ body: [String: Any]) -> [[String: Any]] {
    (body["resourceLogs"] as? [[String: Any]] ?? []).flatMap { resource in
        (resource["scopeLogs"] as? [[String: Any]] ?? []).flatMap { $0["logRecords"] as? [[String: Any]] ?? [] }
    }
}

/// A record's boolean attributes whose key starts with `prefix`, by the rest of the key.
private func otlpBools(_ record: [String: Any], prefix: String) -> [String: Bool] {
    var values: [String: Bool] = [:]
    for attribute in record["attributes"] as? [[String: Any]] ?? [] {
        guard let key = attribute["key"] as? String, key.hasPrefix(prefix),
            let value = (attribute["value"] as? [String: Any])?["boolValue"] as? Bool
        else { continue }
        values[String(key.dropFirst(prefix.count))] = value
    }
    return values
}

/// A record's integer attributes (OTLP/JSON writes them as decimal strings).
private func otlpInts(_ record: [String: Any]) -> [String: Int] {
    var values: [String: Int] = [:]
    for attribute in record["attributes"] as? [[String: Any]] ?? [] {
        guard let key = attribute["key"] as? String,
            let text = (attribute["value"] as? [String: Any])?["intValue"] as? String, let value = Int(text)
        else { continue }
        values[key] = value
    }
    return values
}
