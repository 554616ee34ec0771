import Foundation
import MeasurementEvents
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEventsAggregator

/// Consent by purpose: a destination receives an event only when every purpose it needs was
/// granted when the event was posted; a denial discards what its trackers hold, and only theirs.
final class ConsentByPurposeTests: XCTestCase {
    /// Keeps every event it was given (`RecordingTracker` forgets them at `discardPending()`),
    /// the consents it heard and how often it discarded.
    private final class KeepingTracker: EventTracker, @unchecked Sendable {
        // @unchecked: all state is behind its lock.
        private let state = LockedValue<(events: [MeasurementEvent], consents: [Consent], discards: Int)>(([], [], 0))
        func track(_ event: MeasurementEvent) throws { state.withLock { $0.events.append(event) } }
        func consentDidChange(to consent: Consent) throws { state.withLock { $0.consents.append(consent) } }
        func discardPending() throws { state.withLock { $0.discards += 1 } }
        var events: [MeasurementEvent] { state.withLock { $0.events } }
        var consentChanges: [Consent] { state.withLock { $0.consents } }
        var discardCount: Int { state.withLock { $0.discards } }
    }

    private struct App {
        let aggregator: EventAggregator
        let center: NotificationCenter
        let amplitude: KeepingTracker
        let ga4: KeepingTracker
        let otlp: KeepingTracker
    }

    private func makeApp(store: InMemoryIdentityStore = .inMemory, trail: (any EventTrailObserver)? = nil) -> App {
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = store
        configuration.trail = trail
        let center = NotificationCenter()
        let amplitude = KeepingTracker()
        let ga4 = KeepingTracker()
        let otlp = KeepingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll,
            destinations: [
                Destination(amplitude, name: "amplitude", purposes: [.analytics]),
                Destination(ga4, name: "ga4", purposes: [.analytics, .advertising]),
                Destination(otlp, name: "otlp", purposes: [.analytics]),
            ], configuration: configuration)
        aggregator.start()
        return App(aggregator: aggregator, center: center, amplitude: amplitude, ga4: ga4, otlp: otlp)
    }

    func testAnalyticsGrantedAdvertisingDeniedThenGranted() {
        let app = makeApp()
        app.aggregator.setConsents([.analytics: .granted, .advertising: .denied])
        MeasurementEvent.post("shop/viewed", args: ["step": 1], to: app.center)
        app.aggregator.setConsent(.granted, for: [.advertising])
        MeasurementEvent.post("shop/viewed", args: ["step": 2], to: app.center)
        app.aggregator.waitUntilDelivered()

        XCTAssertEqual(app.amplitude.events.map { $0.args["step"] }, [1, 2])
        XCTAssertEqual(app.otlp.events.map { $0.args["step"] }, [1, 2])
        XCTAssertEqual(app.ga4.events.map { $0.args["step"] }, [2], "posted while advertising was denied")
        XCTAssertEqual(app.ga4.consentChanges, [.granted, .denied, .granted])
        XCTAssertEqual(app.ga4.discardCount, 1, "its queue deleted at the denial")
        XCTAssertEqual(app.amplitude.consentChanges, [.granted], "not told: its purposes did not change")
        XCTAssertEqual(app.amplitude.discardCount, 0)
        XCTAssertEqual(app.aggregator.consent(for: .advertising), .granted)
        XCTAssertEqual(app.aggregator.consent(for: .personalization), .granted, "follows the single consent")
    }

    func testAPendingPurposeHoldsItsDestinationsCopiesUntilGrantedOrDenied() {
        let app = makeApp()
        app.aggregator.setConsent(.pendingHolding, for: [.advertising])
        for step in 0..<3 { MeasurementEvent.post("shop/viewed", args: ["step": step], to: app.center) }
        app.aggregator.waitUntilDelivered()
        XCTAssertEqual(app.ga4.events.count, 0)
        XCTAssertEqual(app.amplitude.events.count, 3)
        XCTAssertEqual(app.aggregator.diagnostics.heldForPurposes, 3)

        app.aggregator.setConsent(.granted, for: [.advertising])
        XCTAssertEqual(app.ga4.events.map { $0.args["step"] }, [0, 1, 2], "released in order")
        XCTAssertEqual(app.aggregator.diagnostics.heldForPurposes, 0)

        app.aggregator.setConsent(.pendingHolding, for: [.advertising])
        MeasurementEvent.post("shop/viewed", args: ["step": 3], to: app.center)
        app.aggregator.setConsent(.denied, for: [.advertising])
        XCTAssertEqual(app.ga4.events.count, 3, "held, then dropped at the denial")
        XCTAssertEqual(app.ga4.discardCount, 1)
        XCTAssertEqual(app.aggregator.diagnostics.heldForPurposes, 0)
    }

    func testTheTrailSaysWhyADestinationDidNotGetTheEvent() {
        final class Entries: EventTrailObserver, @unchecked Sendable {
            // @unchecked: behind its lock.
            let all = LockedValue<[EventTrailEntry]>([])
            func record(_ entry: EventTrailEntry) { all.withLock { $0.append(entry) } }
        }
        let entries = Entries()
        let app = makeApp(trail: entries)
        app.aggregator.setConsent(.denied, for: [.advertising])
        MeasurementEvent.post("shop/viewed", to: app.center)
        app.aggregator.setConsent(.pendingHolding, for: [.advertising])
        MeasurementEvent.post("shop/viewed", to: app.center)
        app.aggregator.waitUntilDelivered()
        let recorded = entries.all.withLock { $0 }
        let decisions = recorded.map { $0.trackers.map(\.decision) }
        XCTAssertEqual(
            decisions,
            [
                [.forwarded, .withoutConsent(.advertising), .forwarded],
                [.forwarded, .waitingForConsent(.advertising), .forwarded],
            ])
        XCTAssertEqual(decisions[0][1].description, "not sent: purpose advertising denied")
        XCTAssertEqual(recorded.map(\.purposeConsents), [[.advertising: .denied], [.advertising: .pendingHolding]])
        XCTAssertEqual(app.aggregator.diagnostics.withheldByPurpose, [.advertising: 1])
        // The copies that went out carry the purposes they were posted under: advertising, set
        // by the app, and analytics, which Amplitude's destination needs (granted: it follows
        // the single consent).
        XCTAssertEqual(
            app.amplitude.events.map { $0.attribution?.purposeConsents },
            [["advertising": false, "analytics": true], ["advertising": false, "analytics": true]])
    }

    func testPurposesAreRememberedAndTheSingleConsentMeansEveryPurpose() throws {
        let store = InMemoryIdentityStore()
        let first = makeApp(store: store)
        first.aggregator.setConsents([.analytics: .granted, .advertising: .denied])
        XCTAssertEqual(try store.load()?.purposeConsents, ["analytics": .granted, "advertising": .denied])
        first.aggregator.stop()

        let second = makeApp(store: store)
        XCTAssertEqual(second.aggregator.consent(for: .advertising), .denied, "restored before the first event")
        XCTAssertEqual(second.ga4.consentChanges, [.denied], "announced as it is")
        MeasurementEvent.post("shop/viewed", to: second.center)
        second.aggregator.waitUntilDelivered()
        XCTAssertEqual(second.ga4.events.count, 0)

        second.aggregator.setConsent(.granted)
        XCTAssertEqual(second.aggregator.purposeConsents, [:], "every purpose follows the single consent")
        XCTAssertNil(try store.load()?.purposeConsents)
        MeasurementEvent.post("shop/viewed", to: second.center)
        second.aggregator.waitUntilDelivered()
        XCTAssertEqual(second.ga4.events.count, 1)
    }

    /// A consent platform flips advertising 1,000 times while four threads post: the flipper's
    /// own marker, posted right after each flip, reaches GA4 exactly when advertising was granted
    /// at its post, and every other destination always.
    func testAThousandFlipsWhileFourThreadsPostNeverReachADeniedPurpose() {
        let app = makeApp()
        let flips = 1_000
        DispatchQueue.concurrentPerform(iterations: 5) { worker in
            if worker == 4 {
                for flip in 0..<flips {
                    let granted = flip.isMultiple(of: 2)
                    app.aggregator.setConsent(granted ? .granted : .denied, for: [.advertising])
                    MeasurementEvent.post("flip/marker", args: ["flip": flip, "granted": granted], to: app.center)
                }
                return
            }
            for index in 0..<2_000 {
                MeasurementEvent.post("load/event", args: ["thread": worker, "index": index], to: app.center)
            }
        }
        app.aggregator.waitUntilDelivered()
        let markers = app.ga4.events.filter { $0.name == "flip/marker" }
        XCTAssertEqual(markers.count, flips / 2, "every marker posted while granted, and none other")
        XCTAssertTrue(markers.allSatisfy { $0.args["granted"] == true })
        XCTAssertEqual(app.amplitude.events.filter { $0.name == "flip/marker" }.count, flips)
        XCTAssertEqual(app.amplitude.events.count, flips + 8_000, "nothing granted is lost")
        print(
            "flips: \(flips); posted \(flips + 8_000); amplitude \(app.amplitude.events.count), "
                + "otlp \(app.otlp.events.count), ga4 \(app.ga4.events.count) (markers \(markers.count), "
                + "all posted while advertising was granted)")
    }
}
