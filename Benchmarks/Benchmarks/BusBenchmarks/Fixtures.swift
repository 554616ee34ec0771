import Benchmark
import Dispatch
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// The one event every bus benchmark posts, in each of the shapes the benchmarks need.
enum SampleEvent {
    static let name: EventName = "feed/item_tapped"

    /// The userInfo a feature module would build by hand for a raw post: the same name and
    /// args dictionary the bus posts, nothing else.
    @inline(__always)
    static func rawUserInfo() -> [AnyHashable: Any] {
        ["name": "feed/item_tapped", "args": ["item_id": "42", "position": 3]]
    }

    /// Posts the event the way feature code does.
    @inline(__always)
    static func post(to center: NotificationCenter) {
        MeasurementEvent.post("feed/item_tapped", args: ["item_id": "42", "position": 3], to: center)
    }

    /// Posts the reference: a plain notification with the same userInfo.
    @inline(__always)
    static func postRaw(to center: NotificationCenter) {
        center.post(name: .measurementEvent, object: nil, userInfo: rawUserInfo())
    }
}

/// Counts what it is given; nothing else, so that delivery itself is what gets measured.
final class CountingTracker: EventTracker, @unchecked Sendable {
    // @unchecked: only the aggregator's serial delivery writes `count`; readers call
    // `waitUntilDelivered()` first, which synchronises with that delivery.
    private(set) var count = 0

    func track(_ event: MeasurementEvent) {
        count += 1
    }
}

/// Allow-lists shaped like an app's: exact names three levels deep and `area/*` wildcards.
enum AllowLists {
    static func exactName(_ index: Int) -> String {
        "module\(index % 100)/screen\(index)/tapped"
    }

    static func prefix(_ index: Int) -> String {
        "area\(index)/"
    }

    /// `nameCount` exact names and `prefixCount` wildcards; `extra` names are added as-is.
    static func patterns(names nameCount: Int, prefixes prefixCount: Int, extra: [EventName] = []) -> [EventPattern] {
        (0..<nameCount).map { EventPattern(EventName(exactName($0))) }
            + (0..<prefixCount).map { EventPattern(stringLiteral: prefix($0) + "*") }
            + extra.map { EventPattern($0) }
    }

    /// The names a filter benchmark looks up, in turn: 8 exact hits spread over the list,
    /// 4 wildcard hits and 4 misses.
    static func lookups(names nameCount: Int) -> [EventName] {
        let hits = (0..<8).map { EventName(exactName($0 * nameCount / 8)) }
        let wildcardHits = (0..<4).map { EventName(prefix($0 * 25) + "list/item_shown") }
        let misses = (0..<4).map { EventName("unlisted\($0)/screen/tapped") }
        return hits + wildcardHits + misses
    }
}

/// An aggregator on a private center, started, with a counting tracker.
struct AggregatorFixture {
    let center = NotificationCenter()
    let tracker = CountingTracker()
    let aggregator: EventAggregator

    /// - Parameter allowsSample: whether the filter keeps ``SampleEvent``. Either way the
    ///   filter holds 10 other names and 100 wildcards, like a small app's.
    init(allowsSample: Bool, delivery: EventAggregator.Delivery = .asynchronous) {
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = .inMemory  // a benchmark: nothing written to the home folder
        configuration.delivery = delivery
        let filter = EventFilter(allow: AllowLists.patterns(
            names: 10, prefixes: 100, extra: allowsSample ? [SampleEvent.name] : []))
        aggregator = EventAggregator(
            center: center, filter: filter, trackers: [tracker], configuration: configuration)
        aggregator.start()
    }
}

extension Benchmark {
    /// Fails the benchmark when a tracker saw a different number of events than were posted.
    func expect(delivered: Int, by tracker: CountingTracker) {
        if tracker.count != delivered {
            error("expected \(delivered) delivered events, the tracker saw \(tracker.count)")
        }
    }
}
