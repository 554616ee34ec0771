// The outage run of issue 49 ("bad input and faults"): a server's aggregator and tracker in their
// server configurations, 8 tasks posting as fast as `post` lets them (the async post, which
// suspends for room), into a loopback collector that works, then stalls (holds every request
// unanswered until the stall ends), then answers 503 for a while, then works again. Every
// `windowSeconds` it prints what was posted and delivered in the window, the posts that
// suspended for room, the tracker's queue and the process's resident memory; at the end it shuts
// the aggregator down and counts, by each event's task and index (its args), what the collector
// kept.
//
// Usage: http-outage-child [stall=30] [unavailable=10] [before=10] [after=10]
// (seconds of each phase). Prints one line per window, then `posted=… delivered=… lost=…`, and
// exits 0 when nothing was lost, 1 otherwise, 64 on a usage error.
import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

let phases = CommandLine.arguments.dropFirst().map { Double($0) }
guard phases.count <= 4, phases.allSatisfy({ ($0 ?? -1) >= 0 }) else {
    FileHandle.standardError.write(
        Data("usage: http-outage-child [stall=30] [unavailable=10] [before=10] [after=10]\n".utf8))
    exit(64)
}
func phase(_ index: Int, default value: Double) -> Double { index < phases.count ? phases[index]! : value }
let stall = phase(0, default: 30)
let unavailable = phase(1, default: 10)
let before = phase(2, default: 10)
let after = phase(3, default: 10)
let tasks = 8
let windowSeconds = 5.0

/// What the collector kept (answered 200 for), by each event's task and index, and the requests it
/// stalled or refused.
final class Tally: @unchecked Sendable {
    // @unchecked: every property is behind `lock`.
    private let lock = NSLock()
    private var ids = Set<Int64>()
    private var stalled = 0
    private var refused = 0
    let start = Date()
    let stallStart: Date
    let stallEnd: Date
    let unavailableEnd: Date

    init(before: Double, stall: Double, unavailable: Double) {
        stallStart = start.addingTimeInterval(before)
        stallEnd = stallStart.addingTimeInterval(stall)
        unavailableEnd = stallEnd.addingTimeInterval(unavailable)
    }

    func reply(to request: LoopbackCollector.Request) -> LoopbackCollector.Reply {
        let now = Date()
        if now >= stallStart, now < stallEnd {
            // Held until the stall ends, then dropped unanswered: the client's timeout (or the
            // dropped connection) decides; nothing it sent is kept.
            lock.withLock { stalled += 1 }
            var reply = LoopbackCollector.Reply.dropConnection
            reply.delay = stallEnd.timeIntervalSince(now)
            return reply
        }
        if now >= stallEnd, now < unavailableEnd {
            lock.withLock { refused += 1 }
            return LoopbackCollector.Reply(status: 503, headers: ["Retry-After": "1"])
        }
        let kept = Self.keys(request.body)
        lock.withLock { ids.formUnion(kept) }
        return .ok
    }

    var summary: (ids: Set<Int64>, stalled: Int, refused: Int) { lock.withLock { (ids, stalled, refused) } }

    /// An event's key: its task and its index.
    static func key(task: Int, index: Int) -> Int64 { Int64(task) << 40 | Int64(index) }

    /// The keys of the events of a Segment batch.
    private static func keys(_ body: [UInt8]) -> [Int64] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let batch = object["batch"] as? [[String: Any]]
        else { return [] }
        return batch.compactMap { event in
            guard let properties = event["properties"] as? [String: Any], let task = properties["task"] as? Int,
                let index = properties["index"] as? Int
            else { return nil }
            return key(task: task, index: index)
        }
    }
}

/// The process's resident memory in MB (Linux's /proc; 0 elsewhere).
func residentMegabytes() -> Int {
    #if os(Linux)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    #else
        return 0
    #endif
}

let tally = Tally(before: before, stall: stall, unavailable: unavailable)
let collector = LoopbackCollector()
collector.respond { tally.reply(to: $0) }
// The tally keeps what it needs: kept requests would grow this process's memory, measured here.
collector.keepRequests(false)
try collector.start()

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("http-outage-child-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: directory) }
var trackerConfiguration = HTTPTracker.Configuration.server
trackerConfiguration.retryPolicy = RetryPolicy(initialDelay: 0.2, maximumDelay: 2)
trackerConfiguration.logHandler = { _ in }
let tracker = try HTTPTracker(
    encoder: SegmentEncoder(writeKey: "outage-run", baseURL: collector.baseURL), directory: directory,
    configuration: trackerConfiguration)
let center = NotificationCenter()
let aggregator = EventAggregator(
    center: center, filter: .allowAll, trackers: [tracker], configuration: .server)
aggregator.start()

/// How many events each task posted (its `post` returned): indices 0 up to it.
let posted = LockedValue<[Int: Int]>([:])
let postsInWindow = AtomicCounter()
let stopPosting = AtomicCounter()
let postingEnd = tally.unavailableEnd.addingTimeInterval(after)

/// Each task posts until told to stop, each event numbered.
let posting = Task {
    await withTaskGroup(of: (Int, Int).self) { group in
        for task in 0..<tasks {
            group.addTask {
                var index = 0
                while stopPosting.value == 0 {
                    await aggregator.post("outage/event", args: ["task": task, "index": index])
                    postsInWindow.add(1)
                    index += 1
                }
                return (task, index)
            }
        }
        for await (task, count) in group { posted.withLock { $0[task] = count } }
    }
}

var deliveredBefore = 0
var window = 0
while Date() < postingEnd {
    try await Task.sleep(nanoseconds: UInt64(min(windowSeconds, max(0.01, postingEnd.timeIntervalSinceNow)) * 1e9))
    window += 1
    let posts = postsInWindow.exchange(0)
    let diagnostics = tracker.diagnostics
    let seconds = Date().timeIntervalSince(tally.start)
    let phaseName =
        seconds <= before
        ? "working" : seconds <= before + stall ? "stalled" : seconds <= before + stall + unavailable ? "503" : "healed"
    print(
        String(
            format: "t=%5.1fs %-8@ posted/s=%7.0f delivered/s=%7.0f queued=%8d suspended=%8d rss=%4dMB",
            seconds, phaseName as NSString, Double(posts) / windowSeconds,
            Double(diagnostics.delivered - deliveredBefore) / windowSeconds, diagnostics.queued,
            aggregator.diagnostics.postsThatSuspendedForRoom, residentMegabytes()))
    deliveredBefore = diagnostics.delivered
}
stopPosting.store(1)
await posting.value
let report = await aggregator.shutdown(deadline: Date().addingTimeInterval(120))
let (kept, stalledRequests, refusedRequests) = tally.summary
let counts = posted.withLock { $0 }
let all = counts.flatMap { task, count in (0..<count).map { Tally.key(task: task, index: $0) } }
let lost = Set(all).subtracting(kept)
print(
    "posted=\(all.count) delivered=\(kept.count) lost=\(lost.count) stalledRequests=\(stalledRequests) "
        + "refusedRequests=\(refusedRequests) droppedInFlight=\(aggregator.diagnostics.droppedInFlight) "
        + "suspended=\(aggregator.diagnostics.postsThatSuspendedForRoom) report: \(report)")
collector.stop()
exit(lost.isEmpty ? 0 : 1)
