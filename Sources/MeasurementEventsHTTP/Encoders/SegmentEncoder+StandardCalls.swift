import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsStandardValues

// Segment's own calls for the standard events (twilio.com/docs/segment):
// - screen: connections/spec/screen ("name", "properties"; type "screen").
// - Order Completed: connections/spec/ecommerce/v2, "Order Completed" (a track call; properties
//   "order_id", "revenue", "currency", "products" with "product_id", "name", "price",
//   "quantity"). Not sent: total, subtotal, tax, shipping, discount, coupon, affiliation (the
//   order event does not collect them), revenue_type and receipt (not in the spec).
// - Order Refunded, for an order whose revenue_type is refund: connections/spec/ecommerce/v2,
//   "Order Refunded" (a track call; properties "order_id", "total", "currency", and "products"
//   for a partial refund). The refunded amount goes as "total", positive, as the spec's example
//   writes it; "revenue" is not sent, so that no revenue report counts the refund as a sale.
// - alias: connections/spec/alias ("previousId", "userId"; type "alias").
// - The session's campaign: connections/spec/common, "Context fields", "campaign" (name,
//   source, medium, term, content), from the utm_* args; taken out of the properties.
extension SegmentEncoder {
    /// The call for a standard event, or `nil` for any other event (a plain `track`).
    func standardCall(_ queued: QueuedEvent) -> [UInt8]? {
        guard let call = StandardCall(queued) else { return nil }
        let event = queued.event
        let identity = queued.identity
        var json = JSONWriter()
        json.object { object in
            object.field("anonymousId") { $0.string(identity.anonymousID) }
            object.field("context") {
                Self.writeContext(
                    queued.context, campaign: StandardCall.campaign(of: event),
                    consent: categoryPreferences(of: queued), to: &$0)
            }
            switch call {
            case .screen(let view):
                object.field("messageId") { $0.string(event.id.uuidString) }
                object.field("name") { $0.string(view.name) }
                var properties = StandardCall.withoutCampaign(view.properties)
                if let screenClass = view.screenClass { properties["screen_class"] = .string(screenClass) }
                object.field("properties") { $0.object(properties) }
            case .order(let order):
                object.field("event") { $0.string(order.isRefund ? "Order Refunded" : "Order Completed") }
                object.field("messageId") { $0.string(event.id.uuidString) }
                object.field("properties") { Self.writeOrder(order, to: &$0) }
            case .alias(let previousID, _):
                object.field("messageId") { $0.string(event.id.uuidString) }
                object.field("previousId") { $0.string(previousID) }
            }
            object.field("timestamp") { $0.string(WireFormats.iso8601(event.timestamp)) }
            object.field("type") {
                switch call {
                case .screen: $0.string("screen")
                case .order: $0.string("track")
                case .alias: $0.string("alias")
                }
            }
            if case .alias(_, let userID) = call {
                object.field("userId") { $0.string(userID) }
            } else if let userID = identity.userID {
                object.field("userId") { $0.string(userID) }
            }
        }
        return json.bytes
    }

    /// `"campaign": {"content", "medium", "name", "source", "term"}` when the event carries one.
    static func writeCampaign(_ campaign: EventArgs, to fields: inout JSONWriter.ObjectWriter) {
        guard !campaign.isEmpty else { return }
        let names = [
            ("content", "utm_content"), ("medium", "utm_medium"), ("name", "utm_campaign"), ("source", "utm_source"),
            ("term", "utm_term"),
        ]
        fields.field("campaign") {
            $0.object { object in
                for (name, arg) in names {
                    if let value = campaign[arg] { object.field(name) { $0.value(value) } }
                }
            }
        }
    }

    private static func writeOrder(_ order: Order, to json: inout JSONWriter) {
        json.object { properties in
            properties.field("currency") { $0.string(order.currency) }
            if let orderID = order.orderID { properties.field("order_id") { $0.string(orderID) } }
            // An event without product lines (the generated OrderCompleted) sends none.
            if !order.products.isEmpty {
                writeProducts(order.products, to: &properties)
            }
            // Order Refunded has "total" where Order Completed has "revenue" (spec v2).
            properties.field(order.isRefund ? "total" : "revenue") { $0.decimal(order.revenue) }
        }
    }

    private static func writeProducts(_ products: [Order.Product], to properties: inout JSONWriter.ObjectWriter) {
        properties.field("products") {
            $0.array(products) { json, product in
                json.object { fields in
                    if let name = product.name { fields.field("name") { $0.string(name) } }
                    fields.field("price") { $0.decimal(product.price) }
                    fields.field("product_id") { $0.string(product.productID) }
                    fields.field("quantity") { $0.int(product.quantity) }
                }
            }
        }
    }
}
