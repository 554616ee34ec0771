import Foundation

/// Plays Amplitude's ingestion endpoints with the limits Amplitude documents, for tests that
/// need a server behaving as Amplitude does: `/2/httpapi` (HTTP V2,
/// amplitude.com/docs/apis/analytics/http-v2, "Upload limit") and `/batch` (Batch Event Upload,
/// amplitude.com/docs/apis/analytics/batch-event-upload, "Limits and considerations").
///
/// - A request of more than 2,000 events (HTTP V2), or whose body is over 1 MB (HTTP V2) or 20 MB
///   (`/batch`) after gzip is undone, gets 413 and nothing is ingested.
/// - An event without `event_type`, or without a `device_id` or `user_id` of at least 5
///   characters, gets 400 with `events_with_missing_fields` naming it; nothing is ingested.
/// - Each device and user may send 30 events a second on HTTP V2 and 1,000 on `/batch`,
///   averaged over the last 30 seconds of `now` ("measured as an average over a recent window of
///   time", amplitude.com/docs/faq/api-choice), each API counting its own requests: a request
///   that would go over gets 429 with
///   `eps_threshold`, `throttled_devices`, `throttled_users` and `throttled_events`, and nothing is
///   ingested.
/// - Accepted events are kept once per `insert_id` (Amplitude ignores a repeated insert id).
///
/// Time is `now`, the test's clock: nothing waits for real seconds.
public final class AmplitudeServer: @unchecked Sendable {
    // @unchecked: every mutable property is behind `lock`.

    /// What the server saw and did.
    public struct Tally: Sendable, Equatable {
        /// Requests answered 200, 400, 413 and 429, by status.
        public var replies: [Int: Int] = [:]
        /// Requests to `/batch` and to `/2/httpapi` that were answered 200.
        public var acceptedBatchRequests = 0
        public var acceptedRealTimeRequests = 0
        /// The most events one accepted request held.
        public var largestRequest = 0
        /// Each event kept, by insert id: its `event_type`.
        public var events: [String: String] = [:]
        /// The insert ids seen again in an accepted request (retries Amplitude de-duplicates).
        public var repeatedInsertIDs = 0
        /// Revenue events kept: insert id → the event's JSON object's `revenue`, `price`, `quantity`, `revenueType`.
        public var revenue: [String: [String: String]] = [:]
    }

    /// The documented limits; tests may lower them.
    public var realTimeEventsPerSecond = 30.0
    public var batchEventsPerSecond = 1_000.0
    public let window: TimeInterval = 30

    private let lock = NSLock()
    private let now: @Sendable () -> Date
    private var tally = Tally()
    /// Accepted events per id (device or user): when they were accepted and how many.
    private var history: [String: [(Date, Int)]] = [:]

    /// A server whose time is `now`.
    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// What the server saw so far.
    public var seen: Tally { lock.lock(); defer { lock.unlock() }; return tally }

    /// The reply to `request`, as Amplitude would give it.
    public func reply(to request: LoopbackCollector.Request) -> LoopbackCollector.Reply {
        let isBatch = request.target.hasPrefix("/batch")
        let response = decide(request, isBatch: isBatch)
        lock.lock()
        tally.replies[response.status, default: 0] += 1
        lock.unlock()
        return response
    }

    private func decide(_ request: LoopbackCollector.Request, isBatch: Bool) -> LoopbackCollector.Reply {
        if request.body.count > (isBatch ? 20_000_000 : 1_000_000) {
            return .status(413, body: #"{"code":413,"error":"Payload too large"}"#)
        }
        guard let root = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let events = root["events"] as? [[String: Any]]
        else { return .status(400, body: #"{"code":400,"error":"Invalid JSON request body"}"#) }
        if !isBatch && events.count > 2_000 {
            return .status(413, body: #"{"code":413,"error":"Payload too large"}"#)
        }
        var missing: [String: [Int]] = [:]
        for (index, event) in events.enumerated() {
            if (event["event_type"] as? String)?.isEmpty != false { missing["event_type", default: []].append(index) }
            let device = event["device_id"] as? String ?? ""
            let user = event["user_id"] as? String ?? ""
            if device.count < 5 && user.count < 5 { missing["device_id", default: []].append(index) }
        }
        if !missing.isEmpty {
            return json(
                400,
                ["code": 400, "error": "Request missing required field", "events_with_missing_fields": missing])
        }
        let limit = isBatch ? batchEventsPerSecond : realTimeEventsPerSecond
        let time = now()
        lock.lock()
        defer { lock.unlock() }
        // Events of each device and user in this request, and the throttled ones.
        var counts: [String: Int] = [:]
        // Each API throttles on its own: the keys carry the endpoint.
        let api = isBatch ? "batch " : "httpapi "
        for event in events {
            for key in ids(of: event) { counts[api + key, default: 0] += 1 }
        }
        var throttled: [String: Double] = [:]
        for (key, count) in counts {
            let recent = (history[key] ?? []).filter { time.timeIntervalSince($0.0) < window }
            history[key] = recent
            let rate = Double(recent.reduce(0) { $0 + $1.1 } + count) / window
            if rate > limit { throttled[key] = rate }
        }
        if !throttled.isEmpty {
            let devices = throttled.filter { $0.key.hasPrefix(api + "d:") }
            let users = throttled.filter { $0.key.hasPrefix(api + "u:") }
            let indices = events.indices.filter {
                !Set(ids(of: events[$0]).map { api + $0 }).isDisjoint(with: throttled.keys)
            }
            return json(
                429,
                [
                    "code": 429, "error": "Too many requests for some devices and users", "eps_threshold": limit,
                    "throttled_devices": Dictionary(
                        uniqueKeysWithValues: devices.map { (String($0.key.dropFirst(api.count + 2)), $0.value) }),
                    "throttled_users": Dictionary(
                        uniqueKeysWithValues: users.map { (String($0.key.dropFirst(api.count + 2)), $0.value) }),
                    "throttled_events": indices,
                ])
        }
        for (key, count) in counts { history[key, default: []].append((time, count)) }
        if isBatch { tally.acceptedBatchRequests += 1 } else { tally.acceptedRealTimeRequests += 1 }
        tally.largestRequest = max(tally.largestRequest, events.count)
        for event in events {
            let insertID = event["insert_id"] as? String ?? UUID().uuidString
            if tally.events[insertID] != nil {
                tally.repeatedInsertIDs += 1
                continue
            }
            tally.events[insertID] = event["event_type"] as? String ?? ""
            if event["revenue"] != nil || event["price"] != nil {
                var fields: [String: String] = [:]
                for key in ["revenue", "price", "quantity", "revenueType", "productId"] {
                    if let value = event[key] { fields[key] = "\(value)" }
                }
                tally.revenue[insertID] = fields
            }
        }
        return json(200, ["code": 200, "events_ingested": events.count, "payload_size_bytes": request.body.count])
    }

    /// The device and user an event counts against (`d:` and `u:` prefixed).
    private func ids(of event: [String: Any]) -> [String] {
        var ids: [String] = []
        if let device = event["device_id"] as? String { ids.append("d:" + device) }
        if let user = event["user_id"] as? String { ids.append("u:" + user) }
        return ids
    }

    private func json(_ status: Int, _ object: [String: Any]) -> LoopbackCollector.Reply {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return LoopbackCollector.Reply(status: status, body: String(decoding: data, as: UTF8.self))
    }
}

extension LoopbackCollector {
    /// Answers every request as `server` does (see ``AmplitudeServer``). Replaces any ``respond(with:)``.
    public func playAmplitude(_ server: AmplitudeServer) {
        respond { server.reply(to: $0) }
    }
}
