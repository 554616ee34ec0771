import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsStandard
import XCTest

@testable import MeasurementEventsHTTP
@testable import MeasurementEventsOTLP

/// Exact bodies of the standard calls (``StandardCallSamples``), each field traced to the vendor's documentation.
final class OTLPStandardCallTests: XCTestCase {
    let encoder = OTLPLogsEncoder(baseURL: URL(string: "https://otel.example.com:4318")!)

    func testScreenView() {
        // opentelemetry.io/docs/specs/semconv/registry/attributes/app/: "app.screen.name" and "app.screen.id";
        // no screen-view event is defined, the record keeps the event's name.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.screen),
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"Shop"}},{"key":"service.version","value":{"stringValue":"2.4.1"}},{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"iOS"}},{"key":"os.version","value":{"stringValue":"17.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iPhone15,2"}},{"key":"device.manufacturer","value":{"stringValue":"Apple"}},{"key":"telemetry.sdk.name","value":{"stringValue":"MeasurementEvents"}},{"key":"telemetry.sdk.version","value":{"stringValue":"1.1.0"}},{"key":"telemetry.sdk.language","value":{"stringValue":"swift"}},{"key":"screen_width","value":{"intValue":"390"}}]},"scopeLogs":[{"scope":{"name":"MeasurementEvents","version":"1.1.0"},"logRecords":[{"timeUnixNano":"1714566601000000000","observedTimeUnixNano":"1714566601000000000","severityNumber":9,"severityText":"INFO","eventName":"screen/viewed","attributes":[{"key":"event_type","value":{"stringValue":"activity"}},{"key":"screen","value":{"stringValue":"Feed"}},{"key":"screen_class","value":{"stringValue":"FeedViewController"}},{"key":"tab","value":{"stringValue":"home"}},{"key":"app.screen.name","value":{"stringValue":"Feed"}},{"key":"app.screen.id","value":{"stringValue":"FeedViewController"}},{"key":"event.name","value":{"stringValue":"screen/viewed"}},{"key":"user.id","value":{"stringValue":"user-42"}},{"key":"enduser.pseudo.id","value":{"stringValue":"anon-1234"}},{"key":"session.id","value":{"stringValue":"1714566000000"}},{"key":"group.id","value":{"stringValue":"acme"}}]}]}]}]}"#
        )
    }

    func testOrder() {
        // No convention for orders: the args as attributes, amounts as string attributes of decimal text.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.order),
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"Shop"}},{"key":"service.version","value":{"stringValue":"2.4.1"}},{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"iOS"}},{"key":"os.version","value":{"stringValue":"17.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iPhone15,2"}},{"key":"device.manufacturer","value":{"stringValue":"Apple"}},{"key":"telemetry.sdk.name","value":{"stringValue":"MeasurementEvents"}},{"key":"telemetry.sdk.version","value":{"stringValue":"1.1.0"}},{"key":"telemetry.sdk.language","value":{"stringValue":"swift"}},{"key":"screen_width","value":{"intValue":"390"}}]},"scopeLogs":[{"scope":{"name":"MeasurementEvents","version":"1.1.0"},"logRecords":[{"timeUnixNano":"1714566602000000000","observedTimeUnixNano":"1714566602000000000","severityNumber":9,"severityText":"INFO","eventName":"order/completed","attributes":[{"key":"currency","value":{"stringValue":"EUR"}},{"key":"event_type","value":{"stringValue":"activity"}},{"key":"order_id","value":{"stringValue":"T-1001"}},{"key":"product_count","value":{"intValue":"2"}},{"key":"products.0.name","value":{"stringValue":"Sticker"}},{"key":"products.0.price","value":{"stringValue":"0.1"}},{"key":"products.0.product_id","value":{"stringValue":"sku-1"}},{"key":"products.0.quantity","value":{"intValue":"3"}},{"key":"products.1.price","value":{"stringValue":"0.2"}},{"key":"products.1.product_id","value":{"stringValue":"sku-2"}},{"key":"products.1.quantity","value":{"intValue":"1"}},{"key":"revenue","value":{"stringValue":"0.5"}},{"key":"revenue_type","value":{"stringValue":"purchase"}},{"key":"event.name","value":{"stringValue":"order/completed"}},{"key":"user.id","value":{"stringValue":"user-42"}},{"key":"enduser.pseudo.id","value":{"stringValue":"anon-1234"}},{"key":"session.id","value":{"stringValue":"1714566000000"}},{"key":"group.id","value":{"stringValue":"acme"}}]}]}]}]}"#
        )
    }

    func testLargeOrder() {
        // Same; the large amount as its full text.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.largeOrder),
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"Shop"}},{"key":"service.version","value":{"stringValue":"2.4.1"}},{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"iOS"}},{"key":"os.version","value":{"stringValue":"17.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iPhone15,2"}},{"key":"device.manufacturer","value":{"stringValue":"Apple"}},{"key":"telemetry.sdk.name","value":{"stringValue":"MeasurementEvents"}},{"key":"telemetry.sdk.version","value":{"stringValue":"1.1.0"}},{"key":"telemetry.sdk.language","value":{"stringValue":"swift"}},{"key":"screen_width","value":{"intValue":"390"}}]},"scopeLogs":[{"scope":{"name":"MeasurementEvents","version":"1.1.0"},"logRecords":[{"timeUnixNano":"1714566603000000000","observedTimeUnixNano":"1714566603000000000","severityNumber":9,"severityText":"INFO","eventName":"order/completed","attributes":[{"key":"currency","value":{"stringValue":"JPY"}},{"key":"event_type","value":{"stringValue":"activity"}},{"key":"order_id","value":{"stringValue":"T-1002"}},{"key":"product_count","value":{"intValue":"1"}},{"key":"products.0.price","value":{"stringValue":"12345678901234567.89"}},{"key":"products.0.product_id","value":{"stringValue":"yacht"}},{"key":"products.0.quantity","value":{"intValue":"1"}},{"key":"revenue","value":{"stringValue":"12345678901234567.89"}},{"key":"event.name","value":{"stringValue":"order/completed"}},{"key":"user.id","value":{"stringValue":"user-42"}},{"key":"enduser.pseudo.id","value":{"stringValue":"anon-1234"}},{"key":"session.id","value":{"stringValue":"1714566000000"}},{"key":"group.id","value":{"stringValue":"acme"}}]}]}]}]}"#
        )
    }

    func testRefund() {
        // No convention for orders (opentelemetry.io/docs/specs/semconv): the args, and "order.refund" true
        // (dot-separated namespace, semconv "Naming") so that a query tells refunds from sales.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.refund),
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"Shop"}},{"key":"service.version","value":{"stringValue":"2.4.1"}},{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"iOS"}},{"key":"os.version","value":{"stringValue":"17.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iPhone15,2"}},{"key":"device.manufacturer","value":{"stringValue":"Apple"}},{"key":"telemetry.sdk.name","value":{"stringValue":"MeasurementEvents"}},{"key":"telemetry.sdk.version","value":{"stringValue":"1.1.0"}},{"key":"telemetry.sdk.language","value":{"stringValue":"swift"}},{"key":"screen_width","value":{"intValue":"390"}}]},"scopeLogs":[{"scope":{"name":"MeasurementEvents","version":"1.1.0"},"logRecords":[{"timeUnixNano":"1714566606000000000","observedTimeUnixNano":"1714566606000000000","severityNumber":9,"severityText":"INFO","eventName":"order/completed","attributes":[{"key":"currency","value":{"stringValue":"EUR"}},{"key":"event_type","value":{"stringValue":"activity"}},{"key":"order_id","value":{"stringValue":"T-1001"}},{"key":"product_count","value":{"intValue":"1"}},{"key":"products.0.name","value":{"stringValue":"Sticker"}},{"key":"products.0.price","value":{"stringValue":"0.1"}},{"key":"products.0.product_id","value":{"stringValue":"sku-1"}},{"key":"products.0.quantity","value":{"intValue":"3"}},{"key":"revenue","value":{"stringValue":"0.3"}},{"key":"revenue_type","value":{"stringValue":"refund"}},{"key":"order.refund","value":{"boolValue":true}},{"key":"event.name","value":{"stringValue":"order/completed"}},{"key":"user.id","value":{"stringValue":"user-42"}},{"key":"enduser.pseudo.id","value":{"stringValue":"anon-1234"}},{"key":"session.id","value":{"stringValue":"1714566000000"}},{"key":"group.id","value":{"stringValue":"acme"}}]}]}]}]}"#
        )
    }

    func testRefundFromTheGeneratedCatalog() {
        // The generated OrderCompleted: the same attribute on a record without product lines.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.catalogRefund),
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"Shop"}},{"key":"service.version","value":{"stringValue":"2.4.1"}},{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"iOS"}},{"key":"os.version","value":{"stringValue":"17.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iPhone15,2"}},{"key":"device.manufacturer","value":{"stringValue":"Apple"}},{"key":"telemetry.sdk.name","value":{"stringValue":"MeasurementEvents"}},{"key":"telemetry.sdk.version","value":{"stringValue":"1.1.0"}},{"key":"telemetry.sdk.language","value":{"stringValue":"swift"}},{"key":"screen_width","value":{"intValue":"390"}}]},"scopeLogs":[{"scope":{"name":"MeasurementEvents","version":"1.1.0"},"logRecords":[{"timeUnixNano":"1714566609000000000","observedTimeUnixNano":"1714566609000000000","severityNumber":9,"severityText":"INFO","eventName":"order/completed","attributes":[{"key":"currency","value":{"stringValue":"EUR"}},{"key":"event_type","value":{"stringValue":"activity"}},{"key":"order_id","value":{"stringValue":"T-1001"}},{"key":"product_count","value":{"intValue":"0"}},{"key":"revenue","value":{"stringValue":"0.5"}},{"key":"revenue_type","value":{"stringValue":"refund"}},{"key":"order.refund","value":{"boolValue":true}},{"key":"event.name","value":{"stringValue":"order/completed"}},{"key":"user.id","value":{"stringValue":"user-42"}},{"key":"enduser.pseudo.id","value":{"stringValue":"anon-1234"}},{"key":"session.id","value":{"stringValue":"1714566000000"}},{"key":"group.id","value":{"stringValue":"acme"}}]}]}]}]}"#
        )
    }
    func testAlias() {
        // No convention for aliases: the args as attributes.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.alias),
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"Shop"}},{"key":"service.version","value":{"stringValue":"2.4.1"}},{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"iOS"}},{"key":"os.version","value":{"stringValue":"17.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iPhone15,2"}},{"key":"device.manufacturer","value":{"stringValue":"Apple"}},{"key":"telemetry.sdk.name","value":{"stringValue":"MeasurementEvents"}},{"key":"telemetry.sdk.version","value":{"stringValue":"1.1.0"}},{"key":"telemetry.sdk.language","value":{"stringValue":"swift"}},{"key":"screen_width","value":{"intValue":"390"}}]},"scopeLogs":[{"scope":{"name":"MeasurementEvents","version":"1.1.0"},"logRecords":[{"timeUnixNano":"1714566604000000000","observedTimeUnixNano":"1714566604000000000","severityNumber":9,"severityText":"INFO","eventName":"user/aliased","attributes":[{"key":"event_type","value":{"stringValue":"activity"}},{"key":"previous_id","value":{"stringValue":"anon-1234"}},{"key":"user_id","value":{"stringValue":"user-42"}},{"key":"event.name","value":{"stringValue":"user/aliased"}},{"key":"user.id","value":{"stringValue":"user-42"}},{"key":"enduser.pseudo.id","value":{"stringValue":"anon-1234"}},{"key":"session.id","value":{"stringValue":"1714566000000"}},{"key":"group.id","value":{"stringValue":"acme"}}]}]}]}]}"#
        )
    }

    func testCampaignContext() {
        // No convention for campaigns: the utm_* args as attributes.
        XCTAssertEqual(
            EncoderSamples.body(encoder, StandardCallSamples.campaignTrack),
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"Shop"}},{"key":"service.version","value":{"stringValue":"2.4.1"}},{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"iOS"}},{"key":"os.version","value":{"stringValue":"17.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iPhone15,2"}},{"key":"device.manufacturer","value":{"stringValue":"Apple"}},{"key":"telemetry.sdk.name","value":{"stringValue":"MeasurementEvents"}},{"key":"telemetry.sdk.version","value":{"stringValue":"1.1.0"}},{"key":"telemetry.sdk.language","value":{"stringValue":"swift"}},{"key":"screen_width","value":{"intValue":"390"}}]},"scopeLogs":[{"scope":{"name":"MeasurementEvents","version":"1.1.0"},"logRecords":[{"timeUnixNano":"1714566605000000000","observedTimeUnixNano":"1714566605000000000","severityNumber":9,"severityText":"INFO","eventName":"feed/opened","attributes":[{"key":"event_type","value":{"stringValue":"activity"}},{"key":"source","value":{"stringValue":"deep_link"}},{"key":"utm_campaign","value":{"stringValue":"spring"}},{"key":"utm_medium","value":{"stringValue":"email"}},{"key":"utm_source","value":{"stringValue":"newsletter"}},{"key":"event.name","value":{"stringValue":"feed/opened"}},{"key":"user.id","value":{"stringValue":"user-42"}},{"key":"enduser.pseudo.id","value":{"stringValue":"anon-1234"}},{"key":"session.id","value":{"stringValue":"1714566000000"}},{"key":"group.id","value":{"stringValue":"acme"}}]}]}]}]}"#
        )
    }

    #if os(macOS) || os(Linux)
        /// The official schema accepts the standard calls' records (the check OTLPLogsEncoderTests runs).
        func testStandardCallsParseWithTheOfficialOpenTelemetryProtoDefinitions() throws {
            let body = EncoderSamples.bodyOf(encoder, StandardCallSamples.all)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-\(UUID().uuidString).json")
            try Data(body.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let (status, output) = try OTLPSchemaCheck.run(file, records: StandardCallSamples.all.count)
            if (status == 3 || status == 127) && ProcessInfo.processInfo.environment["CI"] != "true" {
                throw XCTSkip("OTLP schema check not run: \(output)")
            }
            XCTAssertEqual(status, 0, "check_otlp_logs.py: \(output)\nbody: \(body)")
        }
    #endif
}

extension OTLPStandardCallTests {
    func testErrorCarriesTheExceptionAttributes() {
        // opentelemetry.io/docs/specs/semconv/registry/attributes/exception/: "exception.type",
        // "exception.message".
        let body = EncoderSamples.body(encoder, StandardCallSamples.error)
        XCTAssertTrue(
            body.contains(
                #"{"key":"exception.type","value":{"stringValue":"URLError"}},{"key":"exception.message","value":{"stringValue":"The request timed out."}},{"key":"event.name""#
            ), body)
    }

    /// The error reader agrees with the catalog's generated type, arg by arg.
    func testAnErrorIsReadAsTheCatalogReadsIt() {
        let valid: EventArgs = [
            "error_type": "CocoaError", "error_domain": "NSCocoaErrorDomain", "error_code": 4, "message": "gone",
            "context": "feed/cache",
        ]
        var cases: [(EventName, EventArgs)] = [(ReportedError.eventName, valid), ("error/other", valid)]
        for key in valid.keys {
            var missing = valid
            missing[key] = nil
            var mistyped = valid
            mistyped[key] = key == "error_code" ? "4" : 4
            cases += [(ReportedError.eventName, missing), (ReportedError.eventName, mistyped)]
        }
        for (name, args) in cases {
            let event = MeasurementEvent(name, args: args)
            let typed = MeasurementEventsStandardEvents.ErrorOccurred(event)
            let read = ReportedError(event)
            XCTAssertEqual(read == nil, typed == nil, "\(name) \(args)")
            XCTAssertEqual(read?.type, typed?.errorType)
            XCTAssertEqual(read?.message, typed?.message)
        }
        XCTAssertEqual(ReportedError.eventName, MeasurementEventsStandardEvents.ErrorOccurred.eventName)
    }
}
