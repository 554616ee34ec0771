import Foundation
import MeasurementEvents
import XCTest

@testable import MeasurementEventsStandardValues

final class OrderTests: XCTestCase {
    func testPointOnePlusPointTwoIsExactlyPointThree() {
        let order = Order(
            currency: "EUR",
            products: [.init(productID: "a", price: decimal("0.1")), .init(productID: "b", price: decimal("0.2"))])
        XCTAssertEqual(order.revenue, decimal("0.3"))
        XCTAssertEqual(order.args["revenue"], "0.3")
        // The same sum in binary floating point is the surprise this avoids.
        XCTAssertNotEqual(0.1 + 0.2, 0.3)
    }

    func testLargeAmountsKeepEveryDigit() {
        let order = Order(
            currency: "JPY",
            products: [.init(productID: "yacht", price: decimal("12345678901234567.89"), quantity: 3)])
        XCTAssertEqual(order.args["revenue"], "37037036703703703.67")
        XCTAssertEqual(order.args["products.0.price"], "12345678901234567.89")
    }

    func testArgsCarryEveryProductAndRoundTrip() throws {
        let order = Order(
            currency: "EUR", orderID: "T-1001", revenueType: "purchase",
            products: [
                .init(productID: "sku-1", name: "Mug", price: decimal("9.99"), quantity: 2),
                .init(productID: "sku-2", price: decimal("0.5")),
            ])
        XCTAssertEqual(
            order.args,
            [
                "revenue": "20.48", "currency": "EUR", "product_count": 2, "order_id": "T-1001",
                "revenue_type": "purchase", "products.0.product_id": "sku-1", "products.0.name": "Mug",
                "products.0.price": "9.99", "products.0.quantity": 2, "products.1.product_id": "sku-2",
                "products.1.price": "0.5", "products.1.quantity": 1,
            ])
        let event = MeasurementEvent("order/completed", args: order.args)
        XCTAssertEqual(try Order(validating: event), order)
    }

    func testNegativeQuantityIsRejectedNamingTheArg() {
        let order = Order(currency: "EUR", products: [.init(productID: "a", price: decimal("1"), quantity: -2)])
        XCTAssertThrowsError(try Order(validating: MeasurementEvent("order/completed", args: order.args))) { error in
            XCTAssertEqual(
                "\(error)",
                "order/completed: products.0.quantity: found -2, expected an integer of at least 1")
        }
    }

    func testNaNAmountIsRejected() {
        let order = Order(currency: "EUR", products: [.init(productID: "a", price: .nan)])
        XCTAssertThrowsError(try Order(validating: MeasurementEvent("order/completed", args: order.args))) { error in
            XCTAssertEqual((error as? StandardEventProblem)?.arg, "products.0.price")
        }
    }

    func testUnknownCurrencyIsRejected() {
        let order = Order(currency: "EUX", products: [.init(productID: "a", price: decimal("1"))])
        XCTAssertThrowsError(try Order(validating: MeasurementEvent("order/completed", args: order.args))) { error in
            XCTAssertEqual(
                "\(error)", #"order/completed: currency: found "EUX", expected an ISO 4217 currency code such as EUR"#)
        }
    }

    func testAnOptionalArgOfAnotherTypeIsRejectedNamingIt() {
        var args = Order(currency: "EUR", orderID: "T-1", products: [.init(productID: "a", price: decimal("1"))]).args
        args["order_id"] = 1001
        XCTAssertThrowsError(try Order(validating: MeasurementEvent("order/completed", args: args))) { error in
            XCTAssertEqual("\(error)", "order/completed: order_id: found 1001, expected a string")
        }
    }

    func testAnotherEventIsNotAnOrder() {
        let args = Order(currency: "EUR", products: [.init(productID: "a", price: decimal("1"))]).args
        XCTAssertThrowsError(try Order(validating: MeasurementEvent("order/refunded", args: args))) { error in
            XCTAssertEqual((error as? StandardEventProblem)?.arg, "revenue, currency, product_count")
        }
    }

    func testRevenueThatIsNotTheProductsTotalIsRejected() {
        var args = Order(currency: "EUR", products: [.init(productID: "a", price: decimal("1"))]).args
        args["revenue"] = "2"
        XCTAssertThrowsError(try Order(validating: MeasurementEvent("order/completed", args: args)))
    }

    func testDecimalTextAcceptsOnlyPlainDecimals() {
        for text in ["0", "19.99", "-5", "0.001", "123456789012345678901234567890"] {
            XCTAssertNotNil(DecimalText.value(text), text)
        }
        for text in [
            "", "NaN", "Infinity", "1e5", "1,5", "01", "1.", ".5", "+1", " 1", "1234567890123456789012345678901",
        ] {
            XCTAssertNil(DecimalText.value(text), text)
        }
    }

    func testCurrencyCodes() {
        XCTAssertTrue(ISO4217.isKnown("EUR"))
        XCTAssertTrue(ISO4217.isKnown("JPY"))
        XCTAssertFalse(ISO4217.isKnown("eur"))
        XCTAssertFalse(ISO4217.isKnown("EUX"))
        XCTAssertFalse(ISO4217.isKnown("EU"))
        XCTAssertFalse(ISO4217.isKnown("EURO"))
    }

    func testARefundIsAnOrderWhoseRevenueTypeIsRefundInAnyCase() {
        let product = Order.Product(productID: "a", price: decimal("1"))
        XCTAssertTrue(Order(currency: "EUR", revenueType: "refund", products: [product]).isRefund)
        XCTAssertTrue(Order(currency: "EUR", revenueType: "Refund", products: [product]).isRefund)
        XCTAssertFalse(Order(currency: "EUR", revenueType: "purchase", products: [product]).isRefund)
        XCTAssertFalse(Order(currency: "EUR", products: [product]).isRefund)
    }

    func testAnEventWithoutProductLinesDeclaresItsTotal() throws {
        // What the generated OrderCompleted posts: a total and no products.
        let event = MeasurementEvent(
            "order/completed",
            args: ["revenue": "19.99", "currency": "EUR", "product_count": 0, "revenue_type": "refund"])
        let order = try Order(validating: event)
        XCTAssertEqual(order.revenue, decimal("19.99"))
        XCTAssertEqual(order.products, [])
        XCTAssertTrue(order.isRefund)
        var negative = event
        negative.args["revenue"] = "-1"
        XCTAssertThrowsError(try Order(validating: negative)) { error in
            XCTAssertEqual((error as? StandardEventProblem)?.arg, "revenue")
        }
    }

    /// `isKnown` reads a table of the codes four bytes apart: every code of `codes` is known
    /// (the first and last ones too), and no three letters across two neighbours are.
    func testCurrencyCodesTable() {
        let codes = ISO4217.codes.sorted()
        XCTAssertEqual(codes.count, 170)
        XCTAssertEqual(codes.first, "AED")
        XCTAssertEqual(codes.last, "ZWL")
        for code in codes { XCTAssertTrue(ISO4217.isKnown(code), code) }
        let joined = Array(codes.joined())
        for start in 0..<(joined.count - 2) where start % 3 != 0 {
            let across = String(joined[start..<(start + 3)])
            XCTAssertEqual(ISO4217.isKnown(across), ISO4217.codes.contains(across), across)
        }
    }
}

/// An amount from decimal text, for the tests.
func decimal(_ text: String) -> Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))! }
