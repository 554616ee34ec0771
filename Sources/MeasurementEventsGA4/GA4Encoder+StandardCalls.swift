import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsStandardValues

// GA4's events for the standard events:
// - Screen views, both streams: the custom event screen_viewed with screen_name and screen_class
//   params. screen_view is GA4's screen event of app streams, but the Firebase SDK collects it
//   (firebase.google.com/docs/analytics/screenviews; support.google.com/analytics/answer/9234069
//   lists it among the automatically collected events), and the Measurement Protocol reserves it:
//   its reference lists screen_view among the "Reserved event names"
//   (developers.google.com/analytics/devguides/collection/protocol/ga4/reference, "Reserved
//   names"), and the validation server answers NAME_RESERVED. Web streams have no screen event
//   (their page_view needs a page_location URL). The article "Delivering to vendors" says what
//   GA4's reports show for screen_viewed.
// - purchase with currency, transaction_id, value and items (item_id, item_name, price,
//   quantity): developers.google.com/analytics/devguides/collection/ga4/reference/events#purchase,
//   sent over the Measurement Protocol as any event
//   (developers.google.com/analytics/devguides/collection/protocol/ga4/reference). GA4
//   de-duplicates purchases by transaction_id (support.google.com/analytics/answer/12313109):
//   an order without an id gets the event's id, so a retried request is counted once. Not sent:
//   coupon, shipping, tax, affiliation, customer_type, and the items' optional fields
//   (the order event does not collect them).
// - refund, for an order whose revenue_type is refund, with currency, transaction_id, value
//   and items: developers.google.com/analytics/devguides/collection/ga4/reference/events#refund
//   ("transaction_id: The unique identifier of a transaction", required; value, currency; items
//   "for partial refunds"). value is the refunded amount, positive, as the reference's example
//   writes it; GA4 subtracts it in its revenue reports. An order without product lines (the
//   generated OrderCompleted) sends no items: a refund of the whole transaction.
// - The session's campaign: a campaign_details event (GA4CampaignDetails.swift).
// - No alias call: the Measurement Protocol joins a user's events by user_id; user/aliased
//   goes as a plain user_aliased event.
extension GA4Encoder {
    /// The encoded event for a screen view or an order, or `nil` for any other event.
    func standardEvent(_ queued: QueuedEvent, adaptations: inout [EncodedBatch.Rejection]) -> [UInt8]? {
        let event = queued.event
        let name: String
        var params: EventArgs
        var order: Order?
        switch StandardCall(queued) {
        case .screen(let view):
            name = "screen_viewed"
            var properties = event
            properties.args = view.properties
            params = ga4Params(properties, reserving: ["screen_class", "screen_name"], adaptations: &adaptations).filter
            {
                !StandardEventNames.campaignArgs.contains($0.key)
            }
            params["screen_name"] = .string(view.name)
            if let screenClass = view.screenClass { params["screen_class"] = .string(screenClass) }
        case .order(let purchase):
            name = purchase.isRefund ? "refund" : "purchase"
            params = ["currency": .string(purchase.currency)]
            if let orderID = purchase.orderID {
                params["transaction_id"] = .string(orderID)
            } else {
                params["transaction_id"] = .string(event.id.uuidString.lowercased())
                adaptations.append(
                    .init(event: event.name, reason: "transaction_id derived from the event id (the order has none)"))
            }
            order = purchase
        case .alias, nil:
            return nil
        }
        params["engagement_time_msec"] = Self.engagementTime(of: queued)
        if let sessionID = queued.sessionID { params["session_id"] = .string(String(sessionID)) }
        var json = JSONWriter()
        json.object { object in
            object.field("name") { $0.string(name) }
            object.field("params") {
                $0.object { fields in
                    // Keys sorted with the order's items and value among them.
                    var keys = Array(params.keys)
                    if let order { keys += order.products.isEmpty ? ["value"] : ["items", "value"] }
                    for key in keys.sorted() {
                        switch key {
                        case "items" where order != nil:
                            fields.field("items") { Self.writeItems(order!.products, to: &$0) }
                        case "value" where order != nil:
                            fields.field("value") { $0.decimal(order!.revenue) }
                        default:
                            fields.field(key) { $0.value(params[key]!) }
                        }
                    }
                }
            }
            object.field("timestamp_micros") { $0.int64(WireFormats.microseconds(event.timestamp)) }
        }
        return json.bytes
    }

    private static func writeItems(_ products: [Order.Product], to json: inout JSONWriter) {
        json.array(products) { json, product in
            json.object { fields in
                fields.field("item_id") { $0.string(product.productID) }
                if let name = product.name { fields.field("item_name") { $0.string(name) } }
                fields.field("price") { $0.decimal(product.price) }
                fields.field("quantity") { $0.int(product.quantity) }
            }
        }
    }
}
