import BenchmarkSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

// A small driver for profilers (callgrind, perf): runs one bus operation many times, with no
// benchmark harness around it. `swift build -c release --product BusProfile`, then for example
// `valgrind --tool=callgrind .build/release/BusProfile allowed 20000`.

final class CountingTracker: EventTracker, @unchecked Sendable {
    // @unchecked: written only by the aggregator's serial delivery, read after waitUntilDelivered().
    var count = 0
    func track(_ event: MeasurementEvent) { count += 1 }
}

@inline(never)
func postRaw(_ center: NotificationCenter) {
    center.post(
        name: .measurementEvent, object: nil,
        userInfo: ["name": "feed/item_tapped", "args": ["item_id": "42", "position": 3]])
}

@inline(never)
func post(_ center: NotificationCenter) {
    MeasurementEvent.post("feed/item_tapped", args: ["item_id": "42", "position": 3], to: center)
}

/// A tracking plan of `events` events that declares the posted one, for the `planned` modes.
func plan(events: Int) -> EventCatalog {
    let posted = EventSpec(
        name: "feed/item_tapped", type: .userAction,
        args: [
            ArgSpec(name: "item_id", type: .string, isRequired: true, isPersonalData: false),
            ArgSpec(name: "position", type: .int, isRequired: true, isPersonalData: false, minimum: 0),
        ])
    let others = (1..<events).map {
        EventSpec(
            name: EventName("module\($0)/screen/tapped"), type: .userAction,
            args: [ArgSpec(name: "item_id", type: .string, isRequired: true, isPersonalData: false)])
    }
    return EventCatalog(module: "Profile", events: [posted] + others)
}

func aggregator(
    on center: NotificationCenter, allowing: Bool, delivery: EventAggregator.Delivery, plan: EventCatalog? = nil
) -> (
    EventAggregator, CountingTracker
) {
    var configuration = EventAggregator.Configuration()
    // A measuring tool, not an app: identity in memory, nothing written to the user's home.
    configuration.identityStore = .inMemory
    // planned, planned10k: the aggregator checks each event against a plan of 10 or 10,000 events.
    if let plan { configuration.catalogs = [plan] }
    // plannedsites: the posts also carry their #fileID and #line to the aggregator.
    configuration.planConformance.recordsPostSites = CommandLine.arguments.dropFirst().first == "plannedsites"
    configuration.delivery = delivery
    // Under valgrind the delivery thread hardly runs while the poster loops: with the default
    // in-flight bound most posts would be dropped, and measured as cheaper than they are.
    configuration.maximumInFlightEvents = .max
    // BUSPROFILE_COALESCING=<seconds> tries another coalescing delay than the default.
    if let seconds = ProcessInfo.processInfo.environment["BUSPROFILE_COALESCING"].flatMap(Double.init) {
        configuration.deliveryCoalescing = seconds
    }
    let tracker = CountingTracker()
    let names: [EventPattern] =
        (0..<10).map { EventPattern(EventName("module\($0)/screen\($0)/tapped")) }
        + (0..<100).map { EventPattern(stringLiteral: "area\($0)/*") }
    let filter = EventFilter(allow: names + (allowing ? ["feed/item_tapped"] : []))
    let aggregator = EventAggregator(center: center, filter: filter, trackers: [tracker], configuration: configuration)
    aggregator.start()
    return (aggregator, tracker)
}

/// Wall clock of `body`, in nanoseconds per post.
func nanoseconds(per posts: Int, _ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(posts)
}

/// Runs `body(thread)` on `count` new threads and waits for them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for thread in 0..<count {
        group.enter()
        Thread {
            body(thread)
            group.leave()
        }.start()
    }
    group.wait()
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Wall-clock ratios with each variant run right after a raw post batch, 31 times: the noise
/// of a shared machine moves both sides of each ratio together.
func runInterleaved(batch: Int) {
    let rawCenter = NotificationCenter()
    let observer = rawCenter.addObserver(forName: .measurementEvent, object: nil, queue: nil) { _ in }
    defer { rawCenter.removeObserver(observer) }
    let filteredCenter = NotificationCenter()
    let (filteredAggregator, _) = aggregator(on: filteredCenter, allowing: false, delivery: .asynchronous)
    let allowedCenter = NotificationCenter()
    let (allowedAggregator, tracker) = aggregator(on: allowedCenter, allowing: true, delivery: .asynchronous)
    var filtered: [Double] = []
    var allowed: [Double] = []
    // Nanoseconds a post, for the medians printed first: which side of a ratio moved.
    var rawNanoseconds: [Double] = []
    var filteredNanoseconds: [Double] = []
    var allowedNanoseconds: [Double] = []
    var allowedIdle: [Double] = []
    var endToEnd: [Double] = []
    var threadRates: [Int: [Double]] = [1: [], 2: [], 4: []]
    let pools = [1: PostingThreads(count: 1), 2: PostingThreads(count: 2), 4: PostingThreads(count: 4)]
    for _ in 0..<31 {
        let raw1 = nanoseconds(per: batch) { for _ in 0..<batch { postRaw(rawCenter) } }
        let filteredPost = nanoseconds(per: batch) { for _ in 0..<batch { post(filteredCenter) } }
        filtered.append(filteredPost / raw1)
        rawNanoseconds.append(raw1)
        filteredNanoseconds.append(filteredPost)
        let raw2 = nanoseconds(per: batch) { for _ in 0..<batch { postRaw(rawCenter) } }
        let allowedPost = nanoseconds(per: batch) { for _ in 0..<batch { post(allowedCenter) } }
        allowed.append(allowedPost / raw2)
        allowedNanoseconds.append(allowedPost)
        allowedAggregator.waitUntilDelivered()
        let raw3 = nanoseconds(per: batch) { for _ in 0..<batch { postRaw(rawCenter) } }
        // 1,000 posts started with the delivery thread idle: the poster's own cost, a delivery
        // running beside it only at the end. At 1.8-4.3 us an allowed post (2026-11-27), the
        // 1,000 take longer than the 2 ms coalescing delay, so the last ones meet a drain.
        allowedIdle.append(
            nanoseconds(per: 1_000) {
                for _ in 0..<1_000 { post(allowedCenter) }
            } / raw3)
        allowedAggregator.waitUntilDelivered()
        let raw4 = nanoseconds(per: batch) { for _ in 0..<batch { postRaw(rawCenter) } }
        let bus = nanoseconds(per: batch) {
            for _ in 0..<batch { post(allowedCenter) }
            allowedAggregator.waitUntilDelivered()
        }
        endToEnd.append(raw4 / bus)
        for threads in [1, 2, 4] {
            let perThread = batch / threads
            let pool = pools[threads]!
            let raw = nanoseconds(per: perThread * threads) {
                pool.run { _ in for _ in 0..<perThread { postRaw(rawCenter) } }
            }
            let bus = nanoseconds(per: perThread * threads) {
                pool.run { _ in for _ in 0..<perThread { post(allowedCenter) } }
                allowedAggregator.waitUntilDelivered()
            }
            threadRates[threads]!.append(raw / bus)
        }
    }
    _ = filteredAggregator
    print(
        String(
            format: "ns a post (medians): raw %.0f, filtered out %.0f, allowed until return %.0f",
            median(rawNanoseconds), median(filteredNanoseconds), median(allowedNanoseconds)))
    print(String(format: "filtered-out post / raw post: %.2fx", median(filtered)))
    print(String(format: "allowed post until return / raw post: %.2fx", median(allowed)))
    print(String(format: "allowed post, 1,000 after an idle delivery thread / raw post: %.2fx", median(allowedIdle)))
    print(String(format: "end-to-end delivery rate / raw post rate, 1 thread in-line: %.2fx", median(endToEnd)))
    for threads in [1, 2, 4] {
        print(
            String(
                format: "end-to-end delivery rate / raw post rate, %d posting thread(s): %.2fx", threads,
                median(threadRates[threads]!)))
    }
    print("delivered", tracker.count, "dropped in flight", allowedAggregator.diagnostics.droppedInFlight)
}

let arguments = CommandLine.arguments
let mode = arguments.count > 1 ? arguments[1] : "allowed"
let count = arguments.count > 2 ? Int(arguments[2]) ?? 20_000 : 20_000
let center = NotificationCenter()
let started = Date()

switch mode {
case "raw":
    let observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { _ in }
    for _ in 0..<count { postRaw(center) }
    center.removeObserver(observer)
case "filtered", "allowed", "sync", "planned", "planned10k", "plannedsites":
    let catalog =
        mode == "planned" || mode == "plannedsites"
        ? plan(events: 10) : mode == "planned10k" ? plan(events: 10_000) : nil
    let (aggregator, tracker) = aggregator(
        on: center, allowing: mode != "filtered", delivery: mode == "sync" ? .synchronous : .asynchronous,
        plan: catalog)
    for _ in 0..<count { post(center) }
    aggregator.waitUntilDelivered()
    print("delivered", tracker.count, "dropped in flight", aggregator.diagnostics.droppedInFlight)
case "destinations3":
    // Issue 45: three destinations, each with a filter and one processor (an arg removed), the
    // delivery thread's cost per event against `allowed` (one plain tracker).
    var configuration = EventAggregator.Configuration()
    configuration.identityStore = .inMemory
    configuration.maximumInFlightEvents = .max
    let trackers = (0..<3).map { _ in CountingTracker() }
    let dropping = ClosureProcessor { event in
        var event = event
        event.args["position"] = nil
        return event
    }
    let destinations = trackers.enumerated().map { index, tracker in
        Destination(
            tracker, name: "vendor\(index)",
            filter: EventFilter(allow: ["feed/*", "checkout/*"], deny: ["feed/debug/*"]),
            processors: [dropping])
    }
    let aggregator = EventAggregator(
        center: center, filter: EventFilter(allow: ["feed/item_tapped"]), destinations: destinations,
        configuration: configuration)
    aggregator.start()
    for _ in 0..<count { post(center) }
    aggregator.waitUntilDelivered()
    print("delivered", trackers.map(\.count), "dropped in flight", aggregator.diagnostics.droppedInFlight)
case "rounds":
    // Like the end-to-end benchmarks: rounds of 1,000 posts, each waited for.
    let (aggregator, tracker) = aggregator(on: center, allowing: true, delivery: .asynchronous)
    for _ in 0..<count / 1_000 {
        for _ in 0..<1_000 { post(center) }
        aggregator.waitUntilDelivered()
    }
    print("delivered", tracker.count, "dropped in flight", aggregator.diagnostics.droppedInFlight)
case "rounds4":
    // Like the 4-thread end-to-end benchmark: rounds of 4 x 250 posts on 4 long-lived threads,
    // each waited for.
    let (aggregator, tracker) = aggregator(on: center, allowing: true, delivery: .asynchronous)
    let pool = PostingThreads(count: 4)
    for _ in 0..<count / 1_000 {
        pool.run { _ in for _ in 0..<250 { post(center) } }
        aggregator.waitUntilDelivered()
    }
    print("delivered", tracker.count, "dropped in flight", aggregator.diagnostics.droppedInFlight)
case "raw2":
    let observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { _ in }
    onThreads(2) { _ in for _ in 0..<count / 2 { postRaw(center) } }
    center.removeObserver(observer)
case "threads2":
    // Two posting threads, end to end (for a wall-clock profiler such as `perf record`).
    let (aggregator, tracker) = aggregator(on: center, allowing: true, delivery: .asynchronous)
    onThreads(2) { _ in for _ in 0..<count / 2 { post(center) } }
    aggregator.waitUntilDelivered()
    print("delivered", tracker.count, "dropped in flight", aggregator.diagnostics.droppedInFlight)
case "decode":
    let note = Notification(
        name: .measurementEvent, object: nil,
        userInfo: ["name": "feed/item_tapped", "args": ["item_id": "42", "position": 3]])
    var decoded = 0
    for _ in 0..<count where (try? MeasurementEvent(notification: note)) != nil { decoded += 1 }
    print("decoded", decoded)
case "interleaved":
    runInterleaved(batch: arguments.count > 2 ? count : 10_000)
default:
    print("usage: BusProfile raw|filtered|allowed|sync|rounds|rounds4|raw2|threads2|decode|interleaved [count]")
    exit(64)
}
print(mode, count, String(format: "%.0f ns/op", Date().timeIntervalSince(started) * 1e9 / Double(count)))
