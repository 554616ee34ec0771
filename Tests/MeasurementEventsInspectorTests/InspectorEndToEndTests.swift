import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsTesting
import Testing

@testable import MeasurementEventsInspector
@testable import MeasurementEventsInspectorServer

/// The aggregator's trail, through an `InspectorConnection`, into a running inspector.
@Suite struct InspectorEndToEndTests {
    /// A running inspector on a free port, and a connection that sends it each entry at once.
    private func inspector() throws -> (InspectorServer, InspectorConnection) {
        var serverConfiguration = InspectorServer.Configuration()
        serverConfiguration.port = 0
        let server = InspectorServer(configuration: serverConfiguration)
        try server.start()
        var connectionConfiguration = InspectorConnection.Configuration(baseURL: server.baseURL)
        connectionConfiguration.batchDelay = 0
        return (server, InspectorConnection(configuration: connectionConfiguration))
    }

    @Test func theInspectorShowsWhatTheAggregatorDecidedAndTheVendorBody() throws {
        let (server, connection) = try inspector()
        defer { server.stop() }

        let collector = LoopbackCollector()
        try collector.start()
        defer { collector.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inspector-e2e-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tracker = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL), directory: directory)

        var configuration = EventAggregator.Configuration.testing
        configuration.trail = connection
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["feed/*"]), trackers: [tracker], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("feed/item_tapped", type: .click, args: ["item_id": "42"], to: center)
        MeasurementEvent.post("debug/cache_cleared", to: center)
        aggregator.flush()
        #expect(connection.flush(timeout: 30))

        let client = InspectorClient(baseURL: server.baseURL)
        try client.expectEvent(named: "feed/item_tapped", args: ["item_id": "42"])
        let filtered = try client.expectEvent(named: "debug/cache_cleared", status: "filtered_out")
        #expect(filtered.reason?.isEmpty == false)
        let forwarded = try #require(server.store.events(name: "feed/item_tapped").first)
        #expect(forwarded.type == "click")
        let body = try #require(forwarded.trackers.first?.body)
        #expect(body.contains("\"event\":\"feed/item_tapped\""))
    }

    /// Each destination's decision reaches the inspector: forwarded with the vendor body, or why not.
    @Test func theInspectorShowsEachDestinationsDecision() throws {
        let (server, connection) = try inspector()
        defer { server.stop() }

        var configuration = EventAggregator.Configuration.testing
        configuration.trail = connection
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll,
            destinations: [
                Destination(RecordingTracker(), name: "amplitude", filter: EventFilter(allow: ["checkout/*"])),
                Destination(RecordingTracker(), name: "debug"),
            ], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("feed/item_tapped", to: center)
        aggregator.flush()
        #expect(connection.flush(timeout: 30))

        let event = try #require(server.store.events(name: "feed/item_tapped").first)
        #expect(event.trackers.map(\.destination) == ["amplitude", "debug"])
        #expect(event.trackers.map(\.forwarded) == [false, true])
        #expect(event.trackers.first?.decision == "filtered by the destination: not on the allow-list")
        #expect(event.trackers.last?.decision == "forwarded")
    }

    /// Consent by purpose reaches the inspector: the event's purposes, and "not sent: purpose
    /// advertising denied" for the destination that needs it.
    @Test func theInspectorShowsThePurposesAndWhoDidNotGetTheEvent() throws {
        let (server, connection) = try inspector()
        defer { server.stop() }

        var configuration = EventAggregator.Configuration.testing
        configuration.trail = connection
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll,
            destinations: [
                Destination(RecordingTracker(), name: "amplitude", purposes: [.analytics]),
                Destination(RecordingTracker(), name: "ads", purposes: [.analytics, .advertising]),
            ], configuration: configuration)
        aggregator.start()
        aggregator.setConsents([.analytics: .granted, .advertising: .denied])
        MeasurementEvent.post("checkout/started", to: center)
        aggregator.flush()
        #expect(connection.flush(timeout: 30))

        let event = try #require(server.store.events(name: "checkout/started").first)
        #expect(event.purposes == ["analytics": "granted", "advertising": "denied"])
        #expect(event.trackers.map(\.forwarded) == [true, false])
        #expect(event.trackers.last?.decision == "not sent: purpose advertising denied")
        // The test kit's client reads the same from the running inspector.
        let seen = try InspectorClient(baseURL: server.baseURL).inspectedEvents().filter {
            $0.name == "checkout/started"
        }
        #expect(seen.map(\.purposes) == [["analytics": "granted", "advertising": "denied"]])
        #expect(seen.first?.decisions["ads"] == "not sent: purpose advertising denied")
    }
}
