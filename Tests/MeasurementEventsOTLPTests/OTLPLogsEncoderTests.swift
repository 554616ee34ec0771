import EncoderTestSupport
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP
@testable import MeasurementEventsOTLP

// Fields traced to their definitions:
// - ExportLogsServiceRequest.resourceLogs, ResourceLogs.resource/scopeLogs, ScopeLogs.scope/
//   logRecords, LogRecord.timeUnixNano/observedTimeUnixNano/severityNumber/severityText/
//   eventName/attributes: github.com/open-telemetry/opentelemetry-proto,
//   opentelemetry/proto/logs/v1/logs.proto and collector/logs/v1/logs_service.proto;
//   JSON forms (lowerCamelCase, 64-bit integers as strings, enums as numbers):
//   docs/specification.md, "JSON Protobuf Encoding". POST /v1/logs: "OTLP/HTTP Request".
// - eventName and the deprecated event.name attribute: opentelemetry.io/docs/specs/semconv/
//   general/events ("An event MUST have an event name") and registry/attributes/event.
// - severityNumber 9 = INFO: opentelemetry.io/docs/specs/otel/logs/data-model, "Field: SeverityNumber".
// - service.name/version, os.type/name/version, device.model.identifier, device.manufacturer,
//   telemetry.sdk.name/version/language, user.id, enduser.pseudo.id, session.id:
//   opentelemetry.io/docs/specs/semconv/registry/attributes (service, os, device, telemetry,
//   user, enduser, session). group.id, user.trait.*, group.trait.*: this library's own.
final class OTLPLogsEncoderTests: XCTestCase {
    private let encoder = OTLPLogsEncoder(
        baseURL: URL(string: "https://otel.example.com:4318")!, headers: ["Authorization": "Bearer t"])

    func testRequestGoesToV1LogsAsJSONWithTheGivenHeaders() throws {
        let request = try XCTUnwrap(encoder.encode([EncoderSamples.track], context: EncoderTestContext.value).request)
        XCTAssertEqual(request.url.absoluteString, "https://otel.example.com:4318/v1/logs")
        XCTAssertEqual(request.headers, ["Authorization": "Bearer t", "Content-Type": "application/json"])
    }

    func testTrackWithFullContext() {
        XCTAssertEqual(
            EncoderSamples.body(encoder, EncoderSamples.track),
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"Shop"}},{"key":"service.version","value":{"stringValue":"2.4.1"}},{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"iOS"}},{"key":"os.version","value":{"stringValue":"17.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iPhone15,2"}},{"key":"device.manufacturer","value":{"stringValue":"Apple"}},{"key":"telemetry.sdk.name","value":{"stringValue":"MeasurementEvents"}},{"key":"telemetry.sdk.version","value":{"stringValue":"1.1.0"}},{"key":"telemetry.sdk.language","value":{"stringValue":"swift"}},{"key":"screen_width","value":{"intValue":"390"}}]},"scopeLogs":[{"scope":{"name":"MeasurementEvents","version":"1.1.0"},"logRecords":[{"timeUnixNano":"1714566600500000000","observedTimeUnixNano":"1714566600500000000","severityNumber":9,"severityText":"INFO","eventName":"feed/item_tapped","attributes":[{"key":"category","value":{"stringValue":"feed"}},{"key":"event_type","value":{"stringValue":"click"}},{"key":"item_id","value":{"stringValue":"42"}},{"key":"position","value":{"intValue":"3"}},{"key":"event.name","value":{"stringValue":"feed/item_tapped"}},{"key":"user.id","value":{"stringValue":"user-42"}},{"key":"enduser.pseudo.id","value":{"stringValue":"anon-1234"}},{"key":"session.id","value":{"stringValue":"1714566000000"}},{"key":"group.id","value":{"stringValue":"acme"}}]}]}]}]}"#
        )
    }

    func testAnIPadAppOnAMacIsSentAsMacOS() {
        let body = EncoderSamples.body(encoder, EncoderSamples.trackOnAMac)
        XCTAssertTrue(
            body.contains(
                #"{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"macOS"}},{"key":"os.version","value":{"stringValue":"14.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iMac21,1"}}"#
            ), body)
    }

    func testIdentifyWithFullContext() {
        XCTAssertEqual(
            EncoderSamples.body(encoder, EncoderSamples.identify),
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"Shop"}},{"key":"service.version","value":{"stringValue":"2.4.1"}},{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"iOS"}},{"key":"os.version","value":{"stringValue":"17.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iPhone15,2"}},{"key":"device.manufacturer","value":{"stringValue":"Apple"}},{"key":"telemetry.sdk.name","value":{"stringValue":"MeasurementEvents"}},{"key":"telemetry.sdk.version","value":{"stringValue":"1.1.0"}},{"key":"telemetry.sdk.language","value":{"stringValue":"swift"}},{"key":"screen_width","value":{"intValue":"390"}}]},"scopeLogs":[{"scope":{"name":"MeasurementEvents","version":"1.1.0"},"logRecords":[{"timeUnixNano":"1714566601000000000","observedTimeUnixNano":"1714566601000000000","severityNumber":9,"severityText":"INFO","eventName":"identify","attributes":[{"key":"user.trait.plan","value":{"stringValue":"pro"}},{"key":"user.trait.seats","value":{"intValue":"3"}},{"key":"event.name","value":{"stringValue":"identify"}},{"key":"user.id","value":{"stringValue":"user-42"}},{"key":"enduser.pseudo.id","value":{"stringValue":"anon-1234"}},{"key":"session.id","value":{"stringValue":"1714566000000"}},{"key":"group.id","value":{"stringValue":"acme"}}]}]}]}]}"#
        )
    }

    func testGroupWithFullContext() {
        XCTAssertEqual(
            EncoderSamples.body(encoder, EncoderSamples.group),
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"Shop"}},{"key":"service.version","value":{"stringValue":"2.4.1"}},{"key":"os.type","value":{"stringValue":"darwin"}},{"key":"os.name","value":{"stringValue":"iOS"}},{"key":"os.version","value":{"stringValue":"17.2.1"}},{"key":"device.model.identifier","value":{"stringValue":"iPhone15,2"}},{"key":"device.manufacturer","value":{"stringValue":"Apple"}},{"key":"telemetry.sdk.name","value":{"stringValue":"MeasurementEvents"}},{"key":"telemetry.sdk.version","value":{"stringValue":"1.1.0"}},{"key":"telemetry.sdk.language","value":{"stringValue":"swift"}},{"key":"screen_width","value":{"intValue":"390"}}]},"scopeLogs":[{"scope":{"name":"MeasurementEvents","version":"1.1.0"},"logRecords":[{"timeUnixNano":"1714566602000000000","observedTimeUnixNano":"1714566602000000000","severityNumber":9,"severityText":"INFO","eventName":"group","attributes":[{"key":"group.trait.employees","value":{"intValue":"120"}},{"key":"group.trait.name","value":{"stringValue":"Acme Inc"}},{"key":"event.name","value":{"stringValue":"group"}},{"key":"user.id","value":{"stringValue":"user-42"}},{"key":"enduser.pseudo.id","value":{"stringValue":"anon-1234"}},{"key":"session.id","value":{"stringValue":"1714566000000"}},{"key":"group.id","value":{"stringValue":"acme"}}]}]}]}]}"#
        )
    }

    func testEventsOfDifferentContextsGoToResourceLogsOfTheirOwn() throws {
        var other = EncoderSamples.track
        var attribution = EncoderSamples.attribution
        attribution.context?.app.version = "2.5.0"
        other.event.attribution = attribution
        let body = EncoderSamples.bodyOf(encoder, [EncoderSamples.track, EncoderSamples.identify, other])
        let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        let resourceLogs = try XCTUnwrap(object?["resourceLogs"] as? [[String: Any]])
        XCTAssertEqual(resourceLogs.count, 2)
    }

    #if os(macOS) || os(Linux)
        /// The official schema accepts the body: parsed by `opentelemetry-proto` with unknown
        /// fields refused. Without python3 or the package the test is skipped with the reason, and
        /// fails when `CI=true` (`.ci/run` installs the package first).
        func testBodyParsesWithTheOfficialOpenTelemetryProtoDefinitions() throws {
            var events = [EncoderSamples.track, EncoderSamples.identify, EncoderSamples.group]
            events.append(
                QueuedEvent(
                    event: MeasurementEvent(
                        "edge/values",
                        args: ["nan": .double(.nan), "inf": .double(-.infinity), "big": .int(Int.max), "ok": true],
                        timestamp: Date(timeIntervalSince1970: 1_714_566_603))))
            let body = EncoderSamples.bodyOf(encoder, events)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-\(UUID().uuidString).json")
            try Data(body.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let (status, output) = try OTLPSchemaCheck.run(file, records: 4)
            let missing = status == 3 || status == 127
            if missing && ProcessInfo.processInfo.environment["CI"] != "true" {
                throw XCTSkip("OTLP schema check not run: \(output)")
            }
            XCTAssertEqual(status, 0, "check_otlp_logs.py: \(output)\nbody: \(body)")
        }
    #endif
}

/// The same requests in binary protobuf (`encoding: .protobuf`).
extension OTLPLogsEncoderTests {
    private var protobufEncoder: OTLPLogsEncoder {
        OTLPLogsEncoder(
            baseURL: URL(string: "https://otel.example.com:4318")!, headers: ["Authorization": "Bearer t"],
            encoding: .protobuf)
    }

    func testProtobufRequestGoesToV1LogsWithItsContentType() throws {
        let request = try XCTUnwrap(
            protobufEncoder.encode([EncoderSamples.track], context: EncoderTestContext.value).request)
        XCTAssertEqual(request.url.absoluteString, "https://otel.example.com:4318/v1/logs")
        XCTAssertEqual(request.headers, ["Authorization": "Bearer t", "Content-Type": "application/x-protobuf"])
        XCTAssertEqual(request.body.first, 0x0A, "field 1 (resource_logs), length-delimited")
        let json = try XCTUnwrap(encoder.encode([EncoderSamples.track], context: EncoderTestContext.value).request)
        XCTAssertLessThan(request.body.count * 2, json.body.count, "protobuf is well under half the JSON's size")
    }

    func testProtobufReplyWithAPartialSuccessIsRead() throws {
        func reply(rejected: Int64?, message: String?) -> HTTPResponse {
            var response = ProtobufWriter()
            let partial = response.beginMessage(1)  // partial_success
            response.unsigned(7, 1)  // a field this reader does not know: skipped
            if let rejected { response.int64(1, rejected) }  // rejected_log_records
            if let message { response.string(2, message) }  // error_message
            response.endMessage(partial)
            return HTTPResponse(status: 200, headers: ["content-type": "application/x-protobuf"], body: response.bytes)
        }
        let encoder = protobufEncoder
        let refused = try XCTUnwrap(
            encoder.partialRefusal(in: reply(rejected: 3, message: "too old"), ofEventCount: 10))
        XCTAssertEqual(refused.refused, 3)
        XCTAssertEqual(refused.message, "The collector said: too old")
        XCTAssertNil(encoder.partialRefusal(in: reply(rejected: 0, message: nil), ofEventCount: 10))
        XCTAssertNil(encoder.partialRefusal(in: HTTPResponse(status: 200, body: []), ofEventCount: 10))
        let negative = try XCTUnwrap(encoder.partialRefusal(in: reply(rejected: -4, message: nil), ofEventCount: 10))
        XCTAssertEqual(negative.refused, 0)
        XCTAssertTrue(negative.message.contains("-4, not a count"), negative.message)
        XCTAssertEqual(encoder.partialRefusal(in: reply(rejected: 50, message: nil), ofEventCount: 10)?.refused, 10)
        // A reply that says it is JSON is read as JSON; one that is not protobuf is reported.
        let json = HTTPResponse(
            status: 200, headers: ["content-type": "application/json"],
            body: Array(#"{"partialSuccess":{"rejectedLogRecords":"2"}}"#.utf8))
        XCTAssertEqual(encoder.partialRefusal(in: json, ofEventCount: 10)?.refused, 2)
        let garbage = try XCTUnwrap(
            encoder.partialRefusal(in: HTTPResponse(status: 200, body: [0x0A, 0x09, 0x08]), ofEventCount: 10))
        XCTAssertEqual(garbage.refused, 0)
        XCTAssertTrue(garbage.message.contains("not an ExportLogsServiceResponse"), garbage.message)
        XCTAssertTrue(garbage.message.contains("a field of 9 bytes where 1 remain"), garbage.message)
    }

    /// A request of many records is written in parts at once (`ConcurrentChunks`): the same
    /// bytes as one record after the other, in both encodings, across two resources.
    func testRecordsWrittenInPartsAreTheSameBytesAsOneAfterTheOther() {
        var other = EncoderSamples.track
        var attribution = EncoderSamples.attribution
        attribution.context?.app.version = "2.5.0"
        other.event.attribution = attribution
        var events: [QueuedEvent] = []
        for index in 0..<300 {
            var queued = index < 240 ? EncoderSamples.track : other
            queued.event.args["index"] = .int(index)
            events.append(queued)
        }
        let runs = OTLPLogsEncoder.runs(events)
        XCTAssertEqual(runs.map(\.events.count), [240, 60])
        for encoder in [encoder, protobufEncoder] {
            func body(inPartsOf minimum: Int) -> [UInt8] {
                switch encoder.encoding {
                case .json:
                    return encoder.write(
                        runs, to: OTLPLogsJSONWriter(), minimumRecordsPerChunk: minimum, maximumChunks: 4)
                case .protobuf:
                    return encoder.write(
                        runs, to: OTLPLogsProtobufWriter(), minimumRecordsPerChunk: minimum, maximumChunks: 4)
                }
            }
            let whole = body(inPartsOf: 1_000)
            XCTAssertEqual(body(inPartsOf: 50), whole, "\(encoder.encoding): 4 parts of 60, then one run of 60")
            XCTAssertEqual(body(inPartsOf: 7), whole, "\(encoder.encoding): parts of uneven sizes")
            XCTAssertEqual(whole, encoder.encode(events, context: EncoderTestContext.value).request?.body)
        }
    }

    #if os(macOS) || os(Linux)
        /// The binary body holds exactly what the JSON body holds, as the official definitions
        /// read both (`check_otlp_logs.py --protobuf`): every field number and wire type right,
        /// nothing unknown. Events of two contexts (two resources), identify and group calls,
        /// consents, and the edge values.
        func testProtobufBodyHoldsExactlyWhatTheJSONBodyHolds() throws {
            var other = EncoderSamples.track
            var attribution = EncoderSamples.attribution
            attribution.context?.app.version = "2.5.0"
            attribution.purposeConsents = ["analytics": true, "advertising": false]
            other.event.attribution = attribution
            let events = [
                EncoderSamples.track, EncoderSamples.identify, EncoderSamples.group, other,
                QueuedEvent(
                    event: MeasurementEvent(
                        "edge/values",
                        args: [
                            "nan": .double(.nan), "inf": .double(-.infinity), "big": .int(Int.max), "ok": true,
                            "small": .int(-5), "half": 0.5, "long": .string(String(repeating: "é", count: 200)),
                        ],
                        timestamp: Date(timeIntervalSince1970: 1_714_566_603))),
            ]
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let jsonFile = directory.appendingPathComponent("body.json")
            let protobufFile = directory.appendingPathComponent("body.pb")
            try Data(EncoderSamples.bodyOf(encoder, events).utf8).write(to: jsonFile)
            let binary = try XCTUnwrap(protobufEncoder.encode(events, context: EncoderTestContext.value).request)
            try Data(binary.body).write(to: protobufFile)
            let (status, output) = try OTLPSchemaCheck.run(jsonFile, records: events.count, protobuf: protobufFile)
            let missing = status == 3 || status == 127
            if missing && ProcessInfo.processInfo.environment["CI"] != "true" {
                throw XCTSkip("OTLP schema check not run: \(output)")
            }
            XCTAssertEqual(status, 0, "check_otlp_logs.py: \(output)")
        }
    #endif
}

/// A server's events, each posted in its own request context (or none), through an aggregator:
/// each body carries its event's own user and the context's attributes (RequestContextSamples).
extension OTLPLogsEncoderTests {
    func testEachEventOfARequestContextCarriesItsOwnUserAndAttributes() {
        let bodies = RequestContextSamples.bodies(encoder)
        XCTAssertEqual(bodies.count, 3)
        let expected: [[String]] = [
            [
                #"{"key":"user.id","value":{"stringValue":"alice-1"}}"#,
                #"{"key":"enduser.pseudo.id","value":{"stringValue":"anon-alice"}}"#,
                #"{"key":"tenant","value":{"stringValue":"acme"}}"#,
                #"{"key":"request_id","value":{"stringValue":"r-1"}}"#,
            ],
            [
                #"{"key":"user.id","value":{"stringValue":"bob-22"}}"#,
                #"{"key":"enduser.pseudo.id","value":{"stringValue":"anon-bob"}}"#,
                #"{"key":"tenant","value":{"stringValue":"globex"}}"#,
            ],
            [
                #"{"key":"user.id","value":{"stringValue":"app-user"}}"#
            ],
        ]
        for (body, fields) in zip(bodies, expected) {
            for field in fields { XCTAssertTrue(body.contains(field), "\(field) not in \(body)") }
        }
        XCTAssertFalse(bodies[0].contains("bob-22") || bodies[1].contains("alice-1"), "\(bodies)")
        XCTAssertFalse(bodies[2].contains(#""tenant""#), "outside any context: no attributes: \(bodies[2])")
    }
}
