import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
internal import MeasurementEventsJSON

/// Encodes for any OpenTelemetry Collector (or backend) that takes OTLP/HTTP logs
/// (`POST <base>/v1/logs`), in JSON (`Content-Type: application/json`, the default) or in
/// binary protobuf (`application/x-protobuf`, ``BodyEncoding/protobuf``: a third of the bytes,
/// and half the collector's CPU; what a server sending to its collector wants).
///
/// ```swift
/// let tracker = try HTTPTracker(
///     encoder: OTLPLogsEncoder(baseURL: URL(string: "https://otel.example.com:4318")!,
///                              headers: ["Authorization": "Bearer …"]),
///     directory: applicationSupport.appendingPathComponent("analytics/otlp"))
/// ```
///
/// The body is an `ExportLogsServiceRequest`: one `resourceLogs` entry per run of events with
/// the same context, its resource attributes from the context (`service.name` = app name, else
/// bundle id; `service.version`; `os.type`, `os.name`, `os.version`;
/// `device.model.identifier`, `device.manufacturer`; `telemetry.sdk.name`, `.version`,
/// `.language`; the app's `EventContext.extra` fields under their own names), one scope (the
/// library), and one log record per event:
/// - `timeUnixNano` and `observedTimeUnixNano`: when the event was posted (nanoseconds; in
///   JSON as decimal strings, as OTLP/JSON writes 64-bit integers);
/// - `severityNumber` 9 (`INFO`) and `severityText` `INFO`;
/// - the event name twice: in the LogRecord's `eventName` field (opentelemetry-proto 1.5 and
///   later; the event semantic conventions now require it) and in the `event.name` attribute
///   (deprecated by those conventions, but what collectors and backends built on older protos
///   read; they drop the unknown `eventName` field). Both carry the same value;
/// - attributes: the args (plus `event_type` and `category`), `user.id`, `enduser.pseudo.id`
///   (the anonymous id), `session.id`, `group.id` when set, and, for an event posted while the
///   app set purposes of consent (`EventAggregator.setConsents(_:)`), one boolean
///   `measurement_events.consent.<purpose>` per purpose (`true` when granted). OpenTelemetry's
///   semantic conventions name no consent attribute; the name is in this package's namespace,
///   as the conventions ask of attributes outside them
///   (opentelemetry.io/docs/specs/semconv/general/naming/, "Recommendations for application
///   developers": a prefix of the application's own).
///
/// An OTLP destination needs the analytics purpose by default (``defaultPurposes``).
///
/// Identify and group calls are log records too, named `identify` and `group`, with the
/// traits as `user.trait.<name>` or `group.trait.<name>` attributes.
public struct OTLPLogsEncoder: BatchEncoder {
    /// Where requests go: the collector's `/v1/logs` on the base URL.
    public let endpoint: URL
    /// What one request may carry (see the `defaultLimits` of this encoder).
    public let limits: BatchLimits
    /// 2,000 log records and 1,000,000 bytes of body (JSON or protobuf) before gzip per request. The OTLP
    /// specification sets no request size (opentelemetry.io/docs/specs/otlp/#otlphttp); this
    /// default fills a request with a few hundred kilobytes of gzip, which every collector's
    /// default limit takes, and keeps what a request is built from small on a phone.
    public static let defaultLimits = BatchLimits(maximumEvents: 2_000, maximumBytes: 1_000_000)
    /// Which name an event is sent under.
    public let eventName: VendorEventName
    /// How the body is written: JSON (the default) or binary protobuf.
    public let encoding: BodyEncoding

    /// The encodings of an OTLP/HTTP body (opentelemetry.io/docs/specs/otlp/#otlphttp-request:
    /// "binary-encoded Protobuf payloads or JSON-encoded Protobuf payloads"; a collector's
    /// reply comes in the request's encoding).
    public enum BodyEncoding: String, Sendable, CaseIterable {
        /// Protobuf's JSON mapping, `Content-Type: application/json`: what a person reads in a
        /// proxy or in the inspector.
        case json
        /// Binary protobuf, `Content-Type: application/x-protobuf`: the format every OTLP/HTTP
        /// receiver takes ("All server components MUST support" it, the specification's
        /// "Binary Protobuf Encoding"), about a third of the JSON's bytes, and what a
        /// collector reads fastest.
        case protobuf
    }
    /// Sent with every request (authentication, tenant).
    public let headers: [String: String]
    /// OTLP/HTTP receivers take gzip bodies: "The client MAY gzip the content and in that case
    /// MUST include "Content-Encoding: gzip" request header" (https://opentelemetry.io/docs/specs/otlp/#otlphttp-request).
    public var acceptsGzipBodies: Bool { true }
    /// Analytics: a collector of product events needs the user's consent to analytics.
    public var defaultPurposes: Set<ConsentPurpose> { [.analytics] }
    /// The attribute name of a purpose's consent is this prefix and the purpose's name.
    public static let consentAttributePrefix = "measurement_events.consent."

    /// `baseURL` is the collector's OTLP/HTTP address (port 4318 by default); `/v1/logs` is
    /// appended to its path.
    ///
    /// - Parameters:
    ///   - baseURL: the collector's OTLP/HTTP address.
    ///   - headers: sent with every request (authentication, tenant).
    ///   - eventName: whether the name (the default) or the plan label becomes the record's event name.
    ///   - limits: what one request may carry; 2,000 records and 1 MB of body (before gzip) by
    ///     default. OTLP sets no size; a collector's own limit (the OpenTelemetry Collector's
    ///     `max_request_body_size`, for one) goes here, with `measure: .wire` when it limits the
    ///     compressed body it receives.
    public init(
        baseURL: URL, headers: [String: String] = [:], eventName: VendorEventName = .name,
        limits: BatchLimits = OTLPLogsEncoder.defaultLimits
    ) {
        self.init(baseURL: baseURL, headers: headers, eventName: eventName, limits: limits, encoding: .json)
    }

    /// `baseURL` is the collector's OTLP/HTTP address (port 4318 by default); `/v1/logs` is
    /// appended to its path; bodies are written in `encoding`.
    ///
    /// ```swift
    /// let encoder = OTLPLogsEncoder(baseURL: URL(string: "http://127.0.0.1:4318")!, encoding: .protobuf)
    /// ```
    ///
    /// - Parameters:
    ///   - baseURL: the collector's OTLP/HTTP address.
    ///   - headers: sent with every request (authentication, tenant).
    ///   - eventName: whether the name (the default) or the plan label becomes the record's event name.
    ///   - limits: what one request may carry; 2,000 records and 1 MB of body (before gzip) by
    ///     default.
    ///   - encoding: JSON or binary protobuf.
    public init(
        baseURL: URL, headers: [String: String] = [:], eventName: VendorEventName = .name,
        limits: BatchLimits = OTLPLogsEncoder.defaultLimits, encoding: BodyEncoding
    ) {
        self.endpoint = WireFormats.url(baseURL, path: "/v1/logs")
        self.headers = headers
        self.eventName = eventName
        self.limits = limits
        self.encoding = encoding
    }

    // Field names and JSON forms as opentelemetry-proto defines them
    // (github.com/open-telemetry/opentelemetry-proto, opentelemetry/proto/logs/v1/logs.proto:
    // ResourceLogs, ScopeLogs, LogRecord with time_unix_nano, observed_time_unix_nano,
    // severity_number, severity_text, attributes, event_name; docs/specification.md "JSON
    // Protobuf Encoding": lowerCamelCase names, 64-bit integers as strings, enums as numbers).
    // Attribute names: opentelemetry.io/docs/specs/semconv (registry: service, os, device,
    // telemetry, user, enduser, session, event).
    /// One `ExportLogsServiceRequest` in OTLP/HTTP JSON or protobuf for `events`: a resource per context, a log record per event.
    ///
    /// - Parameters:
    ///   - events: the batch, oldest first.
    ///   - context: what every request of the batch shares.
    /// - Returns: the request, and the events left out or changed.
    public func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch {
        guard !events.isEmpty else { return EncodedBatch(request: nil) }
        let runs = Self.runs(events)
        let body: [UInt8]
        let contentType: String
        switch encoding {
        case .json:
            body = write(runs, to: OTLPLogsJSONWriter())
            contentType = OTLPLogsJSONWriter.contentType
        case .protobuf:
            body = write(runs, to: OTLPLogsProtobufWriter())
            contentType = OTLPLogsProtobufWriter.contentType
        }
        var requestHeaders = headers
        requestHeaders["Content-Type"] = contentType
        return EncodedBatch(
            request: HTTPRequest(url: endpoint, headers: requestHeaders, body: body),
            adaptations: NonFiniteValues.adaptations(in: events, sentAs: "a string attribute"))
    }

    /// The events in runs of one context, in order: a `ResourceLogs` entry each.
    static func runs(_ events: [QueuedEvent]) -> [(context: EventContext?, events: ArraySlice<QueuedEvent>)] {
        var runs: [(context: EventContext?, events: ArraySlice<QueuedEvent>)] = []
        var start = events.startIndex
        var startAttribution = events.first?.event.attributionStorage
        // Attributions already found to carry the run's context: a server's records alternate
        // between a few requests, each request's records sharing one attribution (as the queue
        // reads them), so that most are found here by reference rather than by comparing
        // contexts field by field (issue 49: 3 % of a server's samples).
        var sameAsStart: [AttributionStorage] = []
        for index in events.indices.dropFirst() {
            let attribution = events[index].event.attributionStorage
            if let attribution, sameAsStart.contains(where: { $0 === attribution }) { continue }
            guard !QueuedEvent.sameContext(attribution, startAttribution) else {
                if let attribution, sameAsStart.count < 16 { sameAsStart.append(attribution) }
                continue
            }
            runs.append((events[start].context, events[start..<index]))
            start = index
            startAttribution = attribution
            sameAsStart.removeAll(keepingCapacity: true)
        }
        runs.append((events[start].context, events[start...]))
        return runs
    }

    /// The request: a `ResourceLogs` entry a run, its records in order; a run of at least twice
    /// `minimumRecordsPerChunk` records is written in up to `maximumChunks` parts at once (tests
    /// compare the two ways).
    func write<Writer: OTLPLogsWriter>(
        _ runs: [(context: EventContext?, events: ArraySlice<QueuedEvent>)], to writer: Writer,
        minimumRecordsPerChunk: Int = ConcurrentChunks.minimumPerChunk,
        maximumChunks: Int = ConcurrentChunks.maximumChunks
    ) -> [UInt8] {
        var writer = writer
        for run in runs {
            let library = run.context?.library ?? HTTPTracker.library
            writer.beginResourceLogs(
                resource: Self.resource(run.context), scopeName: library.name, scopeVersion: library.version)
            let events = run.events
            if ConcurrentChunks.count(
                for: events.count, minimumPerChunk: minimumRecordsPerChunk, maximumChunks: maximumChunks) > 1
            {
                // A server's request of thousands of records: written in parts on the machine's
                // cores at once, joined in order (the same bytes as one after the other).
                let parts = ConcurrentChunks.map(
                    events.count, minimumPerChunk: minimumRecordsPerChunk, maximumChunks: maximumChunks
                ) { chunk in
                    var part = Writer.records()
                    writeRecords(
                        events[(events.startIndex + chunk.lowerBound)..<(events.startIndex + chunk.upperBound)],
                        to: &part)
                    return part
                }
                for part in parts { writer.appendRecords(of: part) }
            } else {
                writeRecords(events, to: &writer)
            }
            writer.endResourceLogs()
        }
        return writer.finish()
    }

    /// The records of `events`, one after the other.
    private func writeRecords<Writer: OTLPLogsWriter>(_ events: ArraySlice<QueuedEvent>, to writer: inout Writer) {
        // Read in place: `for queued in events` copied each event, every string and dictionary
        // in it retained and released (issue 49).
        events.withUnsafeBufferPointer { events in
            var left = events.count
            for index in events.indices {
                left -= 1
                writeRecord(events[index], to: &writer)
                writer.endRecord(recordsLeft: left)
            }
        }
    }

    /// One log record: its attributes in this order: the args (or traits), the standard
    /// attributes (app.screen.name, …), event.name, user.id, enduser.pseudo.id, session.id,
    /// group.id, the purposes' consents.
    private func writeRecord<Writer: OTLPLogsWriter>(_ queued: QueuedEvent, to writer: inout Writer) {
        let event = queued.event
        let identity = queued.identity
        let name: String
        switch queued.kind {
        case .track: name = eventName.pick(event)
        case .identify: name = "identify"
        case .group: name = "group"
        }
        writer.beginRecord(nanoseconds: Self.nanosecondsSince1970(event.timestamp), name: name)
        switch queued.kind {
        case .track:
            for (key, value) in event.sortedVendorProperties { writer.attribute(key, value) }
        case .identify:
            for key in identity.traits.keys.sorted() { writer.attribute("user.trait." + key, identity.traits[key]!) }
        case .group:
            for key in identity.groupTraits.keys.sorted() {
                writer.attribute("group.trait." + key, identity.groupTraits[key]!)
            }
        }
        for (key, value) in Self.standardAttributes(queued) { writer.attribute(key, value) }
        writer.attribute("event.name", string: name)
        if let userID = identity.userID { writer.attribute("user.id", string: userID) }
        writer.attribute("enduser.pseudo.id", string: identity.anonymousID)
        if let sessionID = queued.sessionID { writer.attribute("session.id", decimal: sessionID) }
        if let groupID = identity.groupID { writer.attribute("group.id", string: groupID) }
        if let consents = queued.event.attribution?.purposeConsents {
            for purpose in consents.keys.sorted() {
                writer.attribute(Self.consentAttributePrefix + purpose, .bool(consents[purpose]!))
            }
        }
    }

    private static func resource(_ context: EventContext?) -> [(String, EventValue)] {
        guard let context else {
            return [("service.name", .string("unknown_service")), ("telemetry.sdk.language", .string("swift"))]
        }
        var attributes: [(String, EventValue)] = [
            ("service.name", .string(context.app.name ?? context.app.bundleID ?? "unknown_service"))
        ]
        if let version = context.app.version { attributes.append(("service.version", .string(version))) }
        // The system the app runs on ("macOS" for an iPad or Catalyst app on a Mac: the context's
        // RunningSystem); semconv/registry/attributes/os: os.type (enum, "darwin" for Apple's
        // systems), os.name ("human readable"), os.version.
        if let type = osType(context.os.name) { attributes.append(("os.type", .string(type))) }
        attributes.append(("os.name", .string(context.os.name)))
        attributes.append(("os.version", .string(context.os.version)))
        if let model = context.device.model { attributes.append(("device.model.identifier", .string(model))) }
        if let maker = context.device.manufacturer { attributes.append(("device.manufacturer", .string(maker))) }
        attributes.append(("telemetry.sdk.name", .string(context.library.name)))
        attributes.append(("telemetry.sdk.version", .string(context.library.version)))
        attributes.append(("telemetry.sdk.language", .string("swift")))
        let named = Set(attributes.map(\.0))
        for key in context.extra.keys.sorted() where !named.contains(key) {
            attributes.append((key, context.extra[key]!))
        }
        return attributes
    }

    /// The semantic conventions' `os.type` values: `darwin` for every Apple system.
    private static func osType(_ name: String) -> String? {
        switch name {
        case "iOS", "iPadOS", "macOS", "tvOS", "watchOS", "visionOS": return "darwin"
        case "Linux", "Android": return "linux"
        case "Windows": return "windows"
        default: return nil
        }
    }

    /// Nanoseconds since 1970 (microsecond precision, as `Date` holds), written as a decimal
    /// string; times before 1970 give 0, times past UInt64 (the year 2554) its maximum.
    static func nanosecondsSince1970(_ date: Date) -> UInt64 {
        let microseconds = UnixTime.microseconds(date)
        guard microseconds > 0 else { return 0 }
        guard microseconds < 18_446_744_073_709_551 else { return UInt64.max }
        return UInt64(microseconds) * 1000  // fits: checked just above
    }
}

// The collector's replies, as the OTLP specification describes them
// (opentelemetry.io/docs/specs/otlp/, "OTLP/HTTP Response"):
// - "Failures": "The requests that receive a response status code listed in following table
//   SHOULD be retried. All other 4xx or 5xx response status codes MUST NOT be retried": 429 Too
//   Many Requests, 502 Bad Gateway, 503 Service Unavailable, 504 Gateway Timeout; and the client
//   SHOULD honour a `Retry-After` header (the uploader does, for every retried reply).
// - "Partial Success": a partly accepted request gets 200 OK with an ExportLogsServiceResponse
//   whose `partial_success` holds `rejected_log_records` (int64) and, SHOULD, a human-readable
//   `error_message`; a full success MAY carry a warning there with 0 rejected. The response has
//   the request's Content-Type, here JSON (lowerCamelCase keys; 64-bit integers as decimal
//   strings, "JSON Protobuf Encoding"); the snake_case names are read too.
extension OTLPLogsEncoder {
    /// 429, 502, 503 and 504 only, the codes the OTLP specification names as retryable (and 1xx
    /// and 3xx, which no server should end on): a collector answering 500 to one payload then
    /// costs that payload, not the queue.
    ///
    /// - Parameter response: a reply that is not a 2xx and does not refuse the configuration.
    /// - Returns: whether to send the request again later.
    public func retries(_ response: HTTPResponse) -> Bool {
        switch response.status {
        case 429, 502, 503, 504, 100..<200, 300..<400: return true
        default: return false
        }
    }

    /// Reads `partialSuccess.rejectedLogRecords` and `errorMessage` from a 200's body (JSON, or
    /// protobuf when the request was protobuf and the reply does not say it is JSON): the
    /// records the collector rejected, which the tracker counts as refused. A count that is not
    /// a whole number of at least 0 is reported as such (nothing is counted as refused); one
    /// larger than the request's records is reported, and all of them count as refused; a
    /// protobuf reply that cannot be read is reported, and nothing is counted as refused.
    ///
    /// - Parameters:
    ///   - response: the collector's 2xx reply.
    ///   - count: the log records the request carried.
    /// - Returns: the rejected count and the collector's message; `nil` when the body has no
    ///   `partialSuccess` (or is not a JSON object) or it rejects nothing and says nothing.
    public func partialRefusal(in response: HTTPResponse, ofEventCount count: Int) -> PartialRefusal? {
        if encoding == .protobuf, response.headers["content-type"]?.contains("json") != true {
            return Self.protobufPartialRefusal(in: response.body, ofEventCount: count)
        }
        var parser = JSONParser(bytes: response.body, maximumDepth: 8)
        guard let root = try? parser.parse(), case .object(let members) = root.value,
            let partial = members.first(where: { $0.key == "partialSuccess" || $0.key == "partial_success" }),
            case .object(let fields) = partial.value.value
        else { return nil }
        var rejected: JSONNode?
        var message = ""
        for field in fields {
            switch (field.key, field.value.value) {
            case ("rejectedLogRecords", _), ("rejected_log_records", _): rejected = field.value
            case ("errorMessage", .string(let text)), ("error_message", .string(let text)): message = text
            default: continue
            }
        }
        guard let rejected else { return Self.partialRefusal(rejected: nil, message: message, ofEventCount: count) }
        let text: String
        switch rejected.value {
        case .number(let number), .string(let number): text = number
        default: text = rejected.summary
        }
        return Self.partialRefusal(
            rejected: (text, rejected.summary), message: message, ofEventCount: count)
    }

    /// `ExportLogsServiceResponse` { `partial_success` (1) → `ExportLogsPartialSuccess` {
    /// `rejected_log_records` (1, int64), `error_message` (2) } } (collector/logs/v1/logs_service.proto).
    private static func protobufPartialRefusal(in body: [UInt8], ofEventCount count: Int) -> PartialRefusal? {
        var rejected: Int64?
        var message = ""
        do {
            var response = ProtobufReader(body[...])
            while let field = try response.next() {
                guard field.number == 1, case .lengthDelimited(let bytes) = field.value else { continue }
                var partial = ProtobufReader(bytes)
                while let field = try partial.next() {
                    switch (field.number, field.value) {
                    case (1, .varint(let value)): rejected = Int64(bitPattern: value)
                    case (2, .lengthDelimited(let text)): message = String(decoding: text, as: UTF8.self)
                    default: continue
                    }
                }
            }
        } catch {
            return PartialRefusal(
                refused: 0,
                message: "Its reply of \(body.count) bytes is not an ExportLogsServiceResponse (\(error)): none "
                    + "counted as refused.")
        }
        guard let rejected else { return partialRefusal(rejected: nil, message: message, ofEventCount: count) }
        return partialRefusal(rejected: (String(rejected), String(rejected)), message: message, ofEventCount: count)
    }

    /// The refusal a reply's `partial_success` makes: `rejected` is the count as written and
    /// as reported, `nil` when the reply has none.
    private static func partialRefusal(
        rejected: (text: String, summary: String)?, message: String, ofEventCount count: Int
    ) -> PartialRefusal? {
        let said = message.isEmpty ? "The collector gave no message." : "The collector said: \(message)"
        guard let (text, summary) = rejected else {
            return message.isEmpty ? nil : PartialRefusal(refused: 0, message: said)
        }
        guard let number = Int(text), number >= 0 else {  // checked: nil beyond Int
            return PartialRefusal(
                refused: 0,
                message: "Its partial_success.rejectedLogRecords is \(summary), not a count of "
                    + "records: none counted as refused. \(said)")
        }
        if number == 0 && message.isEmpty { return nil }
        if number > count {
            return PartialRefusal(
                refused: count,
                message: "Its partial_success.rejectedLogRecords is \(number), more than the \(count) records "
                    + "sent: all of them counted as refused. \(said)")
        }
        return PartialRefusal(refused: number, message: said)
    }
}
