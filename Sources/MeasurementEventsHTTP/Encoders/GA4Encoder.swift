import Foundation
import MeasurementEvents

/// Encodes for the Google Analytics 4 Measurement Protocol
/// (`POST https://www.google-analytics.com/mp/collect?measurement_id=…&api_secret=…`).
///
/// ```swift
/// let tracker = try HTTPTracker(
///     encoder: GA4Encoder(measurementID: "G-XXXXXXX", apiSecret: "SECRET"),
///     directory: applicationSupport.appendingPathComponent("analytics/ga4"))
/// ```
///
/// The body is `{"client_id": <anonymous id>, "user_id": …, "events": [{"name", "params",
/// "timestamp_micros"}]}`, at most 25 events per request and 130 KB.
///
/// GA4's rules, and what this encoder does about them:
/// - Event names: letters, digits and underscores, starting with a letter, at most 40
///   characters. Every other character becomes `_` (`feed/item_tapped` → `feed_item_tapped`,
///   counted as an adaptation). A name that still breaks a rule — too long, not starting with a
///   letter, reserved (`session_start`, `screen_view`, …) or with a reserved prefix
///   (`_`, `firebase_`, `ga_`, `google_`, `gtag.`) — is rejected, counted and logged.
///   The event's own name is used by default; pass `eventName: .labelWhenSet` to use plan labels.
/// - Params (args plus `event_type` and `category`): names follow the event-name rules
///   (adapted the same way; reserved or invalid ones are dropped); at most 25 per event (the
///   first 25 in key order are kept); string values are cut to 100 characters; booleans are
///   sent as `"true"`/`"false"`. Each change is counted and logged as an adaptation.
/// - GA4 does not de-duplicate: a batch retried after a lost response can count twice.
/// - GA4 answers 2xx even to events it drops; check them with its `/debug/mp/collect`.
public struct GA4Encoder: BatchEncoder {
    public static let defaultBaseURL = URL(string: "https://www.google-analytics.com")!
    public static let maximumNameLength = 40
    public static let maximumParams = 25
    public static let maximumStringValueLength = 100
    public static let maximumUserIDLength = 256

    /// Event names GA4 reserves for its own events.
    public static let reservedEventNames: Set<String> = [
        "ad_activeview", "ad_click", "ad_exposure", "ad_impression", "ad_query", "ad_reward",
        "adunit_exposure", "app_background", "app_clear_data", "app_exception", "app_install",
        "app_remove", "app_store_refund", "app_update", "app_upgrade", "dynamic_link_app_open",
        "dynamic_link_app_update", "dynamic_link_first_open", "error", "firebase_campaign",
        "firebase_in_app_message_action", "firebase_in_app_message_dismiss",
        "firebase_in_app_message_impression", "first_open", "first_visit", "in_app_purchase",
        "notification_dismiss", "notification_foreground", "notification_open", "notification_receive",
        "notification_send", "os_update", "screen_view", "session_start", "user_engagement",
    ]
    public static let reservedEventPrefixes = ["_", "firebase_", "ga_", "google_", "gtag."]
    public static let reservedParamPrefixes = ["_", "firebase_", "ga_", "google_"]

    public let measurementID: String
    public let apiSecret: String
    public let endpoint: URL
    public let limits: BatchLimits
    public let eventName: VendorEventName

    public init(
        measurementID: String,
        apiSecret: String,
        baseURL: URL = GA4Encoder.defaultBaseURL,
        eventName: VendorEventName = .name,
        limits: BatchLimits = BatchLimits(maximumEvents: 25, maximumBytes: 130_000)
    ) {
        self.measurementID = measurementID
        self.apiSecret = apiSecret
        self.endpoint = WireFormats.url(
            baseURL, path: "/mp/collect", query: [("measurement_id", measurementID), ("api_secret", apiSecret)])
        self.eventName = eventName
        self.limits = BatchLimits(
            maximumEvents: min(limits.maximumEvents, 25), maximumBytes: min(limits.maximumBytes, 130_000))
    }

    /// The GA4 form of a name: every character other than an ASCII letter, digit or `_`
    /// replaced by `_`; or why GA4 cannot take it.
    public static func ga4Name(_ name: String, reservedNames: Set<String> = [], reservedPrefixes: [String])
        -> Result<String, NameRejection>
    {
        let mapped = String(String.UnicodeScalarView(name.unicodeScalars.map { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")
                ? scalar : "_"
        }))
        guard let first = mapped.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else {
            if let prefix = reservedPrefixes.first(where: { mapped.hasPrefix($0) }) {
                return .failure(NameRejection(reason: "\"\(mapped)\" starts with the reserved prefix \"\(prefix)\""))
            }
            return .failure(NameRejection(reason: "\"\(mapped)\" does not start with a letter"))
        }
        if mapped.count > maximumNameLength {
            return .failure(NameRejection(
                reason: "\"\(mapped)\" is \(mapped.count) characters; GA4 takes at most \(maximumNameLength)"))
        }
        if reservedNames.contains(mapped) {
            return .failure(NameRejection(reason: "\"\(mapped)\" is reserved by GA4"))
        }
        if let prefix = reservedPrefixes.first(where: { mapped.hasPrefix($0) }) {
            return .failure(NameRejection(reason: "\"\(mapped)\" starts with the reserved prefix \"\(prefix)\""))
        }
        return .success(mapped)
    }

    public struct NameRejection: Error, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    public func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch {
        var rejected: [EncodedBatch.Rejection] = []
        var adaptations: [EncodedBatch.Rejection] = []
        var encodedEvents: [[UInt8]] = []
        for queued in events {
            let event = queued.event
            let original = eventName.pick(event)
            let name: String
            switch Self.ga4Name(original, reservedNames: Self.reservedEventNames, reservedPrefixes: Self.reservedEventPrefixes) {
            case .success(let mapped): name = mapped
            case .failure(let rejection):
                rejected.append(.init(event: event.name, reason: "GA4 event name: \(rejection.reason)"))
                continue
            }
            if name != original {
                adaptations.append(.init(event: event.name, reason: "sent to GA4 as \(name)"))
            }
            let params = ga4Params(event, adaptations: &adaptations)
            var json = JSONWriter()
            json.object { object in
                object.field("name") { $0.string(name) }
                object.field("params") { $0.object(params) }
                object.field("timestamp_micros") { $0.int64(WireFormats.microseconds(event.timestamp)) }
            }
            encodedEvents.append(json.bytes)
        }
        guard !encodedEvents.isEmpty else { return EncodedBatch(request: nil, rejected: rejected, adaptations: adaptations) }
        var userID = events.first?.userID
        if let id = userID, id.count > Self.maximumUserIDLength {
            userID = nil
            adaptations.append(.init(
                event: events[0].event.name, reason: "user id left out: GA4 takes at most \(Self.maximumUserIDLength) characters"))
        }
        var body = JSONWriter()
        body.object { object in
            object.field("client_id") { $0.string(context.anonymousID) }
            if let userID { object.field("user_id") { $0.string(userID) } }
            object.field("events") { $0.array(encodedEvents) { json, event in json.raw(event) } }
        }
        let request = HTTPRequest(url: endpoint, headers: ["Content-Type": "application/json"], body: body.bytes)
        return EncodedBatch(request: request, rejected: rejected, adaptations: adaptations)
    }

    private func ga4Params(_ event: MeasurementEvent, adaptations: inout [EncodedBatch.Rejection]) -> EventArgs {
        var params: EventArgs = [:]
        var dropped: [String] = []
        for key in event.vendorProperties.keys.sorted() {
            let value = event.vendorProperties[key]!
            guard case .success(let name) = Self.ga4Name(key, reservedPrefixes: Self.reservedParamPrefixes) else {
                adaptations.append(.init(event: event.name, reason: "param \"\(key)\" dropped: not a valid GA4 param name"))
                continue
            }
            if params[name] != nil || params.count >= Self.maximumParams {
                dropped.append(key)
                continue
            }
            if name != key { adaptations.append(.init(event: event.name, reason: "param \"\(key)\" sent as \(name)")) }
            switch value {
            case .string(let string) where string.count > Self.maximumStringValueLength:
                params[name] = .string(String(string.prefix(Self.maximumStringValueLength)))
                adaptations.append(.init(
                    event: event.name, reason: "param \"\(key)\" cut to \(Self.maximumStringValueLength) characters"))
            case .bool(let bool):
                params[name] = .string(bool ? "true" : "false")
            default:
                params[name] = value
            }
        }
        if !dropped.isEmpty {
            adaptations.append(.init(
                event: event.name,
                reason: "params dropped (GA4 takes \(Self.maximumParams) per event, names unique): \(dropped.joined(separator: ", "))"))
        }
        return params
    }
}
