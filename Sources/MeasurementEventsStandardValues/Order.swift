import Foundation
import MeasurementEvents

/// A completed purchase: one or more products, their prices in one currency, and the ids a
/// store and a vendor de-duplicate on.
///
/// ```swift
/// let order = Order(
///     currency: "EUR", orderID: "T-1001",
///     products: [.init(productID: "sku-1", name: "Mug", price: Decimal(string: "9.99")!, quantity: 2)])
/// order.post()   // order/completed, revenue "19.98"
/// ```
///
/// Amounts are `Decimal`s and travel on the bus as decimal text (`"19.98"`), never as binary
/// floating point: `0.1 + 0.2` is `0.3`, and `12345678901234567.89` keeps every digit. Make
/// them from text or integers (`Decimal(string: "0.1")`, `Decimal(1999) / 100`): a `Decimal`
/// made from a `Double` literal carries the `Double`'s error. Encoders write the text as the
/// JSON number it spells (OTLP: as a string attribute), so no rounding happens on the device.
///
/// Validation happens where every event passes, in `MeasurementEventsStandard`'s
/// `StandardEventsProcessor`: a negative quantity, a non-finite amount or an unknown ISO 4217
/// code is reported and the event dropped. The vendors' encoders check again with
/// ``init(validating:)`` and send an order that fails as a plain event.
public struct Order: Sendable, Equatable {
    /// One product of the order.
    public struct Product: Sendable, Equatable {
        /// The store's product id or SKU.
        public var productID: String
        /// The product's name, when known.
        public var name: String?
        /// The price of one unit, in the order's currency.
        public var price: Decimal
        /// How many units; at least 1.
        public var quantity: Int

        /// A product line.
        ///
        /// - Parameters:
        ///   - productID: the store's product id or SKU.
        ///   - name: the product's name.
        ///   - price: the price of one unit; make it from text or integers, not from a `Double`.
        ///   - quantity: how many units; at least 1.
        public init(productID: String, name: String? = nil, price: Decimal, quantity: Int = 1) {
            self.productID = productID
            self.name = name
            self.price = price
            self.quantity = quantity
        }
    }

    /// The ISO 4217 code of every amount: `EUR`.
    public var currency: String
    /// The store's transaction id; vendors de-duplicate purchases on it.
    public var orderID: String?
    /// What kind of revenue: `purchase`, `subscription`, `refund`. A `refund` goes as each
    /// vendor's own refund call (``isRefund``).
    public var revenueType: String?
    /// The store receipt, for vendors that verify it.
    public var receipt: String?
    /// The products, in the order shown to the user.
    public var products: [Product]
    /// The total an event without product lines declared (`product_count` 0): a refund of a
    /// whole order posted through the generated `OrderCompleted`, which carries no products.
    /// `nil` whenever the order has products; their total is the revenue then.
    private var declaredTotal: Decimal?

    /// An order.
    ///
    /// - Parameters:
    ///   - currency: the ISO 4217 code of every amount.
    ///   - orderID: the store's transaction id.
    ///   - revenueType: what kind of revenue.
    ///   - receipt: the store receipt.
    ///   - products: the products.
    public init(
        currency: String, orderID: String? = nil, revenueType: String? = nil, receipt: String? = nil,
        products: [Product]
    ) {
        self.currency = currency
        self.orderID = orderID
        self.revenueType = revenueType
        self.receipt = receipt
        self.products = products
    }

    /// The total: the sum of price times quantity, computed in decimal; for an event that
    /// declared a total without product lines, that total.
    public var revenue: Decimal {
        if products.isEmpty, let declaredTotal { return declaredTotal }
        return products.reduce(Decimal(0)) { $0 + $1.price * Decimal($1.quantity) }
    }

    /// Whether the order is a refund: `revenueType` is `refund` (in any case), the value the
    /// catalog documents for `revenue_type`. Amounts stay positive (what was refunded); each
    /// vendor's encoder sends its own refund call (Segment `Order Refunded`, GA4 `refund`,
    /// Amplitude negative revenue).
    ///
    /// ```swift
    /// Order(currency: "EUR", orderID: "T-1001", revenueType: "refund", products: products).isRefund  // true
    /// ```
    public var isRefund: Bool { revenueType?.lowercased() == "refund" }

    /// The event's args: the catalog's order args, and `products.<i>.product_id`, `.name`,
    /// `.price` (decimal text) and `.quantity` for each product.
    public var args: EventArgs {
        var args: EventArgs = [
            "revenue": .string(DecimalText.text(revenue)), "currency": .string(currency),
            "product_count": .int(products.count),
        ]
        args["order_id"] = orderID.map { .string($0) }
        args["revenue_type"] = revenueType.map { .string($0) }
        args["receipt"] = receipt.map { .string($0) }
        for (index, product) in products.enumerated() {
            let prefix = "products.\(index)."
            args[prefix + "product_id"] = .string(product.productID)
            if let name = product.name { args[prefix + "name"] = .string(name) }
            args[prefix + "price"] = .string(DecimalText.text(product.price))
            args[prefix + "quantity"] = .int(product.quantity)
        }
        return args
    }

    /// Posts the order as `order/completed`.
    ///
    /// - Parameter center: where to post; `.default` unless a test isolates it.
    public func post(to center: NotificationCenter = .default) {
        MeasurementEvent.post(Self.eventName, type: Self.eventType, args: args, to: center)
    }

    /// The event an order is posted as, declared in `Events/MeasurementEventsStandard.json`
    /// (`MeasurementEventsStandardEvents.OrderCompleted`, whose args ``args`` writes and
    /// ``init(validating:)`` reads; a test holds the two to the catalog).
    package static let eventName: EventName = "order/completed"
    /// The event's type in the catalog.
    package static let eventType: EventType = .activity
}

extension Order {
    /// The most products one order may carry (GA4 takes 200 items per event).
    public static let maximumProducts = 200

    /// The order an `order/completed` event describes, checked: every amount decimal text
    /// with at most ``DecimalText/maximumDigits`` digits, every quantity at least 1, a known
    /// ISO 4217 currency code, and a revenue equal to the products' total. An event without
    /// product lines (`product_count` 0, as the generated `OrderCompleted` posts) declares its
    /// total in `revenue`: any decimal text of at least 0.
    ///
    /// - Parameter event: an `order/completed` event.
    /// - Throws: ``StandardEventProblem`` naming the arg and what was wrong.
    public init(validating event: MeasurementEvent) throws(StandardEventProblem) {
        func problem(_ arg: String, _ found: String, _ expected: String) -> StandardEventProblem {
            StandardEventProblem(event: event.name, arg: arg, found: found, expected: expected)
        }
        guard event.name == Self.eventName, let revenueText = event.args["revenue"]?.stringValue,
            let currency = event.args["currency"]?.stringValue,
            let productCount = event.args["product_count"]?.intValue
        else {
            throw problem(
                "revenue, currency, product_count", "a missing or mistyped arg",
                "revenue and currency strings, product_count an integer")
        }
        func optionalText(_ arg: String) throws(StandardEventProblem) -> String? {
            guard let value = event.args[arg] else { return nil }
            guard let text = value.stringValue else { throw problem(arg, "\(value)", "a string") }
            return text
        }
        guard ISO4217.isKnown(currency) else {
            throw problem("currency", quotedInFull(currency), "an ISO 4217 currency code such as EUR")
        }
        guard (0...Self.maximumProducts).contains(productCount) else {
            throw problem("product_count", String(productCount), "0 to \(Self.maximumProducts)")
        }
        var products: [Product] = []
        for index in 0..<productCount {
            let prefix = "products.\(index)."
            guard let id = event.args[prefix + "product_id"]?.stringValue, !id.isEmpty else {
                let found = event.args[prefix + "product_id"].map { "\($0)" } ?? "nothing"
                throw problem(prefix + "product_id", found, "a non-empty string")
            }
            let priceText = event.args[prefix + "price"]?.stringValue ?? ""
            guard let price = DecimalText.value(priceText) else {
                throw problem(prefix + "price", quotedInFull(priceText), "decimal text such as 9.99")
            }
            guard let quantity = event.args[prefix + "quantity"]?.intValue, quantity >= 1 else {
                throw problem(
                    prefix + "quantity", event.args[prefix + "quantity"].map { "\($0)" } ?? "nothing",
                    "an integer of at least 1")
            }
            products.append(
                Product(productID: id, name: event.args[prefix + "name"]?.stringValue, price: price, quantity: quantity)
            )
        }
        self.init(
            currency: currency, orderID: try optionalText("order_id"), revenueType: try optionalText("revenue_type"),
            receipt: try optionalText("receipt"), products: products)
        if products.isEmpty, let total = DecimalText.value(revenueText), total >= 0 {
            declaredTotal = total
            return
        }
        guard let revenue = DecimalText.value(revenueText), revenue == self.revenue else {
            throw problem(
                "revenue", quotedInFull(revenueText),
                "decimal text equal to the products' total, \(DecimalText.text(self.revenue))")
        }
    }
}
