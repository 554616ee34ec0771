import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
import MeasurementEventsStandard

/// One screen view, order, alias and campaign-carrying event, posted by a signed-in user with
/// the full context of ``EncoderSamples``.
package enum StandardCallSamples {
    package static func queued(_ name: EventName, args: EventArgs, id: Int, at seconds: TimeInterval) -> QueuedEvent {
        var event = MeasurementEvent(
            name, type: .activity, args: args, id: UUID(uuidString: "00000000-0000-4000-8000-00000000001\(id)")!,
            timestamp: Date(timeIntervalSince1970: 1_714_566_600 + seconds))
        event.attribution = EncoderSamples.attribution
        return QueuedEvent(event: event)
    }

    package static let screen = queued(
        "screen/viewed",
        args: ScreenView("Feed", screenClass: "FeedViewController", properties: ["tab": "home"]).args, id: 1, at: 1)

    /// Two products: 0.1 × 3 and 0.2, in euros: revenue 0.5 exactly.
    package static let order = queued(
        "order/completed",
        args: Order(
            currency: "EUR", orderID: "T-1001", revenueType: "purchase",
            products: [
                .init(productID: "sku-1", name: "Sticker", price: Decimal(string: "0.1")!, quantity: 3),
                .init(productID: "sku-2", price: Decimal(string: "0.2")!),
            ]
        ).args, id: 2, at: 2)

    /// One product of a large amount.
    package static let largeOrder = queued(
        "order/completed",
        args: Order(
            currency: "JPY", orderID: "T-1002",
            products: [.init(productID: "yacht", price: Decimal(string: "12345678901234567.89")!)]
        ).args, id: 3, at: 3)

    /// A refund of part of order T-1001: its first product, 0.1 × 3, posted with `Order`.
    package static let refund = queued(
        "order/completed",
        args: Order(
            currency: "EUR", orderID: "T-1001", revenueType: "refund",
            products: [.init(productID: "sku-1", name: "Sticker", price: Decimal(string: "0.1")!, quantity: 3)]
        ).args, id: 6, at: 6)

    /// A refund of the whole order T-1001 through the generated catalog's `OrderCompleted`, which
    /// carries no product lines: the total alone.
    package static let catalogRefund = queued(
        MeasurementEventsStandardEvents.OrderCompleted.eventName,
        args: MeasurementEventsStandardEvents.OrderCompleted(
            revenue: "0.5", currency: "EUR", productCount: 0, orderID: "T-1001", revenueType: "refund"
        ).args, id: 9, at: 9)

    package static let alias = queued(
        "user/aliased", args: ["previous_id": "anon-1234", "user_id": "user-42"], id: 4, at: 4)

    /// A tracked event carrying the session's campaign, as StandardEventsProcessor stamps it.
    package static let campaignTrack = queued(
        "feed/opened",
        args: ["source": "deep_link", "utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "spring"],
        id: 5, at: 5)

    /// An error the app opted to send the message of.
    package static let error = queued(
        "error/occurred",
        args: [
            "error_type": "URLError", "error_domain": "NSURLErrorDomain", "error_code": -1001,
            "message": "The request timed out.", "context": "feed/refresh",
        ], id: 7, at: 7)

    /// An event a timer measured: StandardEventsProcessor added `duration` (seconds).
    package static let timed = queued("checkout/completed", args: ["duration": 42.5], id: 8, at: 8)

    package static let all = [screen, order, largeOrder, refund, alias, campaignTrack, error, timed, catalogRefund]
}

#if os(macOS) || os(Linux)
    /// Runs `Tests/Scripts/check_otlp_logs.py` on a body file: the official opentelemetry-proto
    /// definitions parse it with unknown fields refused; with `protobuf`, a binary body of the
    /// same events must hold exactly what the JSON holds. Status 3 or 127: python3 or the package is missing.
    package enum OTLPSchemaCheck {
        package static func run(_ file: URL, records: Int, protobuf: URL? = nil) throws -> (Int32, String) {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Scripts/check_otlp_logs.py")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments =
                ["python3", script.path, file.path, String(records)] + (protobuf.map { ["--protobuf", $0.path] } ?? [])
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: output, as: UTF8.self))
        }
    }
#endif
