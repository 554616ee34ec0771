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
//                    --endpoint http://127.0.0.1:4318 --directory /tmp/queue [--encoding json|protobuf]
//
// `server`: EventAggregator.Configuration.server and HTTPTracker.Configuration.server, each task
// posting with the async `post` (suspends for room, never dropped for the in-flight bound), the
// OTLP bodies in binary protobuf (`OTLPLogsEncoder(…, encoding: .protobuf)`, what a server sends
// its collector; `--encoding json` for JSON).
// `defaults`: 3.0.0's defaults, the default EventAggregator.Configuration with `.inMemory`
// identity and a default HTTPTracker.Configuration, each task posting with the synchronous
// `MeasurementEvent.post` (3.0.0 had no async post): a post over the in-flight bound is dropped
// and counted; bodies in JSON (3.0.0 wrote only JSON).
//
// Each task handles "requests" of 100 posts, each inside a `MeasurementRequestContext` of its
// own user (`user-<task>-<request>`); the encoder the tracker sends with checks, for every event
// it encodes, that its user is its own request's (read back from the event's `route` and
// `sequence` args), and with `--check-bodies` also reads every request body (JSON or protobuf,
// before compression) and checks each log record's `user.id` attribute the same way.
//
// It prints `key value` lines: what was posted, the aggregator's and the tracker's counters,
// the attribution check, VmRSS every 5 seconds, and the shutdown report. The collector's count
// is the script's.

struct Options {
    var configuration = "server"
    var seconds = 60.0
    var tasks = 8
    var endpoint = "http://127.0.0.1:4318"
    var directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("server-throughput-\(getpid())").path
    var shutdownSeconds = 120.0
    var checksBodies = false
    var encoding: OTLPLogsEncoder.BodyEncoding?
    var requestsInFlight: Int?

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            if flag == "--check-bodies" {
                checksBodies = true
                continue
            }
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
            case "--requests-in-flight": requestsInFlight = Int(Self.number(value, flag))
            case "--encoding":
                guard let encoding = OTLPLogsEncoder.BodyEncoding(rawValue: value) else {
                    Self.usage("--encoding is json or protobuf, not \(value)")
                }
                self.encoding = encoding
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
                    + "[--tasks N] [--endpoint URL] [--directory PATH] [--shutdown-seconds N] [--check-bodies]\n"
                    + "       [--encoding json|protobuf] [--requests-in-flight N]\n").utf8))
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

/// The user of the request that posted the `sequence`th event of task `task`.
func expectedUser(task: Int, sequence: Int) -> String { "user-\(task)-\(sequence / postsPerRequest)" }
let postsPerRequest = 100

/// Which events were checked (one bit per task and sequence, so that a request encoded again
/// counts once) and which carried another request's user.
final class AttributionCheck: @unchecked Sendable {
    // @unchecked: all state is behind `lock`.
    private let lock = NSLock()
    private var seen: [[UInt64]]
    private(set) var checked = 0
    private(set) var misattributed = 0
    private(set) var bodyRecords = 0
    private(set) var bodyMisattributed = 0
    private(set) var problems: [String] = []

    /// Each task's last request and its user, made once a request rather than once an event
    /// (the check is not what is measured).
    private var lastExpected: [(request: Int, user: String)]

    init(tasks: Int) {
        seen = Array(repeating: [], count: tasks)
        lastExpected = Array(repeating: (-1, ""), count: tasks)
    }

    /// Runs `body` holding the lock once, for a request's notes rather than for each event
    /// (the check is not what is measured).
    func locked<Result>(_ body: (AttributionCheck) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(self)
    }

    /// Notes the event of `task`'s `sequence` carrying `user`.
    func note(task: Int, sequence: Int, user: String?, inBody: Bool = false) {
        locked { $0.noteLocked(task: task, sequence: sequence, user: user, inBody: inBody) }
    }

    /// `note`, with the lock held.
    func noteLocked(task: Int, sequence: Int, user: String?, inBody: Bool = false) {
        let request = sequence / postsPerRequest
        if lastExpected[task].request != request {
            lastExpected[task] = (request, expectedUser(task: task, sequence: sequence))
        }
        let wrong = user != lastExpected[task].user
        if inBody {
            bodyRecords += 1
            if wrong { bodyMisattributed += 1 }
        } else {
            let word = sequence / 64
            if seen[task].count <= word { seen[task] += Array(repeating: 0, count: word + 1024 - seen[task].count) }
            let bit = UInt64(1) << UInt64(sequence % 64)
            if seen[task][word] & bit == 0 {
                seen[task][word] |= bit
                checked += 1
            }
            if wrong { misattributed += 1 }
        }
        if wrong, problems.count < 5 {
            problems.append(
                "task \(task) event \(sequence) carries \(user ?? "no user"), not \(expectedUser(task: task, sequence: sequence))"
            )
        }
    }

    func problem(_ text: String) {
        locked { $0.problemLocked(text) }
    }

    /// `problem`, with the lock held.
    func problemLocked(_ text: String) {
        if problems.count < 5 { problems.append(text) }
        bodyMisattributed += 1
    }
}

/// The OTLP encoder, checking the user of each event it encodes (and, with `checksBodies`, of
/// each record in the body it makes).
struct AttributionCheckingEncoder: BatchEncoder {
    let base: OTLPLogsEncoder
    let check: AttributionCheck
    let checksBodies: Bool

    var endpoint: URL { base.endpoint }
    var limits: BatchLimits { base.limits }
    var acceptsGzipBodies: Bool { base.acceptsGzipBodies }
    var defaultPurposes: Set<ConsentPurpose> { base.defaultPurposes }
    func retries(_ response: HTTPResponse) -> Bool { base.retries(response) }
    func partialRefusal(in response: HTTPResponse, ofEventCount count: Int) -> PartialRefusal? {
        base.partialRefusal(in: response, ofEventCount: count)
    }

    func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch {
        // Read in place: `for queued in events` copied each event (the check is not what is measured).
        check.locked { check in
            events.withUnsafeBufferPointer { events in
                for index in events.indices {
                    guard
                        let (task, sequence) = Self.origin(
                            route: events[index].event.args["route"], sequence: events[index].event.args["sequence"])
                    else {
                        check.problemLocked("an event without its route and sequence: \(events[index].event.args)")
                        continue
                    }
                    check.noteLocked(task: task, sequence: sequence, user: events[index].event.userID)
                }
            }
        }
        let encoded = base.encode(events, context: context)
        if checksBodies, let body = encoded.request?.body { checkBody(body) }
        return encoded
    }

    static func origin(route: EventValue?, sequence: EventValue?) -> (task: Int, sequence: Int)? {
        guard case .string(let route) = route, let task = Int(route.dropFirst("/route/".count)),
            case .int(let sequence) = sequence
        else { return nil }
        return (task, sequence)
    }

    /// Reads the OTLP body and checks each log record's `user.id` against its route and sequence.
    private func checkBody(_ body: [UInt8]) {
        guard let records = base.encoding == .protobuf ? Self.protobufRecords(body) : Self.jsonRecords(body) else {
            return check.problem("a body that is not OTLP \(base.encoding.rawValue)")
        }
        for values in records {
            let sequence = values["sequence"].flatMap { Int($0) }
            guard let route = values["route"], let sequence,
                let (task, _) = Self.origin(route: .string(route), sequence: .int(sequence))
            else {
                check.problem("a log record without its route and sequence attributes")
                continue
            }
            check.note(task: task, sequence: sequence, user: values["user.id"], inBody: true)
        }
    }

    /// Each log record's string and int attributes, as text, from an OTLP JSON body.
    private static func jsonRecords(_ body: [UInt8]) -> [[String: String]]? {
        guard let root = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let resources = root["resourceLogs"] as? [[String: Any]]
        else { return nil }
        var records: [[String: String]] = []
        for resource in resources {
            for scope in resource["scopeLogs"] as? [[String: Any]] ?? [] {
                for record in scope["logRecords"] as? [[String: Any]] ?? [] {
                    var values: [String: String] = [:]
                    for attribute in record["attributes"] as? [[String: Any]] ?? [] {
                        guard let key = attribute["key"] as? String, let value = attribute["value"] as? [String: Any]
                        else { continue }
                        values[key] = (value["stringValue"] ?? value["intValue"]).map { "\($0)" }
                    }
                    records.append(values)
                }
            }
        }
        return records
    }

    /// Each log record's string and int attributes, as text, from an OTLP protobuf body:
    /// ExportLogsServiceRequest.resource_logs (1) → ResourceLogs.scope_logs (2) →
    /// ScopeLogs.log_records (2) → LogRecord.attributes (6) → KeyValue { key (1), value (2) →
    /// AnyValue { string_value (1), int_value (3) } } (opentelemetry-proto).
    private static func protobufRecords(_ body: [UInt8]) -> [[String: String]]? {
        var records: [[String: String]] = []
        for resource in Protobuf.fields(body[...], 1) ?? [] {
            for scope in Protobuf.fields(resource, 2) ?? [] {
                for record in Protobuf.fields(scope, 2) ?? [] {
                    var values: [String: String] = [:]
                    for attribute in Protobuf.fields(record, 6) ?? [] {
                        guard let key = Protobuf.fields(attribute, 1)?.first,
                            let value = Protobuf.fields(attribute, 2)?.first
                        else { return nil }
                        if let text = Protobuf.fields(value, 1)?.first {
                            values[String(decoding: key, as: UTF8.self)] = String(decoding: text, as: UTF8.self)
                        } else if let number = Protobuf.varints(value, 3).first {
                            values[String(decoding: key, as: UTF8.self)] = String(Int64(bitPattern: number))
                        }
                    }
                    records.append(values)
                }
            }
        }
        return records
    }
}

/// Just enough of protobuf's wire format to read a body back (protobuf.dev/programming-guides/encoding/).
enum Protobuf {
    /// Walks the fields of `message`, calling `visit` with each field's number, wire type, and
    /// its varint value or its bytes; false when the message is malformed.
    static func walk(_ message: ArraySlice<UInt8>, _ visit: (UInt64, UInt64, UInt64, ArraySlice<UInt8>) -> Void) -> Bool
    {
        var index = message.startIndex
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < message.endIndex, shift < 64 {
                let byte = message[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }
        while index < message.endIndex {
            guard let tag = varint() else { return false }
            switch tag & 7 {
            case 0:
                guard let value = varint() else { return false }
                visit(tag >> 3, 0, value, [])
            case 1, 5:
                let width = tag & 7 == 1 ? 8 : 4
                guard message.endIndex - index >= width else { return false }
                visit(tag >> 3, tag & 7, 0, message[index..<(index + width)])
                index += width
            case 2:
                guard let length = varint(), length <= UInt64(message.endIndex - index) else { return false }
                visit(tag >> 3, 2, 0, message[index..<(index + Int(length))])
                index += Int(length)
            default: return false
            }
        }
        return true
    }

    /// The length-delimited fields numbered `number`; `nil` when the message is malformed.
    static func fields(_ message: ArraySlice<UInt8>, _ number: UInt64) -> [ArraySlice<UInt8>]? {
        var found: [ArraySlice<UInt8>] = []
        let wellFormed = walk(message) { field, type, _, bytes in
            if field == number, type == 2 { found.append(bytes) }
        }
        return wellFormed ? found : nil
    }

    /// The varint fields numbered `number`.
    static func varints(_ message: ArraySlice<UInt8>, _ number: UInt64) -> [UInt64] {
        var found: [UInt64] = []
        _ = walk(message) { field, type, value, _ in
            if field == number, type == 0 { found.append(value) }
        }
        return found
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let isServer = options.configuration == "server"
try? FileManager.default.removeItem(atPath: options.directory)

let attribution = AttributionCheck(tasks: options.tasks)
let encoder = AttributionCheckingEncoder(
    base: OTLPLogsEncoder(
        baseURL: URL(string: options.endpoint)!, encoding: options.encoding ?? (isServer ? .protobuf : .json)),
    check: attribution,
    checksBodies: options.checksBodies)
let tracker: HTTPTracker
var trackerConfiguration = isServer ? HTTPTracker.Configuration.server : HTTPTracker.Configuration()
if let requestsInFlight = options.requestsInFlight { trackerConfiguration.maximumRequestsInFlight = requestsInFlight }
do {
    tracker = try HTTPTracker(
        encoder: encoder, directory: URL(fileURLWithPath: options.directory), configuration: trackerConfiguration)
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
print("encoding \(encoder.base.encoding.rawValue)")
print("requests_in_flight \(trackerConfiguration.maximumRequestsInFlight)")
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
            requests: while true {
                // A request of its own user: every event posted inside carries it.
                let context = MeasurementRequestContext(userID: expectedUser(task: task, sequence: posted))
                for _ in 0..<postsPerRequest {
                    // The clock is read every 64 posts: it is not what is measured.
                    if posted & 63 == 0, now() >= stopAt { break requests }
                    let args: [String: any EventValueConvertible] = [
                        "route": route, "status": 200, "duration_ms": 12.5, "sequence": posted,
                    ]
                    if isServer {
                        await context.run { await aggregator.post("bench/request_handled", args: args) }
                    } else {
                        context.run { MeasurementEvent.post("bench/request_handled", args: args, to: center) }
                    }
                    posted += 1
                }
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
print("tracker_waited_for_room \(trackerDiagnostics.waitedForRoom)")
print("tracker_waits_timed_out \(trackerDiagnostics.waitsForRoomTimedOut)")
print("tracker_written_over_cap_at_shutdown \(trackerDiagnostics.writtenOverCapAtShutdown)")
print("attribution_checked \(attribution.checked)")
print("attribution_misattributed \(attribution.misattributed)")
print("attribution_body_records \(attribution.bodyRecords)")
print("attribution_body_misattributed \(attribution.bodyMisattributed)")
for problem in attribution.problems { print("attribution_problem \(problem)") }
print("rss_kb_end \(residentKilobytes())")
// The process's CPU (every thread, user and system) per event delivered, over the whole run.
var cpuTime = timespec()
clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpuTime)
let cpuSeconds = Double(cpuTime.tv_sec) + Double(cpuTime.tv_nsec) / 1e9
print(String(format: "cpu_seconds %.2f", cpuSeconds))
print(
    String(format: "cpu_microseconds_per_event %.2f", cpuSeconds * 1e6 / Double(max(1, trackerDiagnostics.delivered))))
print("shutdown_delivered_everything \(report.deliveredEverything)")
print("shutdown_report \(report.description.replacingOccurrences(of: "\n", with: " | "))")
try? FileManager.default.removeItem(atPath: options.directory)
