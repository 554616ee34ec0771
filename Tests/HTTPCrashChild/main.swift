// The child process of the crash tests: tracks events into an HTTP tracker, printing each
// index once the call that hands it over has returned (the event is then "accepted"), until it
// is killed.
//
// Usage: http-crash-child <queue directory> <collector base URL> <first index> <count> [mode]
// where mode is
// - `track` (the default): `tracker.track` directly;
// - `aggregator-async`: `MeasurementEvent.post` through an aggregator with asynchronous delivery
//   (the post returns before the event is written);
// - `aggregator-async-paced`: the same, one post per millisecond (still far faster than people tap);
// - `aggregator-sync`: synchronous delivery (written before the post returns);
// - `server-sigterm`: `EventAggregator.Configuration.server`, posting from a thread until SIGTERM
//   (taken with `sigwait`), then `shutdown(deadline:)` (1 second): then prints `report <forwarded> <delivered>
//   <still queued> <dropped> <posted after shutdown>`, the last counted once the poster stopped,
//   and exits 0.
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

let arguments = CommandLine.arguments
guard arguments.count == 5 || arguments.count == 6, let base = URL(string: arguments[2]),
    let first = Int(arguments[3]), let count = Int(arguments[4])
else {
    FileHandle.standardError.write(Data("usage: http-crash-child <directory> <base URL> <first> <count> [mode]\n".utf8))
    exit(64)
}
let mode = arguments.count == 6 ? arguments[5] : "track"
if mode == "server-sigterm" {
    // SIGTERM blocked in every thread (they inherit this one's mask) before any is made, for
    // `sigwait` below: a process-directed signal then waits for it instead of ending the process.
    var terminate = sigset_t()
    sigemptyset(&terminate)
    sigaddset(&terminate, SIGTERM)
    pthread_sigmask(SIG_BLOCK, &terminate, nil)
}
var configuration = HTTPTracker.Configuration()
configuration.flushAt = 50
configuration.flushInterval = 0.2
configuration.retryPolicy = RetryPolicy(initialDelay: 0.05, maximumDelay: 0.2)
configuration.logHandler = { _ in }
let tracker = try HTTPTracker(
    encoder: SegmentEncoder(writeKey: "crash-test", baseURL: base),
    directory: URL(fileURLWithPath: arguments[1]), configuration: configuration)

@Sendable func accepted(_ index: Int) {
    // One write(2) per line: a line in the parent's pipe is complete or absent.
    let line = Array("\(index)\n".utf8)
    _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

switch mode {
case "track":
    for index in first..<(first + count) {
        try tracker.track(MeasurementEvent("crash/event", args: ["index": .int(index)]))
        accepted(index)
    }
    tracker.waitUntilDelivered(timeout: 30)
case "aggregator-async", "aggregator-async-paced", "aggregator-sync":
    var aggregatorConfiguration = EventAggregator.Configuration()
    aggregatorConfiguration.identityStore = .inMemory
    aggregatorConfiguration.delivery = mode == "aggregator-sync" ? .synchronous : .asynchronous
    let center = NotificationCenter()
    let aggregator = EventAggregator(
        center: center, filter: EventFilter(allow: ["crash/*"]), trackers: [tracker],
        configuration: aggregatorConfiguration)
    aggregator.start()
    for index in first..<(first + count) {
        MeasurementEvent.post("crash/event", args: ["index": index], to: center)
        accepted(index)
        if mode == "aggregator-async-paced" { usleep(1_000) }
    }
    aggregator.flush()
    tracker.waitUntilDelivered(timeout: 30)
case "server-sigterm":
    let center = NotificationCenter()
    // Posts wait for room as long as it takes: none is dropped for the in-flight bound.
    var server = EventAggregator.Configuration.server
    server.whenInFlightLimitIsReached = .wait(atMostSeconds: 3_600)
    let aggregator = EventAggregator(
        center: center, filter: EventFilter(allow: ["crash/*"]), trackers: [tracker], configuration: server)
    aggregator.start()
    let shutDown = LockedValue(false)
    let poster = Thread {
        for index in first..<(first + count) where !shutDown.withLock({ $0 }) {
            MeasurementEvent.post("crash/event", args: ["index": index], to: center)
            accepted(index)
        }
    }
    poster.start()
    var terminate = sigset_t()
    sigemptyset(&terminate)
    sigaddset(&terminate, SIGTERM)
    var received: Int32 = 0
    sigwait(&terminate, &received)
    let finished = DispatchSemaphore(value: 0)
    // Detached: top-level code is the main actor's, and the main thread waits below.
    Task.detached {
        let report = await aggregator.shutdown(deadline: Date().addingTimeInterval(1))
        // The poster's posts are refused now; once it stopped, their count is final.
        shutDown.withLock { $0 = true }
        while !poster.isFinished { usleep(1_000) }
        let dropped = report.dropped.reduce(0) { $0 + $1.count }
        let line = Array(
            "report \(report.forwarded) \(report.delivered) \(report.stillQueued) \(dropped) \(aggregator.diagnostics.postedAfterShutdown)\n"
                .utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        finished.signal()
    }
    finished.wait()
    exit(0)
default:
    FileHandle.standardError.write(
        Data(
            "unknown mode \(mode): expected track, aggregator-async, aggregator-async-paced, aggregator-sync or server-sigterm\n"
                .utf8))
    exit(64)
}
