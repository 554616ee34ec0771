import Foundation
import MeasurementEvents
import MeasurementEventsStandard

// Amplitude's fields for the standard events:
// - Screen views: the event the Amplitude iOS Swift SDK's screen-view autocapture sends,
//   "[Amplitude] Screen Viewed" with the "[Amplitude] Screen Name" event property
//   (amplitude.com/docs/sdks/analytics/ios/ios-swift-sdk, "Autocapture", "Screen views").
// - Revenue: the HTTP V2 API's event keys "price", "quantity", "revenue", "productId",
//   "revenueType", "currency" (amplitude.com/docs/apis/analytics/http-v2, "Keys for the event
//   argument"; amplitude.com/docs/data/sources/instrument-track-revenue, "Revenue
//   properties": revenue is price * quantity). "productId", "price" and "quantity" describe one
//   product: they are sent for an order of one product; an order of several sends "revenue"
//   (the total) only, as Amplitude's fields hold one product. Not sent: "receipt" and
//   "receiptSig" (the HTTP API does not verify receipts).
// - The session's campaign: the utm_source, utm_medium, utm_campaign, utm_term and utm_content
//   user properties Amplitude's attribution tracking sets
//   (amplitude.com/docs/sdks/analytics/ios/ios-swift-sdk, "Track marketing attribution"), as
//   "user_properties": {"$set": …} on the event (HTTP V2 "user_properties"; Identify API
//   "$set"). They stay in event_properties too.
// - Alias: Amplitude merges users with its User Mapping API (a separate endpoint,
//   amplitude.com/docs/apis/analytics/user-mapping), not the HTTP V2 API: user/aliased goes
//   as a plain event with previous_id and user_id.
struct AmplitudeStandardFields {
    /// The `event_type` to send instead of the event's name, if any.
    var eventType: String?
    /// The `event_properties` to send instead of the event's.
    var eventProperties: EventArgs
    /// The revenue, when the event is an order.
    var order: Order?

    init?(_ queued: QueuedEvent) {
        switch StandardCall(queued) {
        case .screen(let view):
            eventType = "[Amplitude] Screen Viewed"
            var properties = view.properties
            properties["[Amplitude] Screen Name"] = .string(view.name)
            if let screenClass = view.screenClass { properties["screen_class"] = .string(screenClass) }
            eventProperties = properties
            order = nil
        case .order(let order):
            eventType = nil
            eventProperties = queued.event.vendorProperties.filter { key, _ in
                !key.hasPrefix("products.") && !["revenue", "currency", "revenue_type", "receipt"].contains(key)
            }
            self.order = order
        case .alias, nil:
            return nil
        }
    }

    /// Writes `user_properties` `{"$set": {utm_*}}` for a tracked event that carries the session's campaign.
    static func writeCampaign(_ queued: QueuedEvent, to fields: inout JSONWriter.ObjectWriter) {
        let campaign = StandardCall.campaign(of: queued.event)
        guard queued.kind == .track, !campaign.isEmpty else { return }
        fields.field("user_properties") { $0.object { $0.field("$set") { $0.object(campaign) } } }
    }

    /// Writes the revenue keys, after the event's own keys (not sorted among them: the encoder's
    /// own fields are left as they are).
    func writeRevenue(to fields: inout JSONWriter.ObjectWriter) {
        guard let order else { return }
        fields.field("currency") { $0.string(order.currency) }
        if order.products.count == 1, let product = order.products.first {
            fields.field("price") { $0.decimal(product.price) }
            fields.field("productId") { $0.string(product.productID) }
            fields.field("quantity") { $0.int(product.quantity) }
        }
        fields.field("revenue") { $0.decimal(order.revenue) }
        if let revenueType = order.revenueType { fields.field("revenueType") { $0.string(revenueType) } }
    }
}
