import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
internal import MeasurementEventsJSON

/// Encodes for any OpenTelemetry Collector (or backend) that takes OTLP/HTTP with JSON logs
/// (`POST <base>/v1/logs`, `Content-Type: application/json`).
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
/// - `timeUnixNano` and `observedTimeUnixNano`: when the event was posted (nanoseconds as
///   decimal strings, as OTLP/JSON writes 64-bit integers);
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
    /// 2,000 log records and 1,000,000 bytes of JSON before gzip per request. The OTLP
    /// specification sets no request size (opentelemetry.io/docs/specs/otlp/#otlphttp); this
    /// default fills a request with a few hundred kilobytes of gzip, which every collector's
    /// default limit takes, and keeps what a request is built from small on a phone.
    public static let defaultLimits = BatchLimits(maximumEvents: 2_000, maximumBytes: 1_000_000)
    /// Which name an event is sent under.
    public let eventName: VendorEventName
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
    ///   - limits: what one request may carry; 2,000 records and 1 MB of JSON (before gzip) by
    ///     default. OTLP sets no size; a collector's own limit (the OpenTelemetry Collector's
    ///     `max_request_body_size`, for one) goes here, with `measure: .wire` when it limits the
    ///     compressed body it receives.
    public init(
        baseURL: URL, headers: [String: String] = [:], eventName: VendorEventName = .name,
        limits: BatchLimits = OTLPLogsEncoder.defaultLimits
    ) {
        self.endpoint = WireFormats.url(baseURL, path: "/v1/logs")
        self.headers = headers
        self.eventName = eventName
        self.limits = limits
    }

    // Field names and JSON forms as opentelemetry-proto defines them
    // (github.com/open-telemetry/opentelemetry-proto, opentelemetry/proto/logs/v1/logs.proto:
    // ResourceLogs, ScopeLogs, LogRecord with time_unix_nano, observed_time_unix_nano,
    // severity_number, severity_text, attributes, event_name; docs/specification.md "JSON
    // Protobuf Encoding": lowerCamelCase names, 64-bit integers as strings, enums as numbers).
    // Attribute names: opentelemetry.io/docs/specs/semconv (registry: service, os, device,
    // telemetry, user, enduser, session, event).
    /// One `ExportLogsServiceRequest` in OTLP/HTTP JSON for `events`: a resource per context, a log record per event.
    ///
    /// - Parameters:
    ///   - events: the batch, oldest first.
    ///   - context: what every request of the batch shares.
    /// - Returns: the request, and the events left out or changed.
    public func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch {
        guard !events.isEmpty else { return EncodedBatch(request: nil) }
        var runs: [(context: EventContext?, events: ArraySlice<QueuedEvent>)] = []
        var start = events.startIndex
        for index in events.indices.dropFirst() where events[index].context != events[start].context {
            runs.append((events[start].context, events[start..<index]))
            start = index
        }
        runs.append((events[start].context, events[start...]))
        var body = JSONWriter()
        body.object { object in
            object.field("resourceLogs") {
                $0.array(runs) { json, run in
                    json.object { resourceLogs in
                        resourceLogs.field("resource") {
                            $0.object {
                                $0.field("attributes") { Self.writeAttributes(Self.resource(run.context), to: &$0) }
                            }
                        }
                        resourceLogs.field("scopeLogs") {
                            $0.array([run.events]) { json, records in
                                json.object { scopeLogs in
                                    scopeLogs.field("scope") { Self.writeScope(run.context, to: &$0) }
                                    scopeLogs.field("logRecords") { json in
                                        json.raw("[")
                                        for index in records.indices {
                                            if index > records.startIndex { json.raw(",") }
                                            let start = json.bytes.count
                                            writeRecord(records[index], to: &json)
                                            // Room for the rest at the first record's size, so
                                            // that a body of a megabyte grows once, not 20 times.
                                            if index == records.startIndex {
                                                let rest = records.endIndex - index - 1
                                                json.reserveCapacity(forMore: (json.bytes.count - start + 16) * rest)
                                            }
                                        }
                                        json.raw("]")
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        var requestHeaders = headers
        requestHeaders["Content-Type"] = "application/json"
        return EncodedBatch(
            request: HTTPRequest(url: endpoint, headers: requestHeaders, body: body.bytes),
            adaptations: NonFiniteValues.adaptations(in: events, sentAs: "a string attribute"))
    }

    private func writeRecord(_ queued: QueuedEvent, to json: inout JSONWriter) {
        let event = queued.event
        let identity = queued.identity
        let name: String
        switch queued.kind {
        case .track: name = eventName.pick(event)
        case .identify: name = "identify"
        case .group: name = "group"
        }
        let nanoseconds = Self.nanosecondsSince1970(event.timestamp)
        // What `object` and `field` would write, without a closure per field and without an
        // array of the attributes or a string per number: the records are most of a request
        // (issue 49: 15 % of a server's samples went to their closures, then 4.7 µs an event
        // to the record).
        json.raw("{\"timeUnixNano\":")
        json.quoted(nanoseconds)
        json.raw(",\"observedTimeUnixNano\":")
        json.quoted(nanoseconds)
        json.raw(",\"severityNumber\":9,\"severityText\":\"INFO\",\"eventName\":")
        json.string(name)
        json.raw(",\"attributes\":[")
        // The attributes in this order: the args (or traits), the standard attributes
        // (app.screen.name, …), event.name, user.id, enduser.pseudo.id, session.id, group.id,
        // the purposes' consents.
        var first = true
        switch queued.kind {
        case .track:
            for (key, value) in event.sortedVendorProperties {
                Self.writeAttribute(key, value, first: &first, to: &json)
            }
        case .identify:
            for key in identity.traits.keys.sorted() {
                Self.writeAttribute("user.trait." + key, identity.traits[key]!, first: &first, to: &json)
            }
        case .group:
            for key in identity.groupTraits.keys.sorted() {
                Self.writeAttribute("group.trait." + key, identity.groupTraits[key]!, first: &first, to: &json)
            }
        }
        for (key, value) in Self.standardAttributes(queued) {
            Self.writeAttribute(key, value, first: &first, to: &json)
        }
        json.raw(first ? "{\"key\":\"event.name\"" : ",{\"key\":\"event.name\"")
        json.raw(",\"value\":{\"stringValue\":")
        json.string(name)
        if let userID = identity.userID {
            json.raw("}},{\"key\":\"user.id\",\"value\":{\"stringValue\":")
            json.string(userID)
        }
        json.raw("}},{\"key\":\"enduser.pseudo.id\",\"value\":{\"stringValue\":")
        json.string(identity.anonymousID)
        if let sessionID = queued.sessionID {
            json.raw("}},{\"key\":\"session.id\",\"value\":{\"stringValue\":")
            json.quoted(sessionID)
        }
        if let groupID = identity.groupID {
            json.raw("}},{\"key\":\"group.id\",\"value\":{\"stringValue\":")
            json.string(groupID)
        }
        json.raw("}}")
        if let consents = queued.event.attribution?.purposeConsents {
            first = false
            for purpose in consents.keys.sorted() {
                Self.writeAttribute(
                    Self.consentAttributePrefix + purpose, .bool(consents[purpose]!), first: &first, to: &json)
            }
        }
        json.raw("]}")
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

    private static func writeScope(_ context: EventContext?, to json: inout JSONWriter) {
        let library =
            context?.library ?? HTTPTracker.library
        json.object { scope in
            scope.field("name") { $0.string(library.name) }
            scope.field("version") { $0.string(library.version) }
        }
    }

    /// `[{"key": …, "value": {"stringValue" | "intValue" | "doubleValue" | "boolValue": …}}]`.
    /// Written piece by piece rather than with `object` and `field` (see `writeRecord`).
    private static func writeAttributes(_ attributes: [(String, EventValue)], to json: inout JSONWriter) {
        json.raw("[")
        var first = true
        for (key, value) in attributes { writeAttribute(key, value, first: &first, to: &json) }
        json.raw("]")
    }

    /// One attribute of an attributes array, after a comma unless it is the `first`.
    private static func writeAttribute(
        _ key: String, _ value: EventValue, first: inout Bool, to json: inout JSONWriter
    ) {
        json.raw(first ? "{\"key\":" : ",{\"key\":")
        first = false
        json.string(key)
        switch value {
        case .string(let string):
            json.raw(",\"value\":{\"stringValue\":")
            json.string(string)
        case .int(let int):
            json.raw(",\"value\":{\"intValue\":")
            json.quoted(Int64(int))
        case .double(let double) where !double.isFinite:
            // Some receivers refuse proto3 JSON's "NaN" in a doubleValue (see NonFiniteValues).
            json.raw(",\"value\":{\"stringValue\":")
            json.string(NonFiniteValues.spelling(double))
        case .double(let double):
            json.raw(",\"value\":{\"doubleValue\":")
            json.double(double)
        case .bool(let bool):
            json.raw(",\"value\":{\"boolValue\":")
            json.bool(bool)
        }
        json.raw("}}")
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

    /// Reads `partialSuccess.rejectedLogRecords` and `errorMessage` from a 200's JSON body: the
    /// records the collector rejected, which the tracker counts as refused. A count that is not
    /// a whole number of at least 0 is reported as such (nothing is counted as refused); one
    /// larger than the request's records is reported, and all of them count as refused.
    ///
    /// - Parameters:
    ///   - response: the collector's 2xx reply.
    ///   - count: the log records the request carried.
    /// - Returns: the rejected count and the collector's message; `nil` when the body has no
    ///   `partialSuccess` (or is not a JSON object) or it rejects nothing and says nothing.
    public func partialRefusal(in response: HTTPResponse, ofEventCount count: Int) -> PartialRefusal? {
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
        let said = message.isEmpty ? "The collector gave no message." : "The collector said: \(message)"
        guard let rejected else {
            return message.isEmpty ? nil : PartialRefusal(refused: 0, message: said)
        }
        let text: String
        switch rejected.value {
        case .number(let number), .string(let number): text = number
        default: text = rejected.summary
        }
        guard let number = Int(text), number >= 0 else {  // checked: nil beyond Int
            return PartialRefusal(
                refused: 0,
                message: "Its partial_success.rejectedLogRecords is \(rejected.summary), not a count of "
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
