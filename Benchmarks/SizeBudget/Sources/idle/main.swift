// The idle cost (issue 34's table): the one-event app's setup, an aggregator and an HTTPTracker
// with the Segment encoder in their default settings, started (after posting some events, to a
// collector that refuses connections) and then left alone; prints the process's CPU time (user
// and system, every thread) over the wait. Not one of the measured apps.
//
// Usage: idle <queue directory> [seconds, 60 by default] [events posted first, 0 by default]
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

let arguments = CommandLine.arguments
let directory = URL(
    fileURLWithPath: arguments.count > 1 ? arguments[1] : NSTemporaryDirectory() + "size-budget-idle")
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 60 : 60
let events = arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0

let segment = try HTTPTracker(
    encoder: SegmentEncoder(writeKey: "size-budget", baseURL: URL(string: "http://127.0.0.1:9")!),
    directory: directory)
let aggregator = EventAggregator(filter: EventFilter(allow: ["app/*"]), trackers: [segment])
aggregator.start()
for index in 0..<events { MeasurementEvent.post("app/started", args: ["index": index]) }
aggregator.waitUntilDelivered()

/// The process's CPU time so far (user and system, every thread), in seconds.
func cpuSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

let start = cpuSeconds()
Thread.sleep(forTimeInterval: seconds)
let used = (cpuSeconds() - start) * 1_000
print(String(format: "CPU over %.0f s idle: %.1f ms (%.2f ms a minute)", seconds, used, used * 60 / seconds))
