import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsOTLP

// Not a benchmark of package-benchmark's kind: a driver that posts into a real OTLP/HTTP
// collector on loopback, for `Scripts/server_throughput.sh` (which starts rotel, counts what it
// received and computes the loss). See Benchmarks/README.md, "Server throughput".
//
//   ServerThroughput --configuration server|defaults --seconds 60 --tasks 8
//                    --endpoint http://127.0.0.1:4318 --directory /tmp/queue
//
// `server`: EventAggregator.Configuration.server and HTTPTracker.Configuration.server, each task
// posting with the async `post` (suspends for room, never dropped for the in-flight bound).
// `defaults`: 3.0.0's defaults, the default EventAggregator.Configuration with `.inMemory`
// identity and a default HTTPTracker.Configuration, each task posting with the synchronous
// `MeasurementEvent.post` (3.0.0 had no async post): a post over the in-flight bound is dropped
// and counted.
//
// It prints `key value` lines: what was posted, the aggregator's and the tracker's counters,
// VmRSS every 5 seconds, and the shutdown report. The collector's count is the script's.

struct Options {
    var configuration = "server"
    var seconds = 60.0
    var tasks = 8
    var endpoint = "http://127.0.0.1:4318"
    var directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("server-throughput-\(getpid())").path
    var shutdownSeconds = 120.0

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { Self.usage("\(flag) needs a value") }
            switch flag {
            case "--configuration":
                guard ["server", "defaults"].contains(value) else {
                    Self.usage("--configuration is server or defaults, not \(value)")
                }
                configuration = value
            case "--seconds": seconds = Self.number(value, flag)
            case "--tasks": tasks = Int(Self.number(value, flag))
            case "--endpoint": endpoint = value
            case "--directory": directory = value
            case "--shutdown-seconds":
                shutdownSeconds = Self.number(value, flag)
            default: Self.usage("unknown option \(flag)")
            }
        }
    }

    static func number(_ value: String, _ flag: String) -> Double {
        guard let number = Double(value), number > 0 else { usage("\(flag) takes a positive number, not \(value)") }
        return number
    }

    static func usage(_ problem: String) -> Never {
        FileHandle.standardError.write(
            Data(
                ("Error: \(problem)\nUsage: ServerThroughput [--configuration server|defaults] [--seconds N] "
                    + "[--tasks N] [--endpoint URL] [--directory PATH] [--shutdown-seconds N]\n").utf8))
        exit(64)
    }
}

/// Resident memory of this process in kB, from /proc/self/status (VmRSS); 0 where there is none.
func residentKilobytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
    return 0
}

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// Per-task post counts, summed at the end.
final class PostCounts: @unchecked Sendable {
    // @unchecked: each task writes only its own slot; read after every task ended.
    var counts: [Int]
    init(tasks: Int) { counts = Array(repeating: 0, count: tasks) }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let isServer = options.configuration == "server"
try? FileManager.default.removeItem(atPath: options.directory)

let encoder = OTLPLogsEncoder(baseURL: URL(string: options.endpoint)!)
let tracker: HTTPTracker
do {
    tracker = try HTTPTracker(
        encoder: encoder, directory: URL(fileURLWithPath: options.directory),
        configuration: isServer ? .server : HTTPTracker.Configuration())
} catch {
    print("error \(error)")
    exit(1)
}
var configuration: EventAggregator.Configuration
if isServer {
    configuration = .server
} else {
    configuration = EventAggregator.Configuration()
    configuration.identityStore = .inMemory
}
let center = NotificationCenter()
let aggregator = EventAggregator(
    center: center, filter: EventFilter(allow: ["bench/*"]),
    destinations: [Destination(tracker, name: "collector")], configuration: configuration)
aggregator.start()

print("configuration \(options.configuration)")
print("tasks \(options.tasks)")
print("seconds \(options.seconds)")

// VmRSS and the tracker's delivered count every 5 seconds while posting.
let startTime = now()
let sampling = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "rss-sampler"))
sampling.schedule(deadline: .now(), repeating: 5)
sampling.setEventHandler {
    let diagnostics = tracker.diagnostics
    print(
        String(
            format: "sample t=%.1f rss_kb=%d tracker_delivered=%d tracker_queued=%d aggregator_forwarded=%d",
            now() - startTime, residentKilobytes(), diagnostics.delivered, diagnostics.queued,
            aggregator.diagnostics.forwarded))
    fflush(nil)
}
sampling.resume()

let counts = PostCounts(tasks: options.tasks)
let stopAt = startTime + options.seconds
await withTaskGroup(of: Void.self) { group in
    for task in 0..<options.tasks {
        group.addTask {
            var posted = 0
            let route = "/route/\(task)"
            while true {
                // The clock is read every 64 posts: it is not what is measured.
                if posted & 63 == 0, now() >= stopAt { break }
                let args: [String: any EventValueConvertible] = [
                    "route": route, "status": 200, "duration_ms": 12.5, "sequence": posted,
                ]
                if isServer {
                    await aggregator.post("bench/request_handled", args: args)
                } else {
                    MeasurementEvent.post("bench/request_handled", args: args, to: center)
                }
                posted += 1
            }
            counts.counts[task] = posted
        }
    }
}
let postingSeconds = now() - startTime
let posted = counts.counts.reduce(0, +)
print("posted \(posted)")
print(String(format: "posting_seconds %.2f", postingSeconds))
print(String(format: "posted_per_second %.0f", Double(posted) / postingSeconds))
print("tracker_delivered_when_posting_ended \(tracker.diagnostics.delivered)")
fflush(nil)

let report = await aggregator.shutdown(deadline: Date().addingTimeInterval(options.shutdownSeconds))
sampling.cancel()
let endToEndSeconds = now() - startTime
let diagnostics = aggregator.diagnostics
let trackerDiagnostics = tracker.diagnostics
print(String(format: "end_to_end_seconds %.2f", endToEndSeconds))
print(String(format: "delivered_per_second_end_to_end %.0f", Double(trackerDiagnostics.delivered) / endToEndSeconds))
print("aggregator_received \(diagnostics.received)")
print("aggregator_forwarded \(diagnostics.forwarded)")
print("aggregator_dropped_in_flight \(diagnostics.droppedInFlight)")
print("aggregator_posts_that_waited \(diagnostics.postsThatWaitedForRoom)")
print("aggregator_posts_that_suspended \(diagnostics.postsThatSuspendedForRoom)")
print("aggregator_posted_after_shutdown \(diagnostics.postedAfterShutdown)")
print("tracker_accepted \(trackerDiagnostics.accepted)")
print("tracker_delivered \(trackerDiagnostics.delivered)")
print("tracker_queued \(trackerDiagnostics.queued)")
print("tracker_dropped_at_cap \(trackerDiagnostics.droppedAtCap)")
print("tracker_rejected_by_server \(trackerDiagnostics.rejectedByServer)")
print("tracker_requests \(trackerDiagnostics.requests)")
print("tracker_retries \(trackerDiagnostics.retries)")
print("tracker_failed_writes \(trackerDiagnostics.failedWrites)")
print("rss_kb_end \(residentKilobytes())")
print("shutdown_delivered_everything \(report.deliveredEverything)")
print("shutdown_report \(report.description.replacingOccurrences(of: "\n", with: " | "))")
try? FileManager.default.removeItem(atPath: options.directory)
