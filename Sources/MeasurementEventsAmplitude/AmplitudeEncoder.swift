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
/// Limits: Amplitude asks for requests under 1 MB and fewer than 2,000 events; each request is
/// filled up to both (``defaultLimits``). A `413 Payload Too Large` halves the batch. Projects on
/// Amplitude's Starter plan, asked to send at most 10 events per batch, pass
/// `limits: BatchLimits(maximumEvents: 10, maximumBytes: 1_000_000)`.
/// EU projects: `baseURL: URL(string: "https://api.eu.amplitude.com")!`.
public struct AmplitudeEncoder: BatchEncoder {
    /// Amplitude's US endpoint, `https://api2.amplitude.com`.
    public static let defaultBaseURL = URL(string: "https://api2.amplitude.com")!
    /// The shortest user or device id Amplitude accepts; shorter user ids are left out.
    public static let minimumIDLength = 5
    /// 1,999 events and 1,000,000 bytes of JSON per request. Amplitude's HTTP V2 API
    /// (amplitude.com/docs/apis/analytics/http-v2, "Upload limit"): "Keep request sizes under
    /// 1 MB with fewer than 2000 events per request. When you exceed these size limits, you get a
    /// 413 error." The body is sent without gzip, so the payload is what arrives.
    public static let defaultLimits = BatchLimits(maximumEvents: 1_999, maximumBytes: 1_000_000, measure: .payload)

    /// The project's API key, sent in each request's body.
    public let apiKey: String
    /// Where requests go: Amplitude's `/2/httpapi` on the base URL.
    public let endpoint: URL
    /// What one request may carry (see the `defaultLimits` of this encoder).
    public let limits: BatchLimits
    /// Which name an event is sent under.
    public let eventName: VendorEventName
    /// The group type groups are sent under (Amplitude groups are `{type: value}`).
    public let groupType: String

    /// Makes an encoder for Amplitude's HTTP V2 API.
    ///
    /// - Parameters:
    ///   - apiKey: the Amplitude project's API key.
    ///   - baseURL: the API's address; `/2/httpapi` is appended.
    ///   - eventName: whether the plan label or the name becomes `event_type`.
    ///   - groupType: the group type groups are sent under.
    ///   - limits: what one request may carry; ``defaultLimits`` (1,999 events and 1 MB) by default.
    public init(
        apiKey: String,
        baseURL: URL = AmplitudeEncoder.defaultBaseURL,
        eventName: VendorEventName = .labelWhenSet,
        groupType: String = "group",
        limits: BatchLimits = AmplitudeEncoder.defaultLimits
    ) {
        self.apiKey = apiKey
        self.endpoint = WireFormats.url(baseURL, path: "/2/httpapi")
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
        let request = HTTPRequest(
            url: endpoint, headers: ["Accept": "*/*", "Content-Type": "application/json"], body: body.bytes)
        adaptations += NonFiniteValues.adaptations(in: events, sentAs: "null")
        return EncodedBatch(request: request, adaptations: adaptations)
    }

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
