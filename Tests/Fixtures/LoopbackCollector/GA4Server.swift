import Foundation

/// Plays GA4's Measurement Protocol: `/mp/collect` answers 204 to every request, as GA4 does
/// (its reference, "Transport": the collect endpoint does not report problems), and keeps the
/// events of a request only when the validation rules find nothing in it (``GA4ValidationRules``:
/// reserved names, 25 events, 25 params, `minItems` 1, the app instance id's form); a request
/// they flag is counted as GA4 would drop it, with its messages. `/debug/mp/collect` answers the
/// messages, as the validation server does.
public final class GA4Server: @unchecked Sendable {
    // @unchecked: every mutable property is behind `lock`.

    /// What the server saw and did.
    public struct Tally: Sendable, Equatable {
        /// Requests to `/mp/collect`, and those the rules flagged (GA4 would drop their events).
        public var requests = 0
        public var flaggedRequests = 0
        /// The first messages of flagged requests, for the failure message of a test.
        public var messages: [String] = []
        /// Events kept, by name.
        public var events: [String: Int] = [:]
        /// The most events and params seen in one request and one event.
        public var largestRequest = 0
        public var largestParams = 0
        /// Requests holding events that carry a campaign (`campaign_details` applies to the events
        /// after it) whose first event is not `campaign_details`.
        public var campaignRequestsWithoutDetails = 0
        /// Requests with `user_properties`.
        public var requestsWithUserProperties = 0
        /// The `engagement_time_msec` of each event kept (but `campaign_details`), in arrival order;
        /// -1 for an event without it.
        public var engagementTimes: [Int] = []
    }

    private let lock = NSLock()
    private var tally = Tally()
    /// Events that carry the campaign, by name (the test says which).
    private let carriesCampaign: @Sendable ([String: Any]) -> Bool

    /// A server; `carriesCampaign` says which events belong to a campaign (none by default).
    public init(carriesCampaign: @escaping @Sendable ([String: Any]) -> Bool = { _ in false }) {
        self.carriesCampaign = carriesCampaign
    }

    /// What the server saw so far.
    public var seen: Tally { lock.lock(); defer { lock.unlock() }; return tally }

    /// The reply to `request`, as GA4 would give it.
    public func reply(to request: LoopbackCollector.Request) -> LoopbackCollector.Reply {
        let messages = GA4ValidationRules.messages(for: request.body)
        if request.target.contains("/debug/mp/collect") {
            let data = try? JSONSerialization.data(
                withJSONObject: ["validationMessages": messages], options: [.sortedKeys])
            return LoopbackCollector.Reply(status: 200, body: String(decoding: data ?? Data("{}".utf8), as: UTF8.self))
        }
        let root = (try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]) ?? [:]
        let events = root["events"] as? [[String: Any]] ?? []
        lock.lock()
        defer { lock.unlock() }
        tally.requests += 1
        guard messages.isEmpty else {
            tally.flaggedRequests += 1
            if tally.messages.count < 10 {
                tally.messages += messages.map { "\($0["validationCode"] ?? "") \($0["fieldPath"] ?? "")" }
            }
            return .status(204)
        }
        tally.largestRequest = max(tally.largestRequest, events.count)
        if root["user_properties"] != nil { tally.requestsWithUserProperties += 1 }
        for event in events {
            tally.events[event["name"] as? String ?? "", default: 0] += 1
            let params = event["params"] as? [String: Any]
            tally.largestParams = max(tally.largestParams, params?.count ?? 0)
            if event["name"] as? String != "campaign_details" {
                tally.engagementTimes.append(params?["engagement_time_msec"] as? Int ?? -1)
            }
        }
        if events.contains(where: carriesCampaign), events.first?["name"] as? String != "campaign_details" {
            tally.campaignRequestsWithoutDetails += 1
        }
        return .status(204)
    }
}

extension LoopbackCollector {
    /// Answers every request as `server` does (see ``GA4Server``). Replaces any ``respond(with:)``.
    public func playGA4(_ server: GA4Server) {
        respond { server.reply(to: $0) }
    }
}
