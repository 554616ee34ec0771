// The fault run of issue 49 (point 4): 8 threads track events into an HTTPTracker for a while
// against a loopback collector that fails 30 % of requests (drops the connection unanswered,
// answers garbage, resets mid-reply, refuses with 500 or 503), then heals; the tracker must
// deliver every event, counted on the server by event id (Segment's messageId).
//
// The process crashing is the failure this run looks for (FoundationNetworking's URLSession
// died with SIGSEGV in libdispatch in 1 of 5 such runs): the parent sees it as a signal.
//
// Usage: http-fault-child <seconds> [own|urlsession] [requests-in-flight]
// - own (the default): the tracker's default transport, which on Linux sends plain http through
//   the package's own HTTP/1.1 client;
// - urlsession: a URLSessionTransport, for comparison;
// - requests-in-flight: the tracker's maximumRequestsInFlight (1 by default; the server
//   configuration's 2 sends the next request while the collector answers the one before).
// Prints one line, `posted=… delivered=… lost=… …`, and exits 0 when nothing was lost, 1
// otherwise, 64 on a usage error.
import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

let arguments = CommandLine.arguments
guard (2...4).contains(arguments.count), let seconds = Double(arguments[1]), seconds > 0,
    arguments.count == 2 || ["own", "urlsession"].contains(arguments[2]),
    arguments.count < 4 || (Int(arguments[3]) ?? 0) >= 1
else {
    FileHandle.standardError.write(
        Data("usage: http-fault-child <seconds> [own|urlsession] [requests-in-flight]\n".utf8))
    exit(64)
}
let threads = 8
/// Each thread tracks one event, then waits this long: about 8,000 events a second in all.
let pauseMicroseconds: UInt32 = 1_000

/// What the collector saw: the ids it accepted (answered 200 for) and the faults it played.
final class Tally: @unchecked Sendable {
    // @unchecked: every property is behind `lock`.
    private let lock = NSLock()
    private var ids = Set<String>()
    private var accepted = 0
    private var faults: [String: Int] = [:]
    private var healed = false

    func heal() { lock.withLock { healed = true } }

    /// The reply to `request`: a fault for 30 % of requests until healed, otherwise 200.
    func reply(to request: LoopbackCollector.Request) -> LoopbackCollector.Reply {
        let fault: (String, LoopbackCollector.Reply)?
        switch lock.withLock({ healed }) ? 100 : Int.random(in: 0..<100) {
        case 0..<8: fault = ("dropped", .dropConnection)
        case 8..<14: fault = ("garbage", .garbage())
        case 14..<18: fault = ("reset", .reset(afterBytes: 40, body: "{\"code\":200}"))
        case 18..<24: fault = ("500", .status(500))
        case 24..<30: fault = ("503", LoopbackCollector.Reply(status: 503, headers: ["Retry-After": "0"]))
        default: fault = nil
        }
        if let (name, reply) = fault {
            lock.withLock { faults[name, default: 0] += 1 }
            return reply
        }
        let received = Self.messageIDs(request.body)
        lock.withLock {
            accepted += 1
            ids.formUnion(received)
        }
        return .ok
    }

    var summary: (ids: Set<String>, accepted: Int, faults: [String: Int]) { lock.withLock { (ids, accepted, faults) } }

    private static func messageIDs(_ body: [UInt8]) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let batch = object["batch"] as? [[String: Any]]
        else { return [] }
        return batch.compactMap { $0["messageId"] as? String }
    }
}

let tally = Tally()
let collector = LoopbackCollector()
collector.respond { tally.reply(to: $0) }
// The tally keeps what it needs (the run lasts up to minutes at thousands of events a second).
collector.keepRequests(false)
try collector.start()

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("http-fault-child-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: directory) }
var configuration = HTTPTracker.Configuration()
configuration.flushAt = 100
configuration.flushInterval = 0.2
configuration.requestTimeout = 5
configuration.retryPolicy = RetryPolicy(initialDelay: 0.05, maximumDelay: 0.5)
configuration.maximumQueuedEvents = 10_000_000
configuration.logHandler = { _ in }
if arguments.count == 4, let requestsInFlight = Int(arguments[3]) {
    configuration.maximumRequestsInFlight = requestsInFlight
}
if arguments.count >= 3 && arguments[2] == "urlsession" {
    configuration.transport = URLSessionTransport(requestTimeout: 5)
}
let tracker = try HTTPTracker(
    encoder: SegmentEncoder(writeKey: "fault-run", baseURL: collector.baseURL), directory: directory,
    configuration: configuration)

let posted = LockedValue<[String]>([])
let failedTracks = LockedValue(0)
let deadline = Date().addingTimeInterval(seconds)
let group = DispatchGroup()
for thread in 0..<threads {
    group.enter()
    Thread {
        var ids: [String] = []
        var index = 0
        while Date() < deadline {
            let event = MeasurementEvent("fault/event", args: ["thread": .int(thread), "index": .int(index)])
            do {
                try tracker.track(event)
                ids.append(event.id.uuidString)
            } catch {
                failedTracks.withLock { $0 += 1 }
            }
            index += 1
            usleep(pauseMicroseconds)
        }
        posted.withLock { $0.append(contentsOf: ids) }
        group.leave()
    }.start()
}
group.wait()
tally.heal()
let drained = tracker.waitUntilDelivered(timeout: 120)
let (delivered, accepted, faults) = tally.summary
let all = posted.withLock { $0 }
let lost = Set(all).subtracting(delivered)
let queued = tracker.diagnostics.queued
let faultText = faults.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
print(
    "posted=\(all.count) delivered=\(delivered.count) lost=\(lost.count) queued=\(queued) drained=\(drained) "
        + "failedTracks=\(failedTracks.withLock { $0 }) requestsAccepted=\(accepted) requests=\(collector.requestsReceived) "
        + "connections=\(collector.connectionsAccepted) faults: \(faultText)")
collector.stop()
exit(lost.isEmpty && failedTracks.withLock { $0 } == 0 ? 0 : 1)
