import Foundation
import MeasurementEvents
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
/// Limits: Amplitude asks for requests under 1 MB and fewer than 2,000 events; this encoder
/// sends at most 100 events per request. A `413 Payload Too Large` halves the batch.
/// EU projects: `baseURL: URL(string: "https://api.eu.amplitude.com")!`.
public struct AmplitudeEncoder: BatchEncoder {
    /// Amplitude's US endpoint, `https://api2.amplitude.com`.
    public static let defaultBaseURL = URL(string: "https://api2.amplitude.com")!
    /// The shortest user or device id Amplitude accepts; shorter user ids are left out.
    public static let minimumIDLength = 5

    /// The project's API key, sent in each request's body.
    public let apiKey: String
    public let endpoint: URL
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
    ///   - limits: what one request may carry; 100 events and 1 MB by default.
    public init(
        apiKey: String,
        baseURL: URL = AmplitudeEncoder.defaultBaseURL,
        eventName: VendorEventName = .labelWhenSet,
        groupType: String = "group",
        limits: BatchLimits = BatchLimits(maximumEvents: 100, maximumBytes: 1_000_000)
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

    /// Amplitude's 400 names the bad events by their index in the request's `events`, under
    /// `events_with_invalid_fields` and `events_with_missing_fields` (field → indices), and
    /// asks that the rest be sent again. Indices that are out of range or not integers are
    /// ignored; a body that names none gives `nil`.
    ///
    /// - Parameters:
    ///   - response: the server's refusal.
    ///   - events: the batch the refused request was encoded from.
    /// - Returns: the positions of the refused events, or `nil`.
    public func refusedEvents(in response: HTTPResponse, of events: [QueuedEvent]) -> Set<Int>? {
        var parser = JSONParser(bytes: response.body, maximumDepth: 8)
        guard response.status == 400, let root = try? parser.parse(), case .object(let members) = root.value
        else { return nil }
        var refused: Set<Int> = []
        let positions = Self.sentEvents(events).map(\.position)  // a product event names its order
        for member in members where Self.refusalKeys.contains(member.key) {
            guard case .object(let fields) = member.value.value else { continue }
            for field in fields {
                guard case .array(let indices) = field.value.value else { continue }
                for node in indices {
                    // An index beyond Int does not parse; one that parses must name one of the events.
                    guard case .number(let text) = node.value, let index = Int(text) else { continue }  // checked: nil
                    if positions.indices.contains(index) {
                        refused.insert(positions[index])
                    }
                }
            }
        }
        return refused.isEmpty ? nil : refused
    }

    private static let refusalKeys: Set<String> = ["events_with_invalid_fields", "events_with_missing_fields"]
}
