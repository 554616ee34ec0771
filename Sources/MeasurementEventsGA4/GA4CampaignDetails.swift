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
    // term, utm_content → content; they are taken off the event itself. Every request whose events
    // carry a campaign opens with it (GA4 applies it to the events after it, in that request), and
    // the uploader counts it among the request's 25 events (GA4Encoder.requestEntryCount(of:)).
    /// The campaign of a request, sent as `campaign_details` events.
    enum CampaignDetails {
        /// The args the campaign is read from.
        static let utmArgs = Set(StandardEventNames.campaignArgs)
        /// The `campaign_details` param for each `utm_*` arg.
        static let params = [
            "utm_source": "source", "utm_medium": "medium", "utm_campaign": "campaign", "utm_term": "term",
            "utm_content": "content",
        ]

        /// The campaign sent last in the request being encoded.
        struct State {
            private var current: EventArgs = [:]

            /// A `campaign_details` event to send before `queued`, when it carries a campaign
            /// other than the one sent last in this request.
            mutating func detailsEvent(for queued: QueuedEvent) -> [UInt8]? {
                guard changes(to: queued) else { return nil }
                let campaign = current
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

            /// Whether `queued` carries a campaign other than the one sent last in this request
            /// (a `campaign_details` event goes before it), and takes it as the current one.
            mutating func changes(to queued: QueuedEvent) -> Bool {
                let campaign = StandardCall.campaign(of: queued.event)
                guard !campaign.isEmpty, campaign != current else { return false }
                current = campaign
                return true
            }
        }
    }
}
