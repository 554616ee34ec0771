import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsStandardValues

// Amplitude's fields for the standard events:
// - Screen views: the event the Amplitude iOS Swift SDK's screen-view autocapture sends,
//   "[Amplitude] Screen Viewed" with the "[Amplitude] Screen Name" event property
//   (amplitude.com/docs/sdks/analytics/ios/ios-swift-sdk, "Autocapture", "Screen views").
// - Revenue: the HTTP V2 API's event keys "price", "quantity", "revenue", "productId",
//   "revenueType", "currency" (amplitude.com/docs/apis/analytics/http-v2, "Keys for the event
//   argument"; amplitude.com/docs/data/sources/instrument-track-revenue, "Revenue
//   properties": price, quantity and productId describe one product, revenue is price *
//   quantity). An order of one product sends them on the order event. An order of several
//   sends one revenue event per product, "Product Purchased" with price, quantity, revenue
//   (price × quantity: "$revenue ... is required if you wish the revenue event to appear in a
//   Revenue LTV chart", instrument-track-revenue, "Revenue properties"), productId, currency and
//   revenueType (the per-product tracking of Segment's Amplitude destination,
//   segment.com/docs/connections/destinations/catalog/actions-amplitude, "Track Revenue Per
//   Product"; the event name is Segment's ecommerce spec's), after the request's events, with
//   insert_id "<event id>-<product index>" so that a retry is de-duplicated; the order event
//   then keeps the total as the event property "revenue" (not the revenue key, which would
//   count the order twice) and "currency". Not sent: "receipt" and "receiptSig" (the HTTP API
//   does not verify receipts). Each product event is one of the request's events: the uploader
//   counts them within Amplitude's 2,000 per request (AmplitudeEncoder.requestEntryCount(of:)).
// - Refunds (revenue_type refund): the same fields with the amounts negative and revenueType
//   "refund": instrument-track-revenue, "Revenue properties": "$revenue ... (can be negative)",
//   "$price ... (can be negative)", "$revenueType ... (e.g. tax, refund, income)"; the quantity
//   stays positive (an integer count of products). The product events of a refund are named
//   "Product Refunded". A refund without product lines (the generated OrderCompleted) sends the
//   negative revenue alone, on the order event.
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
            if order.products.count > 1 {
                // The total stays with the order; the revenue goes with the product events.
                // A number when a Double holds it exactly (15 digits), else its decimal text.
                let total = DecimalText.text(Self.sign(of: order) * order.revenue)
                eventProperties["revenue"] =
                    total.filter(\.isNumber).count <= 15
                    ? Double(total).map { .double($0) } ?? .string(total) : .string(total)
                eventProperties["currency"] = .string(order.currency)
                self.order = nil
            } else {
                self.order = order
            }
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
        let sign = Self.sign(of: order)
        fields.field("currency") { $0.string(order.currency) }
        if order.products.count == 1, let product = order.products.first {
            fields.field("price") { $0.decimal(sign * product.price) }
            fields.field("productId") { $0.string(product.productID) }
            fields.field("quantity") { $0.int(product.quantity) }
        }
        fields.field("revenue") { $0.decimal(sign * order.revenue) }
        if let revenueType = Self.revenueType(of: order) { fields.field("revenueType") { $0.string(revenueType) } }
    }

    /// -1 for a refund, whose amounts Amplitude takes negative; else 1.
    static func sign(of order: Order) -> Decimal { order.isRefund ? -1 : 1 }

    /// The order's revenue type; `refund` for every refund (whatever its case on the bus).
    static func revenueType(of order: Order) -> String? { order.isRefund ? "refund" : order.revenueType }
}

extension AmplitudeEncoder {
    /// One element of a request's `events`: a queued event, or a product of an order of several.
    struct SentEvent {
        /// The queued event's position in the batch.
        var position: Int
        /// The product's index in its order and the order, for a product event.
        var product: (index: Int, order: Order)?
    }

    /// The request's events in order: the batch, then the product events of its orders of
    /// several products. Amplitude's 400 names events by their index here.
    static func sentEvents(_ events: [QueuedEvent]) -> [SentEvent] {
        var sent = events.indices.map { SentEvent(position: $0) }
        for (position, queued) in events.enumerated() {
            guard case .order(let order) = StandardCall(queued), order.products.count > 1 else { continue }
            sent += order.products.indices.map { SentEvent(position: position, product: ($0, order)) }
        }
        return sent
    }

    /// Writes the revenue event of one product of an order of several.
    func writeProductEvent(
        _ queued: QueuedEvent, product: (index: Int, order: Order), userID: String?, to json: inout JSONWriter
    ) {
        let event = queued.event
        let identity = queued.identity
        let context = queued.context
        let item = product.order.products[product.index]
        json.object { fields in
            if let version = context?.app.version { fields.field("app_version") { $0.string(version) } }
            fields.field("currency") { $0.string(product.order.currency) }
            fields.field("device_id") { $0.string(identity.anonymousID) }
            if let maker = context?.device.manufacturer { fields.field("device_manufacturer") { $0.string(maker) } }
            if let model = context?.device.model { fields.field("device_model") { $0.string(model) } }
            fields.field("event_properties") {
                $0.object { properties in
                    if let name = item.name { properties.field("name") { $0.string(name) } }
                    if let orderID = product.order.orderID { properties.field("order_id") { $0.string(orderID) } }
                }
            }
            fields.field("event_type") { $0.string(product.order.isRefund ? "Product Refunded" : "Product Purchased") }
            if let groupID = identity.groupID {
                fields.field("groups") { $0.object { $0.field(groupType) { $0.string(groupID) } } }
            }
            fields.field("insert_id") { $0.string("\(event.id.uuidString)-\(product.index)") }
            if let locale = context?.locale { fields.field("language") { $0.string(locale) } }
            // The system the app runs on ("macOS" for an iPad or Catalyst app on a Mac: the
            // context's RunningSystem); http-v2, "Keys for the event argument": os_name,
            // os_version, platform.
            if let os = context?.os {
                fields.field("os_name") { $0.string(os.name) }
                fields.field("os_version") { $0.string(os.version) }
                fields.field("platform") { $0.string(os.name) }
            }
            let sign = AmplitudeStandardFields.sign(of: product.order)
            fields.field("price") { $0.decimal(sign * item.price) }
            fields.field("productId") { $0.string(item.productID) }
            fields.field("quantity") { $0.int(item.quantity) }
            fields.field("revenue") { $0.decimal(sign * item.price * Decimal(item.quantity)) }
            if let revenueType = AmplitudeStandardFields.revenueType(of: product.order) {
                fields.field("revenueType") { $0.string(revenueType) }
            }
            fields.field("session_id") { $0.int64(queued.sessionID ?? -1) }
            fields.field("time") { $0.int64(WireFormats.milliseconds(event.timestamp)) }
            if let userID { fields.field("user_id") { $0.string(userID) } }
        }
    }
}
