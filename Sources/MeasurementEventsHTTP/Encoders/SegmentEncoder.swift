import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Encodes for Segment's HTTP Tracking API batch endpoint (`POST /v1/batch`).
///
/// ```swift
/// let tracker = try HTTPTracker(
///     encoder: SegmentEncoder(writeKey: "YOUR_WRITE_KEY"),
///     directory: applicationSupport.appendingPathComponent("analytics/segment"))
/// ```
///
/// Each event becomes a `track` call: `event` is the plan label when set (else the event
/// name, unchanged: Segment accepts any string), `properties` are the args plus `event_type`
/// and `category`, `messageId` is the event id (Segment de-duplicates on it), `anonymousId`
/// and `userId` the ids the event was posted under, `context` the app, device, OS, locale,
/// time zone and library. An identify becomes `type: identify` with the user's `traits`; a
/// group `type: group` with `groupId` and the group's `traits`. Authentication is HTTP Basic
/// with the write key as user name and an empty password.
///
/// Consent: an event posted while the app set purposes of consent
/// (`EventAggregator.setConsents(_:)`) carries them as `context.consent.categoryPreferences`,
/// each purpose under the Segment consent category the app maps it to (``consentCategories``;
/// the purpose's own name by default), so that Segment's consent management sends it only to
/// the destinations whose categories were all granted. A Segment destination needs no purpose
/// by default (``BatchEncoder/defaultPurposes``): Segment itself routes by the categories.
///
/// Limits: each request is filled up to 500 KB of JSON (before gzip) and 2,000 calls, and
/// events over 32 KB are rejected, counted and logged. EU workspaces: pass
/// `baseURL: URL(string: "https://events.eu1.segmentapis.com")!`.
public struct SegmentEncoder: BatchEncoder {
    /// Segment's US endpoint, `https://api.segment.io`.
    public static let defaultBaseURL = URL(string: "https://api.segment.io")!
    /// Segment refuses a call larger than 32 KB.
    public static let maximumEventBytes = 32_000
    /// 500 KB per request, measured on the JSON payload, and 2,000 calls. Segment's HTTP Tracking
    /// API: "The batch API endpoint accepts a maximum of 500KB per request, with a limit of 32KB
    /// per event in the batch. If these limits are exceeded, Segment returns a 400 Bad Request
    /// error" (twilio.com/docs/segment/connections/sources/catalog/libraries/server/http-api,
    /// "Errors" and "Max request size"). The page does not say whether a gzip body is measured
    /// before or after decompression, so the payload is measured: gzip never makes JSON larger,
    /// so such a request is within the limit either way. Segment sets no number of calls; 2,000
    /// fills 500 KB with calls of 250 bytes (an event without args or context) and bounds what a
    /// request is built from.
    public static let defaultLimits = BatchLimits(maximumEvents: 2_000, maximumBytes: 500_000, measure: .payload)

    /// The source's write key, sent as the HTTP Basic user name.
    public let writeKey: String
    public let endpoint: URL
    public let limits: BatchLimits
    /// Which name an event is sent under.
    public let eventName: VendorEventName
    /// Segment's Tracking API takes gzip bodies: its mobile libraries send them
    /// (https://f2prateek.com/2016/06/05/gzip/, by Segment's engineer: "we enabled gzip for our
    /// mobile libraries ... over 10x reduction in the POST request body").
    public var acceptsGzipBodies: Bool { true }
    /// The Segment consent category (its `categoryId`) of each purpose of consent, for
    /// `context.consent.categoryPreferences`: `[.advertising: "C0004", .analytics: "C0002"]` for
    /// a workspace whose categories are OneTrust's. A purpose not named here goes under its own
    /// name.
    public var consentCategories: [ConsentPurpose: String] = [:]

    /// Makes an encoder for Segment's HTTP tracking API (`/v1/batch`).
    ///
    /// - Parameters:
    ///   - writeKey: the Segment source's write key.
    ///   - baseURL: the API's address; `/v1/batch` is appended.
    ///   - eventName: whether the plan label (the default, when set) or the name is sent as `event`.
    ///   - limits: what one request may carry; ``defaultLimits`` (2,000 calls and 500 KB) by default.
    public init(
        writeKey: String,
        baseURL: URL = SegmentEncoder.defaultBaseURL,
        eventName: VendorEventName = .labelWhenSet,
        limits: BatchLimits = SegmentEncoder.defaultLimits
    ) {
        self.writeKey = writeKey
        self.endpoint = WireFormats.url(baseURL, path: "/v1/batch")
        self.eventName = eventName
        self.limits = limits
    }

    /// One Segment batch request (`batch`, `sentAt`) for `events`: a `track`, `identify` or `group` call each.
    ///
    /// - Parameters:
    ///   - events: the batch, oldest first.
    ///   - context: what every request of the batch shares.
    /// - Returns: the request, and the events left out (over 32 KB).
    public func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch {
        var calls: [[UInt8]] = []
        var rejected: [EncodedBatch.Rejection] = []
        for queued in events {
            let call = encodeCall(queued, context: context)
            if call.count > Self.maximumEventBytes {
                rejected.append(
                    .init(
                        event: queued.event.name,
                        reason:
                            "Segment accepts calls of at most \(Self.maximumEventBytes) bytes; this one has \(call.count)"
                    ))
            } else {
                calls.append(call)
            }
        }
        guard !calls.isEmpty else { return EncodedBatch(request: nil, rejected: rejected) }
        var body = JSONWriter()
        body.object { object in
            object.field("batch") { $0.array(calls) { json, call in json.raw(call) } }
            object.field("sentAt") { $0.string(WireFormats.iso8601(context.sentAt)) }
        }
        let credentials = Data((writeKey + ":").utf8).base64EncodedString()
        let request = HTTPRequest(
            url: endpoint,
            headers: ["Authorization": "Basic \(credentials)", "Content-Type": "application/json"],
            body: body.bytes)
        return EncodedBatch(
            request: request, rejected: rejected, adaptations: NonFiniteValues.adaptations(in: events, sentAs: "null"))
    }

    // Fields as Segment's docs describe them (twilio.com/docs/segment):
    // - connections/spec/common, "Structure": anonymousId, userId, messageId, timestamp, type,
    //   context; "Context fields": app (name, version, build, namespace), device (model,
    //   manufacturer), os (name, version), library (name, version), locale, timezone.
    // - connections/spec/track: event, properties. connections/spec/identify: traits.
    //   connections/spec/group: groupId, traits (of the group).
    // - connections/sources/catalog/libraries/server/http-api, "Batch": batch, sentAt.
    private func encodeCall(_ queued: QueuedEvent, context: BatchContext) -> [UInt8] {
        if let call = standardCall(queued) { return call }  // screen, Order Completed, alias
        let event = queued.event
        let identity = queued.identity
        var json = JSONWriter()
        json.object { call in
            call.field("anonymousId") { $0.string(identity.anonymousID) }
            call.field("context") {
                Self.writeContext(
                    queued.context, campaign: StandardCall.campaign(of: event),
                    consent: categoryPreferences(of: queued), to: &$0)
            }
            // Keys in alphabetical order, as in every body this package writes.
            if queued.kind == .track { call.field("event") { $0.string(eventName.pick(event)) } }
            if queued.kind == .group, let groupID = identity.groupID { call.field("groupId") { $0.string(groupID) } }
            call.field("messageId") { $0.string(event.id.uuidString) }
            if queued.kind == .track {
                call.field("properties") { $0.object(StandardCall.withoutCampaign(event.vendorProperties)) }
            }
            call.field("timestamp") { $0.string(WireFormats.iso8601(event.timestamp)) }
            if queued.kind == .identify { call.field("traits") { $0.object(identity.traits) } }
            if queued.kind == .group { call.field("traits") { $0.object(identity.groupTraits) } }
            call.field("type") { $0.string(Self.callType(queued.kind)) }
            if let userID = identity.userID { call.field("userId") { $0.string(userID) } }
        }
        return json.bytes
    }

    /// `context.consent.categoryPreferences`: the purposes' consents the event was posted under,
    /// each under its Segment category (``consentCategories``); `nil` when it carries none.
    /// "Consent in Segment Connections", "Consent object"
    /// (twilio.com/docs/segment/privacy/consent-management/consent-in-segment-connections): "The
    /// consent object is a JSON object nestled inside of the context object", keyed by
    /// `categoryId`, each `true` or `false`.
    func categoryPreferences(of queued: QueuedEvent) -> [String: Bool]? {
        guard let consents = queued.event.attributionStorage?.value.purposeConsents else { return nil }
        var preferences: [String: Bool] = [:]
        for (purpose, granted) in consents {
            let category = consentCategories[ConsentPurpose(rawValue: purpose)] ?? purpose
            // Two purposes under one category: granted only if both are.
            preferences[category] = (preferences[category] ?? true) && granted
        }
        return preferences
    }

    private static func callType(_ kind: QueuedEvent.Kind) -> String {
        switch kind {
        case .track: return "track"
        case .identify: return "identify"
        case .group: return "group"
        }
    }

    /// Segment's `context`: only the fields its spec names (it ignores others), so the app's
    /// `EventContext.extra` fields are not sent here.
    static func writeContext(
        _ context: EventContext?, campaign: EventArgs = [:], consent: [String: Bool]? = nil, to json: inout JSONWriter
    ) {
        let library =
            context?.library ?? HTTPTracker.library
        json.object { fields in
            if let context {
                let app = context.app
                if app.name != nil || app.version != nil || app.build != nil || app.bundleID != nil {
                    fields.field("app") {
                        $0.object { object in
                            if let name = app.name { object.field("name") { $0.string(name) } }
                            if let version = app.version { object.field("version") { $0.string(version) } }
                            if let build = app.build { object.field("build") { $0.string(build) } }
                            if let bundleID = app.bundleID { object.field("namespace") { $0.string(bundleID) } }
                        }
                    }
                }
            }
            writeCampaign(campaign, to: &fields)  // context.campaign, from a deep link's UTM parameters
            if let consent {
                fields.field("consent") {
                    $0.object { object in
                        object.field("categoryPreferences") {
                            $0.object { preferences in
                                for category in consent.keys.sorted() {
                                    preferences.field(category) { $0.bool(consent[category]!) }
                                }
                            }
                        }
                    }
                }
            }
            if let context {
                if context.device.model != nil || context.device.manufacturer != nil {
                    fields.field("device") {
                        $0.object { object in
                            if let model = context.device.model { object.field("model") { $0.string(model) } }
                            if let maker = context.device.manufacturer {
                                object.field("manufacturer") { $0.string(maker) }
                            }
                        }
                    }
                }
            }
            fields.field("library") {
                $0.object { object in
                    object.field("name") { $0.string(library.name) }
                    object.field("version") { $0.string(library.version) }
                }
            }
            if let context {
                if let locale = context.locale { fields.field("locale") { $0.string(locale) } }
                // The system the app runs on ("macOS" for an iPad or Catalyst app on a Mac: the
                // context's RunningSystem); connections/spec/common, "Context fields": os.
                fields.field("os") {
                    $0.object { object in
                        object.field("name") { $0.string(context.os.name) }
                        object.field("version") { $0.string(context.os.version) }
                    }
                }
                if let timeZone = context.timeZone { fields.field("timezone") { $0.string(timeZone) } }
            }
        }
    }
}
