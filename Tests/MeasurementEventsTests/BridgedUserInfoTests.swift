import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// Relays every event posted on `source` to a new center, with its userInfo reshaped: what an
/// observer sees on Darwin, where `NotificationCenter` bridges the userInfo through
/// `NSDictionary`. The relay runs inside the original post, on the posting thread, so the
/// post is still in progress when the aggregator on the relay's center receives it.
private final class Relay: @unchecked Sendable {
    // @unchecked: immutable after init; NotificationCenter is thread-safe.
    let center = NotificationCenter()
    private var observer: (any NSObjectProtocol)?
    private let source: NotificationCenter

    init(from source: NotificationCenter, reshape: @escaping @Sendable ([AnyHashable: Any]) -> [AnyHashable: Any]) {
        self.source = source
        observer = source.addObserver(forName: .measurementEvent, object: nil, queue: nil) { [center] notification in
            center.post(name: notification.name, object: nil, userInfo: notification.userInfo.map(reshape))
        }
    }

    deinit {
        if let observer { source.removeObserver(observer) }
    }
}

/// The posting path gives the same events and counts whether the observer receives the posted
/// userInfo itself, a copy of it, or one bridged through `NSDictionary`.
final class BridgedUserInfoTests: XCTestCase {
    private struct Outcome: Equatable {
        var events: [String]
        var received: Int
        var forwarded: Int
        var filteredOut: Int
        var malformed: Int
    }

    /// Posts five events on `posting` (two kept, one filtered out, one malformed, one with an
    /// invalid name that the filter would not keep either) to an aggregator observing `observed`.
    private func outcome(posting center: NotificationCenter, observed: NotificationCenter? = nil) -> Outcome {
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: observed ?? center, filter: EventFilter(allow: ["feed/*"]), trackers: [tracker],
            configuration: .testing)
        aggregator.start()
        MeasurementEvent.post("feed/item_tapped", args: ["item_id": "42", "position": 3, "ratio": 0.5], to: center)
        MeasurementEvent.post(
            "feed/item_shown", type: .impression, category: "cards",
            args: ["wide": true, "value": EventValue.int(7)], to: center)
        MeasurementEvent.post("settings/opened", to: center)
        MeasurementEvent.post("feed/bad", args: ["nan": Double.nan], to: center)
        // Malformed on every path, whatever the filter says (the name is checked before it).
        MeasurementEvent.post("settings/bad name", to: center)
        aggregator.waitUntilDelivered()
        let diagnostics = aggregator.diagnostics
        return Outcome(
            events: tracker.events.map { event in
                let args = event.args.keys.sorted().map { "\($0)=\(event.args[$0]!)" }
                return "\(event.type.rawValue) \(event.name) \(event.category ?? "-") \(args)"
            },
            received: diagnostics.received, forwarded: diagnostics.forwarded,
            filteredOut: diagnostics.filteredOut, malformed: diagnostics.malformed)
    }

    func testAUserInfoBridgedThroughNSDictionaryGivesTheSameEventsAndCounts() {
        let expected = outcome(posting: NotificationCenter())
        XCTAssertEqual(expected.forwarded, 2)
        XCTAssertEqual(expected.filteredOut, 1)
        XCTAssertEqual(expected.malformed, 2)
        let source = NotificationCenter()
        let relay = Relay(from: source) { NSDictionary(dictionary: $0) as? [AnyHashable: Any] ?? [:] }
        XCTAssertEqual(outcome(posting: source, observed: relay.center), expected)
    }

    func testACopiedUserInfoGivesTheSameEventsAndCounts() {
        let expected = outcome(posting: NotificationCenter())
        let source = NotificationCenter()
        let relay = Relay(from: source) { info in
            var copy: [AnyHashable: Any] = [:]
            for (key, value) in info { copy[key] = value }
            return copy
        }
        XCTAssertEqual(outcome(posting: source, observed: relay.center), expected)
    }

    func testTheSameUserInfoRelayedGivesTheSameEventsAndCounts() {
        let expected = outcome(posting: NotificationCenter())
        let source = NotificationCenter()
        let relay = Relay(from: source) { $0 }
        XCTAssertEqual(outcome(posting: source, observed: relay.center), expected)
    }

    /// During a post, a notification with another userInfo is read from that userInfo, never
    /// taken for the post in progress.
    func testAnotherUserInfoDuringAPostIsReadFromItsOwnFields() {
        let source = NotificationCenter()
        let relay = Relay(from: source) { info in
            var renamed = NSDictionary(dictionary: info) as? [AnyHashable: Any] ?? [:]
            renamed[MeasurementEvent.UserInfoKey.name] = "feed/relayed"
            return renamed
        }
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: relay.center, filter: .allowAll, trackers: [tracker], configuration: .testing)
        aggregator.start()
        MeasurementEvent.post("feed/item_tapped", args: ["item_id": "42"], to: source)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map(\.name), ["feed/relayed"])
        XCTAssertEqual(tracker.events.first?.args, ["item_id": "42"])
    }
}
