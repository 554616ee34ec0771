import Foundation

/// Plays Segment's HTTP Tracking API batch endpoint (`/v1/batch`) with the limits Segment
/// documents (twilio.com/docs/segment/connections/sources/catalog/libraries/server/http-api,
/// "Max request size" and "Errors"): "a maximum of 500KB per request, with a limit of 32KB per
/// event in the batch. If these limits are exceeded, Segment returns a 400 Bad Request error".
/// A body that is not JSON gets 400 too; anything else 200, and each call is kept once per
/// `messageId` (Segment de-duplicates on it).
public final class SegmentServer: @unchecked Sendable {
    // @unchecked: every mutable property is behind `lock`.

    /// What the server saw and did.
    public struct Tally: Sendable, Equatable {
        /// Replies by status.
        public var replies: [Int: Int] = [:]
        /// Each call kept, by messageId: its `type` and, for a track, its `event`.
        public var calls: [String: String] = [:]
        /// The largest body accepted, in bytes, and the largest call.
        public var largestBody = 0
        public var largestCall = 0
    }

    private let lock = NSLock()
    private var tally = Tally()

    public init() {}

    /// What the server saw so far.
    public var seen: Tally { lock.lock(); defer { lock.unlock() }; return tally }

    /// The reply to `request`, as Segment would give it.
    public func reply(to request: LoopbackCollector.Request) -> LoopbackCollector.Reply {
        let reply = decide(request)
        lock.lock()
        tally.replies[reply.status, default: 0] += 1
        lock.unlock()
        return reply
    }

    private func decide(_ request: LoopbackCollector.Request) -> LoopbackCollector.Reply {
        if request.body.count > 500 * 1024 { return .status(400, body: #"{"error":"Request too large"}"#) }
        guard let root = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let batch = root["batch"] as? [[String: Any]]
        else { return .status(400, body: #"{"error":"Invalid JSON"}"#) }
        var sizes: [Int] = []
        for call in batch {
            let size = (try? JSONSerialization.data(withJSONObject: call))?.count ?? 0
            if size > 32 * 1024 { return .status(400, body: #"{"error":"Event too large"}"#) }
            sizes.append(size)
        }
        lock.lock()
        defer { lock.unlock() }
        tally.largestBody = max(tally.largestBody, request.body.count)
        tally.largestCall = max(tally.largestCall, sizes.max() ?? 0)
        for call in batch {
            let id = call["messageId"] as? String ?? UUID().uuidString
            let type = call["type"] as? String ?? "?"
            tally.calls[id] = type == "track" ? "track " + (call["event"] as? String ?? "") : type
        }
        return .status(200, body: #"{"success":true}"#)
    }
}

extension LoopbackCollector {
    /// Answers every request as `server` does (see ``SegmentServer``). Replaces any ``respond(with:)``.
    public func playSegment(_ server: SegmentServer) {
        respond { server.reply(to: $0) }
    }
}
