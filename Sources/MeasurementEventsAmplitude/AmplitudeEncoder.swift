import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP
internal import MeasurementEventsJSON

/// Encodes for Amplitude's HTTP V2 API (`POST https://api2.amplitude.com/2/httpapi`).
///
/// ```swift
/// let tracker = try HTTPTracker(
///     encoder: AmplitudeEncoder(apiKey: "YOUR_API_KEY"),
///     directory: applicationSupport.appendingPathComponent("analytics/amplitude"))
/// ```
///
/// The body is `{"api_key": …, "events": […]}`; each event has `event_type` (the plan label
/// when set, else the event name), `event_properties` (args plus `event_type` and
/// `category`), `time` in milliseconds, `insert_id` (the event id: Amplitude ignores a
/// repeated insert id for 7 days, so retried uploads do not double count), `device_id` (the
/// anonymous id), `user_id` when set, `session_id` (-1 when none), the device and app
/// (`platform`, `os_name`, `os_version`, `device_model`, `device_manufacturer`,
/// `app_version`, `language`) and, when the user acts for a group, `groups`
/// (`{groupType: groupID}`). An identify is an `$identify` event with `user_properties`
/// `{"$set": traits}`; a group a `$groupidentify` event with `groups` and
/// `group_properties` `{"$set": traits}`. Amplitude ignores ids shorter than 5 characters;
/// such a user id is left out, counted and logged as an adaptation.
///
/// Limits: Amplitude asks for requests under 1 MB and fewer than 2,000 events, and takes 30 events
/// a second of one device or user on the HTTP V2 API. A request of at most
/// ``realTimeEventsPerRequest`` events goes to `/2/httpapi`; a larger one (what an app sends after
/// a time offline) to the Batch Event Upload API, `/batch`, which takes the same body and 1,000
/// events a second of one device: Amplitude's own advice for historical data and for more than 30
/// events a second of one device. Requests hold at most 1,000 events (``defaultLimits``), product
/// events included. A 429 that names throttled devices or users waits 30 seconds before the
/// request goes again (``retryDelay(after:of:)``); a `413 Payload Too Large` halves the batch.
/// Projects on Amplitude's Starter plan, asked to send at most 10 events per batch, pass
/// `limits: BatchLimits(maximumEvents: 10, maximumBytes: 1_000_000)`.
/// EU projects: `baseURL: URL(string: "https://api.eu.amplitude.com")!`.
///
/// Consent: Amplitude's HTTP V2 and Batch Event Upload APIs have no consent field (their
/// references, amplitude.com/docs/apis/analytics/http-v2 and .../batch-event-upload, list every
/// event field; none carries consent). An Amplitude destination needs the analytics purpose by
/// default (``defaultPurposes``): an event posted while analytics was not granted is not sent at
/// all, and a denial deletes what its queue holds.
public struct AmplitudeEncoder: BatchEncoder {
    /// Amplitude's US endpoint, `https://api2.amplitude.com`.
    public static let defaultBaseURL = URL(string: "https://api2.amplitude.com")!
    /// The shortest user or device id Amplitude accepts; shorter user ids are left out.
    public static let minimumIDLength = 5
    /// 1,000 events and 1,000,000 bytes of JSON per request. Amplitude's HTTP V2 API
    /// (amplitude.com/docs/apis/analytics/http-v2, "Upload limit"): "Keep request sizes under
    /// 1 MB with fewer than 2000 events per request. When you exceed these size limits, you get a
    /// 413 error." A request of more than ``realTimeEventsPerRequest`` events goes to the Batch
    /// Event Upload API (amplitude.com/docs/apis/analytics/batch-event-upload, "Limits and
    /// considerations"): "Each API key can send up to 1000 events per second for any individual
    /// device ID or user ID"; an app's requests are one device's, so 1,000 is the most one request
    /// can carry without being throttled. The body is sent without gzip, so the payload is what
    /// arrives (under the Batch API's 20 MB and HTTP V2's 1 MB alike).
    public static let defaultLimits = BatchLimits(maximumEvents: 1_000, maximumBytes: 1_000_000, measure: .payload)
    /// 30: the most events a request sends to the HTTP V2 API (`/2/httpapi`); a larger one goes to
    /// the Batch Event Upload API (`/batch`). The HTTP V2 API throttles "users and devices that
    /// exceed 30 events per second (measured as an average over a recent window of time)", and
    /// Amplitude advises the Batch Event Upload API for bulk and non-real-time uploads
    /// (amplitude.com/docs/faq/api-choice) and "to send historical data, or more than 30 events
    /// per second for one user or device" (amplitude.com/docs/apis/analytics/http-api-batching-retries).
    public static let realTimeEventsPerRequest = 30
    /// 30 seconds: how long a device or user Amplitude throttled waits before its events go
    /// again. amplitude.com/docs/faq/api-choice: past the limit "you should pause sending events
    /// for that user or device for 30 seconds before retrying".
    public static let throttlePause: TimeInterval = 30
    /// One hour: how long a device or user over Amplitude's daily quota waits before its events
    /// go again (the quota is per day; the request is asked again each hour until it is taken).
    public static let dailyQuotaPause: TimeInterval = 3_600

    /// The project's API key, sent in each request's body.
    public let apiKey: String
    /// Where requests of at most ``realTimeEventsPerRequest`` events go: Amplitude's `/2/httpapi`
    /// on the base URL.
    public let endpoint: URL
    /// Where larger requests go: the Batch Event Upload API, `/batch` on the base URL. It takes
    /// the HTTP V2 body (`api_key`, `events`) and answers with the same codes.
    public let batchEndpoint: URL
    /// What one request may carry (see the `defaultLimits` of this encoder).
    public let limits: BatchLimits
    /// Which name an event is sent under.
    public let eventName: VendorEventName
    /// The group type groups are sent under (Amplitude groups are `{type: value}`).
    public let groupType: String
    /// Analytics: Amplitude measures product usage.
    public var defaultPurposes: Set<ConsentPurpose> { [.analytics] }

    /// Makes an encoder for Amplitude's HTTP V2 API.
    ///
    /// - Parameters:
    ///   - apiKey: the Amplitude project's API key.
    ///   - baseURL: the API's address; `/2/httpapi` is appended.
    ///   - eventName: whether the plan label or the name becomes `event_type`.
    ///   - groupType: the group type groups are sent under.
    ///   - limits: what one request may carry; ``defaultLimits`` (1,000 events and 1 MB) by default.
    public init(
        apiKey: String,
        baseURL: URL = AmplitudeEncoder.defaultBaseURL,
        eventName: VendorEventName = .labelWhenSet,
        groupType: String = "group",
        limits: BatchLimits = AmplitudeEncoder.defaultLimits
    ) {
        self.apiKey = apiKey
        self.endpoint = WireFormats.url(baseURL, path: "/2/httpapi")
        self.batchEndpoint = WireFormats.url(baseURL, path: "/batch")
        self.eventName = eventName
        self.groupType = groupType
        self.limits = limits
    }

    /// One Amplitude HTTP V2 request (`api_key`, `events`) for `events`.
    ///
    /// - Parameters:
    ///   - events: the batch, oldest first.
    ///   - context: what every request of the batch shares.
    /// - Returns: the request, and the events left out or changed.
    public func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch {
        guard !events.isEmpty else { return EncodedBatch(request: nil) }
        var adaptations: [EncodedBatch.Rejection] = []
        var body = JSONWriter()
        body.object { object in
            object.field("api_key") { $0.string(apiKey) }
            object.field("events") {
                // The events, then one revenue event per product of each order of several
                // products (AmplitudeEncoder+StandardCalls.swift).
                $0.array(Self.sentEvents(events)) { json, sent in
                    let queued = events[sent.position]
                    var userID = queued.identity.userID
                    if let id = userID, id.count < Self.minimumIDLength {
                        userID = nil
                        if sent.product == nil {
                            adaptations.append(
                                .init(
                                    event: queued.event.name,
                                    reason:
                                        "user id left out: Amplitude ignores ids shorter than \(Self.minimumIDLength) characters"
                                ))
                        }
                    }
                    if let product = sent.product {
                        writeProductEvent(queued, product: product, userID: userID, to: &json)
                    } else {
                        writeEvent(queued, userID: userID, to: &json)
                    }
                }
            }
        }
        // A backlog goes to the Batch Event Upload API, live traffic to HTTP V2 (realTimeEventsPerRequest).
        let url = requestEntryCount(of: events) > Self.realTimeEventsPerRequest ? batchEndpoint : endpoint
        let request = HTTPRequest(
            url: url, headers: ["Accept": "*/*", "Content-Type": "application/json"], body: body.bytes)
        adaptations += NonFiniteValues.adaptations(in: events, sentAs: "null")
        return EncodedBatch(request: request, adaptations: adaptations)
    }

    /// The request's events as Amplitude counts them against its 2,000 per request: each event,
    /// and one revenue event per product of each order of several products.
    ///
    /// - Parameter events: the events of one request.
    /// - Returns: the length of the request's `events`.
    public func requestEntryCount(of events: [QueuedEvent]) -> Int { Self.sentEvents(events).count }

    // Keys as Amplitude's HTTP V2 API reference names them
    // (amplitude.com/docs/apis/analytics/http-v2, "Keys for the event argument"): user_id,
    // device_id, event_type, time, event_properties, user_properties, groups, group_properties,
    // app_version, platform, os_name, os_version, device_manufacturer, device_model, language,
    // session_id ("-1 is the same as no session_id"), insert_id. `$identify` with
    // user_properties {"$set": …} and `$groupidentify` with group_properties: Amplitude's
    // Identify API (amplitude.com/docs/apis/analytics/identify, "User property operations")
    // and Group Identify API (amplitude.com/docs/apis/analytics/group-identify).
    private func writeEvent(_ queued: QueuedEvent, userID: String?, to json: inout JSONWriter) {
        let event = queued.event
        let identity = queued.identity
        let context = queued.context
        let standard = AmplitudeStandardFields(queued)  // screen view, revenue
        json.object { fields in
            if let version = context?.app.version { fields.field("app_version") { $0.string(version) } }
            fields.field("device_id") { $0.string(identity.anonymousID) }
            if let maker = context?.device.manufacturer { fields.field("device_manufacturer") { $0.string(maker) } }
            if let model = context?.device.model { fields.field("device_model") { $0.string(model) } }
            if queued.kind == .track {
                fields.field("event_properties") { $0.object(standard?.eventProperties ?? event.vendorProperties) }
            }
            fields.field("event_type") { $0.string(standard?.eventType ?? eventType(queued)) }
            if queued.kind == .group {
                fields.field("group_properties") { $0.object { $0.field("$set") { $0.object(identity.groupTraits) } } }
            }
            if let groupID = identity.groupID {
                fields.field("groups") { $0.object { $0.field(groupType) { $0.string(groupID) } } }
            }
            fields.field("insert_id") { $0.string(event.id.uuidString) }
            if let locale = context?.locale { fields.field("language") { $0.string(locale) } }
            // The system the app runs on ("macOS" for an iPad or Catalyst app on a Mac: the
            // context's RunningSystem); http-v2, "Keys for the event argument": os_name,
            // os_version, platform.
            if let os = context?.os {
                fields.field("os_name") { $0.string(os.name) }
                fields.field("os_version") { $0.string(os.version) }
                fields.field("platform") { $0.string(os.name) }
            }
            fields.field("session_id") { $0.int64(queued.sessionID ?? -1) }
            fields.field("time") { $0.int64(WireFormats.milliseconds(event.timestamp)) }
            if let userID { fields.field("user_id") { $0.string(userID) } }
            if queued.kind == .identify {
                fields.field("user_properties") { $0.object { $0.field("$set") { $0.object(identity.traits) } } }
            }
            standard?.writeRevenue(to: &fields)
            AmplitudeStandardFields.writeCampaign(queued, to: &fields)  // utm_* user properties
        }
    }

    private func eventType(_ queued: QueuedEvent) -> String {
        switch queued.kind {
        case .track: return eventName.pick(queued.event)
        case .identify: return "$identify"
        case .group: return "$groupidentify"
        }
    }

    // Amplitude's 400 reply (amplitude.com/docs/apis/analytics/http-v2, "400 response
    // InvalidRequestError"): `error` is one of "Invalid request path", "Missing request body",
    // "Invalid JSON request body", "Request missing required field" (with `missing_field`),
    // "Invalid event JSON", "Invalid API key", "Invalid field values on some events";
    // `events_with_invalid_fields` and `events_with_missing_fields` map field names to indexes
    // into the request's `events`; "Properties (SilencedDeviceID)": `silenced_devices` is the
    // array of silenced `device_id`s, `silenced_events` the array of indexes of the events whose
    // device_id got silenced.

    /// Amplitude's 400 names the bad events by their index in the request's `events`, under
    /// `events_with_invalid_fields` and `events_with_missing_fields` (field → indices) and
    /// `silenced_events` (indices), and names silenced devices under `silenced_devices` (every
    /// event of such a device is refused); it asks that the rest be sent again. Every integer
    /// index is returned, including one the request did not have (the tracker reports it and
    /// drops nothing for it); entries that are not integers are ignored. A body that names no
    /// event gives `nil`.
    ///
    /// - Parameters:
    ///   - response: the server's refusal.
    ///   - events: the batch the refused request was encoded from.
    /// - Returns: the positions of the refused events, or `nil`.
    public func refusedEvents(in response: HTTPResponse, of events: [QueuedEvent]) -> Set<Int>? {
        guard response.status == 400, let members = Self.replyMembers(response) else { return nil }
        var refused: Set<Int> = []
        // The reply's indices are positions in the request's `events`, where an order's
        // product events follow the batch's own (a product event names its order).
        let positions = Self.sentEvents(events).map(\.position)
        func insertIndices(_ node: JSONNode) {
            guard case .array(let indices) = node.value else { return }
            for index in indices {
                // An index beyond Int does not parse and is ignored; one the request did not
                // have is returned as it is, outside the batch's positions, for the tracker to
                // report (shifted past them in the rare case it would name one).
                guard case .number(let text) = index.value, let index = Int(text) else { continue }  // checked: nil
                if positions.indices.contains(index) {
                    refused.insert(positions[index])
                } else {
                    refused.insert(events.indices.contains(index) ? events.count + index : index)
                }
            }
        }
        for member in members {
            switch member.key {
            case "events_with_invalid_fields", "events_with_missing_fields":
                guard case .object(let fields) = member.value.value else { continue }
                for field in fields { insertIndices(field.value) }
            case "silenced_events":
                insertIndices(member.value)
            case "silenced_devices":
                guard case .array(let devices) = member.value.value else { continue }
                let silenced = Set(
                    devices.compactMap { node -> String? in
                        if case .string(let id) = node.value { return id }
                        return nil
                    })
                for (index, queued) in events.enumerated() where silenced.contains(queued.identity.anonymousID) {
                    refused.insert(index)
                }
            default:
                continue
            }
        }
        return refused.isEmpty ? nil : refused
    }

    // Amplitude's 429 (amplitude.com/docs/apis/analytics/http-v2, "429 response"; the Batch
    // Event Upload API answers the same): "eps_threshold", "throttled_devices" and
    // "throttled_users" (maps of the throttled ids to their events per second),
    // "throttled_events" (indexes into the request's events), "exceeded_daily_quota_devices" and
    // "exceeded_daily_quota_users" (maps of the ids over the daily quota). None of the request's
    // events is ingested, so the whole request goes again.

    /// Amplitude's 429 names the devices and users it throttled: the request waits
    /// ``throttlePause`` (30 s, as Amplitude asks) before it goes again, or ``dailyQuotaPause``
    /// (an hour) when a device or user is over its daily quota; a 429 that names neither is left
    /// to `Retry-After` or the backoff. An app's requests are one device's, so pausing the
    /// request pauses the device.
    ///
    /// - Parameters:
    ///   - response: the reply to be retried.
    ///   - events: the events of the request it answers.
    /// - Returns: the wait in seconds, or `nil`.
    public func retryDelay(after response: HTTPResponse, of events: [QueuedEvent]) -> TimeInterval? {
        guard response.status == 429, let members = Self.replyMembers(response) else { return nil }
        func names(_ key: String) -> Bool {
            members.contains { member in
                guard member.key == key, case .object(let ids) = member.value.value else { return false }
                return !ids.isEmpty
            }
        }
        if names("exceeded_daily_quota_devices") || names("exceeded_daily_quota_users") { return Self.dailyQuotaPause }
        if names("throttled_devices") || names("throttled_users") { return Self.throttlePause }
        return nil
    }

    /// 401, 403 and 404, and Amplitude's 400 with `error` "Invalid API key" or a missing
    /// `api_key` field: the API key is wrong, not the events.
    ///
    /// - Parameter response: a reply that is not a 2xx.
    /// - Returns: whether the reply refuses the API key or the endpoint.
    public func refusesConfiguration(_ response: HTTPResponse) -> Bool {
        if [401, 403, 404].contains(response.status) { return true }
        guard response.status == 400, let members = Self.replyMembers(response) else { return false }
        for member in members {
            switch (member.key, member.value.value) {
            case ("error", .string(let error)) where error == "Invalid API key": return true
            case ("missing_field", .string(let field)) where field == "api_key": return true
            default: continue
            }
        }
        return false
    }

    /// The members of a JSON object reply; `nil` for any other body.
    private static func replyMembers(_ response: HTTPResponse) -> [JSONNode.Member]? {
        var parser = JSONParser(bytes: response.body, maximumDepth: 8)
        guard let root = try? parser.parse(), case .object(let members) = root.value else { return nil }
        return members
    }
}
