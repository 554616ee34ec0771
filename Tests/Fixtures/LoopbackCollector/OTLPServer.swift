import Foundation

/// Plays an OTLP/HTTP logs receiver (`/v1/logs`, JSON) as the specification describes its replies
/// (opentelemetry.io/docs/specs/otlp/, "OTLP/HTTP Response"): a body that cannot be decoded gets
/// 400; otherwise 200, and the records `rejects` refuses are left out and counted in the reply's
/// `partialSuccess` (`rejectedLogRecords`, `errorMessage`), as "Partial Success" says.
public final class OTLPServer: @unchecked Sendable {
    // @unchecked: every mutable property is behind `lock`.

    /// What the server saw and did.
    public struct Tally: Sendable, Equatable {
        /// Replies by status, and the 200s that carried a partial success.
        public var replies: [Int: Int] = [:]
        public var partialSuccesses = 0
        /// Records kept, by event name.
        public var records: [String: Int] = [:]
        /// Records refused in partial successes.
        public var rejected = 0
        /// Attributes of the records kept whose `order.refund` is true.
        public var refunds = 0
    }

    private let lock = NSLock()
    private var tally = Tally()
    private let rejects: @Sendable ([String: Any]) -> Bool

    /// A receiver that refuses the log records `rejects` returns `true` for (none by default).
    public init(rejects: @escaping @Sendable ([String: Any]) -> Bool = { _ in false }) {
        self.rejects = rejects
    }

    /// What the server saw so far.
    public var seen: Tally { lock.lock(); defer { lock.unlock() }; return tally }

    /// The `stringValue` or `intValue` of a record's attribute, as text.
    public static func attribute(_ key: String, of record: [String: Any]) -> String? {
        let attributes = record["attributes"] as? [[String: Any]] ?? []
        guard let value = attributes.first(where: { $0["key"] as? String == key })?["value"] as? [String: Any]
        else { return nil }
        return (value["stringValue"] ?? value["intValue"] ?? value["boolValue"]).map { "\($0)" }
    }

    /// The reply to `request`, as an OTLP receiver would give it.
    public func reply(to request: LoopbackCollector.Request) -> LoopbackCollector.Reply {
        guard let root = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let resources = root["resourceLogs"] as? [[String: Any]]
        else {
            lock.lock()
            tally.replies[400, default: 0] += 1
            lock.unlock()
            return .status(400, body: #"{"code":3,"message":"cannot decode ExportLogsServiceRequest"}"#)
        }
        let records = resources.flatMap { ($0["scopeLogs"] as? [[String: Any]] ?? []) }
            .flatMap { ($0["logRecords"] as? [[String: Any]] ?? []) }
        lock.lock()
        defer { lock.unlock() }
        tally.replies[200, default: 0] += 1
        var rejected = 0
        for record in records {
            if rejects(record) {
                rejected += 1
                continue
            }
            tally.records[record["eventName"] as? String ?? "", default: 0] += 1
            if Self.attribute("order.refund", of: record) != nil { tally.refunds += 1 }
        }
        guard rejected > 0 else { return .status(200, body: "{}") }
        tally.partialSuccesses += 1
        tally.rejected += rejected
        return .status(
            200,
            body:
                #"{"partialSuccess":{"rejectedLogRecords":"\#(rejected)","errorMessage":"records refused by the test receiver"}}"#
        )
    }
}

extension LoopbackCollector {
    /// Answers every request as `server` does (see ``OTLPServer``). Replaces any ``respond(with:)``.
    public func playOTLP(_ server: OTLPServer) {
        respond { server.reply(to: $0) }
    }
}
