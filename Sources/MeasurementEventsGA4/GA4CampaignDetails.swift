import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsStandardValues

extension GA4Encoder {
    // The Measurement Protocol takes a campaign as a `campaign_details` event, which GA4
    // applies to the events after it: params campaign_id, campaign, source, medium, term,
    // content (developers.google.com/analytics/devguides/collection/protocol/ga4/reference/events
    // #campaign_details; the Measurement Protocol's "Send campaign data" section of
    // developers.google.com/analytics/devguides/collection/protocol/ga4/sending-events). The
    // gtag.js `campaign_*` params are not Measurement Protocol fields. The session's `utm_*`
    // args map to: utm_source → source, utm_medium → medium, utm_campaign → campaign, utm_term →
    // term, utm_content → content; they are taken off the event itself.
    /// The campaign of a request, sent as `campaign_details` events.
    enum CampaignDetails {
        /// The args the campaign is read from.
        static let utmArgs = Set(StandardEventNames.campaignArgs)
        /// The `campaign_details` param for each `utm_*` arg.
        static let params = [
            "utm_source": "source", "utm_medium": "medium", "utm_campaign": "campaign", "utm_term": "term",
            "utm_content": "content",
        ]
        private static let marker = Array(#"{"name":"campaign_details""#.utf8)

        /// The campaign sent last in the request being encoded.
        struct State {
            private var current: EventArgs = [:]

            /// A `campaign_details` event to send before `queued`, when it carries a campaign
            /// other than the one sent last in this request.
            mutating func detailsEvent(for queued: QueuedEvent) -> [UInt8]? {
                let campaign = StandardCall.campaign(of: queued.event)
                guard !campaign.isEmpty, campaign != current else { return nil }
                current = campaign
                var json = JSONWriter()
                json.object { object in
                    object.field("name") { $0.string("campaign_details") }
                    var fields: EventArgs = ["engagement_time_msec": .int(1)]
                    for (key, value) in campaign { fields[params[key]!] = value }
                    if let sessionID = queued.sessionID { fields["session_id"] = .string(String(sessionID)) }
                    object.field("params") { $0.object(fields) }
                    object.field("timestamp_micros") { $0.int64(WireFormats.microseconds(queued.event.timestamp)) }
                }
                return json.bytes
            }

            /// `events` with `campaign_details` events taken out, newest first, down to `count`.
            func removingDetails(from events: [[UInt8]], keeping count: Int) -> [[UInt8]] {
                var events = events
                while events.count > count,
                    let index = events.lastIndex(where: { $0.starts(with: CampaignDetails.marker) })
                {
                    events.remove(at: index)
                }
                return events
            }
        }
    }
}
