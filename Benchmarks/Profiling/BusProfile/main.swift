import Foundation
import MeasurementEvents

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

func aggregator(on center: NotificationCenter, allowing: Bool, delivery: EventAggregator.Delivery) -> (EventAggregator, CountingTracker) {
    var configuration = EventAggregator.Configuration()
    configuration.delivery = delivery
    // Under valgrind the delivery thread hardly runs while the poster loops: with the default
    // in-flight bound most posts would be dropped, and measured as cheaper than they are.
    configuration.maximumInFlightEvents = .max
    let tracker = CountingTracker()
    let names: [EventPattern] = (0..<10).map { EventPattern(EventName("module\($0)/screen\($0)/tapped")) }
        + (0..<100).map { EventPattern(stringLiteral: "area\($0)/*") }
    let filter = EventFilter(allow: names + (allowing ? ["feed/item_tapped"] : []))
    let aggregator = EventAggregator(center: center, filter: filter, trackers: [tracker], configuration: configuration)
    aggregator.start()
    return (aggregator, tracker)
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
case "filtered", "allowed", "sync":
    let (aggregator, tracker) = aggregator(
        on: center, allowing: mode != "filtered", delivery: mode == "sync" ? .synchronous : .asynchronous)
    for _ in 0..<count { post(center) }
    aggregator.waitUntilDelivered()
    print("delivered", tracker.count, "dropped in flight", aggregator.diagnostics.droppedInFlight)
case "decode":
    let note = Notification(
        name: .measurementEvent, object: nil,
        userInfo: ["name": "feed/item_tapped", "args": ["item_id": "42", "position": 3]])
    var decoded = 0
    for _ in 0..<count where (try? MeasurementEvent(notification: note)) != nil { decoded += 1 }
    print("decoded", decoded)
default:
    print("usage: BusProfile raw|filtered|allowed|sync|decode [count]")
    exit(64)
}
print(mode, count, String(format: "%.0f ns/op", Date().timeIntervalSince(started) * 1e9 / Double(count)))
