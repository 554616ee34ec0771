import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

/// Encodes for the Google Analytics 4 Measurement Protocol
/// (`POST https://www.google-analytics.com/mp/collect?measurement_id=…&api_secret=…`).
///
/// ```swift
/// let tracker = try HTTPTracker(
///     encoder: GA4Encoder(measurementID: "G-XXXXXXX", apiSecret: "SECRET"),
///     directory: applicationSupport.appendingPathComponent("analytics/ga4"))
/// ```
///
/// The body is `{"client_id": <anonymous id>, "user_id": …, "user_properties": {name:
/// {"value": …}}, "events": [{"name", "params", "timestamp_micros"}]}`, at most 25 events per
/// request and 130 KB. A request carries one client and user, so batches are split where they
/// change (``requestKey(for:)``). Every event's params carry `session_id` and
/// `engagement_time_msec`: the time the app spent in the foreground since the previous event
/// the tracker got, as the aggregator's lifecycle moves say, decided when the event is tracked
/// and kept in the queue (a backlog sent a day later keeps it); at least 1 and at most 30
/// minutes (``maximumEngagementTime``).
///
/// GA4's Measurement Protocol has no identify or group call: an identify or group sends no
/// event, its traits go as `user_properties` (the group as `group_id` plus `group_`-prefixed
/// traits) with the request it falls in; a request would hold no event (which GA4 refuses), it
/// sends nothing, and the traits go with the user's next event (counted as an adaptation).
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
/// - Consent Mode: an event posted while the app set purposes of consent
///   (`EventAggregator.setConsents(_:)`) goes in a request whose `consent` carries
///   `ad_user_data` and `ad_personalization`, `GRANTED` or `DENIED`, from the purposes
///   ``consentSignals`` names (advertising; advertising and personalization); a signal whose
///   purposes the app never set is left out. Requests are split where the signals change
///   (``requestKey(for:)``). A GA4 destination needs the analytics purpose (``defaultPurposes``).
/// - GA4 does not de-duplicate: a batch retried after a lost response can count twice.
/// - GA4 answers 2xx even to events it drops; check them with its `/debug/mp/collect`.
public struct GA4Encoder: BatchEncoder {
    /// GA4's endpoint host, `https://www.google-analytics.com`.
    public static let defaultBaseURL = URL(string: "https://www.google-analytics.com")!
    /// The longest event, param or user property name GA4 takes.
    public static let maximumNameLength = 40
    /// The most params per event.
    public static let maximumParams = 25
    /// The longest string param value; longer ones are cut.
    public static let maximumStringValueLength = 100
    /// The longest user id GA4 takes.
    public static let maximumUserIDLength = 256
    /// The most user properties per request.
    public static let maximumUserProperties = 25
    /// The longest user property name.
    public static let maximumUserPropertyNameLength = 24
    /// The longest user property value; longer ones are cut.
    public static let maximumUserPropertyValueLength = 36
    /// User property names GA4 reserves.
    public static let reservedUserPropertyNames: Set<String> = [
        "first_open_time", "first_visit_time", "last_deep_link_referrer", "user_id", "first_open_after_install",
    ]
    /// User property name prefixes GA4 reserves.
    public static let reservedUserPropertyPrefixes = ["google_", "ga_", "firebase_"]
    /// Params every event carries, which the 25 per event must leave room for.
    static let sessionParams = ["engagement_time_msec", "session_id"]

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
    /// Event name prefixes GA4 reserves.
    public static let reservedEventPrefixes = ["_", "firebase_", "ga_", "google_", "gtag."]
    /// Param name prefixes GA4 reserves.
    public static let reservedParamPrefixes = ["_", "firebase_", "ga_", "google_"]

    /// The data stream: web (`measurement_id`, `client_id`) or app (`firebase_app_id`, `app_instance_id`).
    public let stream: Stream
    /// The web stream's measurement id (`G-…`); `nil` for an app stream.
    public var measurementID: String? {
        if case .web(let measurementID) = stream { return measurementID }
        return nil
    }
    /// The Measurement Protocol API secret of the data stream.
    public let apiSecret: String
    /// Where requests go: GA4's `/mp/collect`, with the stream's ids and the API secret in the query.
    public let endpoint: URL
    /// What one request may carry: at most GA4's 25 events and 130 KB.
    public let limits: BatchLimits
    /// Which name an event is sent under (before GA4's own name rules).
    public let eventName: VendorEventName
    /// Whether bodies are also checked with GA4's validation server (`/debug/mp/collect`).
    public let validation: Validation
    /// The purposes of consent GA4's Consent Mode signals follow.
    public var consentSignals = ConsentSignals()
    /// Analytics: GA4 measures product usage; its advertising signals follow ``consentSignals``.
    public var defaultPurposes: Set<ConsentPurpose> { [.analytics] }

    /// Which purposes of consent each Consent Mode signal of the request's `consent` follows:
    /// a signal is `GRANTED` when every one of its purposes was granted when the event was
    /// posted, `DENIED` when one was not, and left out when the app set none of them.
    public struct ConsentSignals: Sendable, Hashable {
        /// `ad_user_data`: consent to sending user data to Google for advertising. Advertising
        /// by default.
        public var adUserData: Set<ConsentPurpose>
        /// `ad_personalization`: consent to personalized advertising. Advertising and
        /// personalization by default.
        public var adPersonalization: Set<ConsentPurpose>

        /// Signals that follow `adUserData` and `adPersonalization`.
        ///
        /// - Parameters:
        ///   - adUserData: the purposes `ad_user_data` follows.
        ///   - adPersonalization: the purposes `ad_personalization` follows.
        public init(
            adUserData: Set<ConsentPurpose> = [.advertising],
            adPersonalization: Set<ConsentPurpose> = [.advertising, .personalization]
        ) {
            self.adUserData = adUserData
            self.adPersonalization = adPersonalization
        }

        /// A signal's value for the purposes' consents `consents`: `GRANTED`, `DENIED` or `nil`.
        func value(of purposes: Set<ConsentPurpose>, in consents: [String: Bool]) -> String? {
            if purposes.contains(where: { consents[$0.rawValue] == false }) { return "DENIED" }
            // Granted only when every purpose of the signal was set, and granted.
            return !purposes.isEmpty && purposes.allSatisfy({ consents[$0.rawValue] == true }) ? "GRANTED" : nil
        }
    }
    /// How far back GA4 takes an event: 72 hours before the request
    /// (developers.google.com/analytics/devguides/collection/protocol/ga4/reference,
    /// `timestamp_micros`: "backdate events up to 72 hours"). Older events are not sent.
    public static let backdatingWindow: TimeInterval = 72 * 3600

    /// Makes an encoder for a GA4 web (or server) stream.
    ///
    /// - Parameters:
    ///   - measurementID: the data stream's measurement id (`G-…`).
    ///   - apiSecret: a Measurement Protocol API secret of that stream.
    ///   - baseURL: the API's address; `/mp/collect` is appended.
    ///   - eventName: whether the name (the default) or the plan label is sent.
    ///   - validation: when bodies are also checked with GA4's validation server.
    ///   - limits: what one request may carry; capped at GA4's 25 events and 130 KB.
    public init(
        measurementID: String,
        apiSecret: String,
        baseURL: URL = GA4Encoder.defaultBaseURL,
        eventName: VendorEventName = .name,
        validation: Validation = .inDebugBuilds,
        limits: BatchLimits = BatchLimits(maximumEvents: 25, maximumBytes: 130_000)
    ) {
        self.init(
            checkedStream: .web(measurementID: measurementID), apiSecret: apiSecret, baseURL: baseURL,
            eventName: eventName, validation: validation, limits: limits)
    }

    /// Makes an encoder for a GA4 stream of the kind given.
    ///
    /// ```swift
    /// let encoder = try GA4Encoder(
    ///     stream: .app(firebaseAppID: "1:1234567890:ios:abcdef", appInstanceID: Analytics.appInstanceID() ?? ""),
    ///     apiSecret: "SECRET")
    /// ```
    ///
    /// - Parameters:
    ///   - stream: the data stream, web or app.
    ///   - apiSecret: a Measurement Protocol API secret of that stream.
    ///   - baseURL: the API's address; `/mp/collect` is appended.
    ///   - eventName: whether the name (the default) or the plan label is sent.
    ///   - validation: when bodies are also checked with GA4's validation server.
    ///   - limits: what one request may carry; capped at GA4's 25 events and 130 KB.
    /// - Throws: ``StreamError`` when the stream cannot be right (an app stream without its
    ///   app instance id, an empty id).
    public init(
        stream: Stream,
        apiSecret: String,
        baseURL: URL = GA4Encoder.defaultBaseURL,
        eventName: VendorEventName = .name,
        validation: Validation = .inDebugBuilds,
        limits: BatchLimits = BatchLimits(maximumEvents: 25, maximumBytes: 130_000)
    ) throws {
        if let problem = stream.problem { throw StreamError(description: problem) }
        self.init(
            checkedStream: stream, apiSecret: apiSecret, baseURL: baseURL, eventName: eventName,
            validation: validation, limits: limits)
    }

    private init(
        checkedStream stream: Stream, apiSecret: String, baseURL: URL, eventName: VendorEventName,
        validation: Validation, limits: BatchLimits
    ) {
        self.stream = stream
        self.apiSecret = apiSecret
        self.endpoint = WireFormats.url(
            baseURL, path: "/mp/collect", query: [stream.queryItem, ("api_secret", apiSecret)])
        self.eventName = eventName
        self.validation = validation
        self.limits = BatchLimits(
            maximumEvents: min(limits.maximumEvents, 25), maximumBytes: min(limits.maximumBytes, 130_000))
    }

    /// The GA4 form of a name: every character other than an ASCII letter, digit or `_`
    /// replaced by `_`; or why GA4 cannot take it.
    ///
    /// - Parameters:
    ///   - name: the event or param name.
    ///   - reservedNames: names GA4 reserves for this kind of name.
    ///   - reservedPrefixes: prefixes GA4 reserves for this kind of name.
    /// - Returns: the GA4 name, or why GA4 cannot take it.
    public static func ga4Name(_ name: String, reservedNames: Set<String> = [], reservedPrefixes: [String])
        -> Result<String, NameRejection>
    {
        let mapped = String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { scalar in
                    scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")
                        ? scalar : "_"
                }))
        guard let first = mapped.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else {
            if let prefix = reservedPrefixes.first(where: { mapped.hasPrefix($0) }) {
                return .failure(
                    NameRejection(
                        reason: "\(quotedInFull(mapped)) starts with the reserved prefix \(quotedInFull(prefix))"))
            }
            return .failure(NameRejection(reason: "\(quotedInFull(mapped)) does not start with a letter"))
        }
        if mapped.count > maximumNameLength {
            return .failure(
                NameRejection(
                    reason:
                        "\(quotedInFull(mapped)) is \(mapped.count) characters; GA4 takes at most \(maximumNameLength)")
            )
        }
        if reservedNames.contains(mapped) {
            return .failure(NameRejection(reason: "\(quotedInFull(mapped)) is reserved by GA4"))
        }
        if let prefix = reservedPrefixes.first(where: { mapped.hasPrefix($0) }) {
            return .failure(
                NameRejection(reason: "\(quotedInFull(mapped)) starts with the reserved prefix \(quotedInFull(prefix))")
            )
        }
        return .success(mapped)
    }

    /// Why GA4 cannot take a name.
    public struct NameRejection: Error, Equatable, CustomStringConvertible {
        /// The reason, in words for the log.
        public let reason: String
        /// The reason.
        public var description: String { reason }
    }

    /// One request is one client and one user.
    ///
    /// - Parameter event: a queued event.
    /// - Returns: its client (anonymous) id and user id.
    public func requestKey(for event: QueuedEvent) -> String? {
        let identity = event.identity
        let key = identity.anonymousID + "\u{1F}" + (identity.userID ?? "")
        guard let consent = consent(of: event) else { return key }
        return key + "\u{1F}" + (consent.adUserData ?? "-") + "\u{1F}" + (consent.adPersonalization ?? "-")
    }

    /// The Consent Mode signals of `event`'s request; `nil` when it carries no purposes or
    /// neither signal is known.
    func consent(of event: QueuedEvent) -> (adUserData: String?, adPersonalization: String?)? {
        guard let consents = event.event.attribution?.purposeConsents else { return nil }
        let adUserData = consentSignals.value(of: consentSignals.adUserData, in: consents)
        let adPersonalization = consentSignals.value(of: consentSignals.adPersonalization, in: consents)
        return adUserData == nil && adPersonalization == nil ? nil : (adUserData, adPersonalization)
    }

    // Fields as the Measurement Protocol reference names them
    // (developers.google.com/analytics/devguides/collection/protocol/ga4/reference, "Request
    // body"): client_id, user_id, user_properties ({"name": {"value": …}}, "Send user
    // properties" guide), events[].name, params, timestamp_micros; session_id and
    // engagement_time_msec params: "Send Measurement Protocol events", "Format the request",
    // and the use-cases guide ("session_id required", "include engagement_time_msec").
    /// One Measurement Protocol request (`client_id`, `user_id`, `user_properties`, `events`) for `events`.
    ///
    /// - Parameters:
    ///   - events: the batch, oldest first, all of one client and user (``requestKey(for:)``).
    ///   - context: what every request of the batch shares.
    /// - Returns: the request, and the events left out or changed.
    public func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch {
        guard let first = events.first, let last = events.last else { return EncodedBatch(request: nil) }
        var rejected: [EncodedBatch.Rejection] = []
        var expired: [EncodedBatch.Rejection] = []
        var adaptations: [EncodedBatch.Rejection] = []
        var encodedEvents: [[UInt8]] = []
        var campaign = CampaignDetails.State()
        let oldestTaken = context.sentAt.addingTimeInterval(-Self.backdatingWindow)
        for queued in events where queued.kind == .track {
            if queued.event.timestamp < oldestTaken {
                let age = min(context.sentAt.timeIntervalSince(queued.event.timestamp) / 3600, 1_000_000)
                let hours = Int(age)  // fits: positive here, at most a million
                expired.append(
                    .init(
                        event: queued.event.name,
                        reason: "not sent: \(hours) hours old, older than GA4's 72-hour backdating window"))
                continue
            }
            if let details = campaign.detailsEvent(for: queued) { encodedEvents.append(details) }
            if let standard = standardEvent(queued, adaptations: &adaptations) {  // screen_viewed, purchase, refund
                encodedEvents.append(standard)
                continue
            }
            let event = queued.event
            let original = eventName.pick(event)
            let name: String
            switch Self.ga4Name(
                original, reservedNames: Self.reservedEventNames, reservedPrefixes: Self.reservedEventPrefixes)
            {
            case .success(let mapped): name = mapped
            case .failure(let rejection):
                rejected.append(.init(event: event.name, reason: "GA4 event name: \(rejection.reason)"))
                continue
            }
            if name != original {
                adaptations.append(.init(event: event.name, reason: "sent to GA4 as \(name)"))
            }
            var params = ga4Params(event, adaptations: &adaptations).filter {
                !CampaignDetails.utmArgs.contains($0.key)
            }
            params["engagement_time_msec"] = Self.engagementTime(of: queued)
            if let sessionID = queued.sessionID { params["session_id"] = .string(String(sessionID)) }
            var json = JSONWriter()
            json.object { object in
                object.field("name") { $0.string(name) }
                object.field("params") { $0.object(params) }
                object.field("timestamp_micros") { $0.int64(WireFormats.microseconds(event.timestamp)) }
            }
            encodedEvents.append(json.bytes)
        }
        // The validator requires at least one event (`events`, minItems 1): identify and group
        // calls with no event beside them send nothing; their traits reach GA4 as the
        // user_properties of the user's next request, which describes the user as of its newest
        // event (each event carries the identity it was posted under).
        guard !encodedEvents.isEmpty else {
            for call in events where call.kind != .track {
                adaptations.append(
                    .init(
                        event: call.event.name,
                        reason: "not sent alone (GA4 takes no request without events): its traits go as "
                            + "user_properties with the user's next event"))
            }
            return EncodedBatch(request: nil, rejected: rejected, adaptations: adaptations, expired: expired)
        }
        var userID = first.identity.userID
        if let id = userID, id.count > Self.maximumUserIDLength {
            userID = nil
            adaptations.append(
                .init(
                    event: first.event.name,
                    reason: "user id left out: GA4 takes at most \(Self.maximumUserIDLength) characters"))
        }
        // The newest identity of the request: user properties describe the user now.
        let userProperties = ga4UserProperties(last.identity, event: last.event.name, adaptations: &adaptations)
        var body = JSONWriter()
        body.object { object in
            switch stream {
            case .web:
                object.field("client_id") { $0.string(first.identity.anonymousID) }
            case .app(_, let appInstanceID):
                object.field("app_instance_id") { $0.string(appInstanceID) }
            }
            if let userID { object.field("user_id") { $0.string(userID) } }
            if !userProperties.isEmpty {
                object.field("user_properties") {
                    $0.object { fields in
                        for key in userProperties.keys.sorted() {
                            fields.field(key) { $0.object { $0.field("value") { $0.value(userProperties[key]!) } } }
                        }
                    }
                }
            }
            // Measurement Protocol reference, "Request body": `consent` (object) with `ad_user_data`
            // and `ad_personalization`, each "GRANTED" or "DENIED"
            // (developers.google.com/analytics/devguides/collection/protocol/ga4/reference#payload_consent;
            // "Send consent signals": the request's consent applies to all its events). One
            // request carries one pair of signals (`requestKey(for:)`).
            if let (adUserData, adPersonalization) = consent(of: first) {
                object.field("consent") {
                    $0.object { consent in
                        if let adUserData { consent.field("ad_user_data") { $0.string(adUserData) } }
                        if let adPersonalization {
                            consent.field("ad_personalization") { $0.string(adPersonalization) }
                        }
                    }
                }
            }
            if let context = last.context { Self.writeDevice(context, to: &object) }
            object.field("events") { $0.array(encodedEvents) { json, event in json.raw(event) } }
        }
        let request = HTTPRequest(url: endpoint, headers: ["Content-Type": "application/json"], body: body.bytes)
        adaptations += NonFiniteValues.adaptations(in: events, sentAs: "null")
        return EncodedBatch(request: request, rejected: rejected, adaptations: adaptations, expired: expired)
    }

    // engagement_time_msec: "set to the time elapsed since the previous event in milliseconds",
    // which GA4's Realtime report and engagement metrics need
    // (developers.google.com/analytics/devguides/collection/protocol/ga4/use-cases, "Summary of
    // requirements"). GA4 measures engagement as time in the foreground, so the time comes from
    // the aggregator's lifecycle moves (QueuedEvent.foregroundMillisecondsSincePrevious): time in
    // the background never counts. Capped at GA4's default session timeout, 30 minutes ("[GA4]
    // Session", support.google.com/analytics/answer/12798876: "a session ends (times out) after
    // 30 minutes of user inactivity"): foreground time longer than that without an event is
    // inactivity that ended GA4's session, not engagement of the event's. At least 1 ms: an event
    // nothing was measured for (tracked without an aggregator, an aggregator's own session
    // event) still counts as the user's activity, as the encoder always sent it.
    /// The most `engagement_time_msec` one event carries: GA4's default session timeout.
    public static let maximumEngagementTime: TimeInterval = 30 * 60

    /// The `engagement_time_msec` param of `queued`: its foreground time since the previous
    /// event, in milliseconds, at least 1 and at most ``maximumEngagementTime``.
    static func engagementTime(of queued: QueuedEvent) -> EventValue {
        let maximum = Int64(maximumEngagementTime * 1000)
        let measured = queued.foregroundMillisecondsSincePrevious ?? 1
        return .int(Int(min(max(measured, 1), maximum)))  // fits: at most 1,800,000
    }

    /// The most events in one request (Measurement Protocol reference, `events`: "up to 25").
    static let maximumEventsPerRequest = 25

    /// The events of a request for `events` as GA4 counts them against its 25: each tracked
    /// event, and the `campaign_details` event before the first event of each campaign (so that
    /// every request carrying a campaign's events carries the campaign too); identify and group
    /// calls, which go as `user_properties`, count for none. Events too old to send are counted
    /// as well: the request holds at most this many.
    ///
    /// - Parameter events: the events of one request.
    /// - Returns: the length of the request's `events`.
    public func requestEntryCount(of events: [QueuedEvent]) -> Int {
        var count = 0
        var campaign = CampaignDetails.State()
        for queued in events where queued.kind == .track {
            if campaign.changes(to: queued) { count += 1 }
            count += 1
        }
        return count
    }

    // The device block of the Measurement Protocol reference
    // (developers.google.com/analytics/devguides/collection/protocol/ga4/reference, "device":
    // category, language, screen_resolution, operating_system, operating_system_version, model,
    // brand, browser, browser_version). Sent: category (``deviceCategory(model:osName:)``),
    // language (the locale), operating_system and operating_system_version (the system the app
    // runs on: "macOS" for a Catalyst or iPad app on a Mac, see the context's RunningSystem),
    // model, brand (the manufacturer). The reference has no app-version field: the app version is
    // not sent (GA4 app streams take it from the Firebase SDK).
    /// Writes `device` for the request from the newest event's context.
    static func writeDevice(_ context: EventContext, to object: inout JSONWriter.ObjectWriter) {
        let model = context.device.model
        let category = deviceCategory(model: model, osName: context.os.name)
        object.field("device") {
            $0.object { device in
                if let brand = context.device.manufacturer { device.field("brand") { $0.string(brand) } }
                if let category { device.field("category") { $0.string(category) } }
                if let locale = context.locale {
                    device.field("language") { $0.string(locale.replacingOccurrences(of: "_", with: "-")) }
                }
                if let model { device.field("model") { $0.string(model) } }
                device.field("operating_system") { $0.string(context.os.name) }
                device.field("operating_system_version") { $0.string(context.os.version) }
            }
        }
    }

    /// GA4's `device.category` (Measurement Protocol reference, "device": the category of the
    /// device, such as "desktop", "tablet", "mobile"), from Apple's model identifier: iPad →
    /// "tablet"; iPhone and iPod touch → "mobile"; every Mac family → "desktop" (the categories
    /// have no laptop): Mac14,2 and the older MacBook*, MacBookAir*, MacBookPro*, Macmini* and
    /// MacPro* (all "Mac…"), iMac* and iMacPro*, and VirtualMac* (macOS in a virtual machine on
    /// Apple silicon). A model that says nothing (a processor name such as "arm64", or none) falls
    /// back on the system: macOS → "desktop". Otherwise (Apple Watch, Apple TV, Vision Pro,
    /// Linux) the category is left out.
    ///
    /// - Parameters:
    ///   - model: the context's model identifier ("iMac21,1", "iPhone15,2").
    ///   - osName: the context's system ("macOS" for a Mac, and a Catalyst or iPad app on a Mac).
    /// - Returns: "desktop", "tablet", "mobile", or `nil` when neither tells.
    static func deviceCategory(model: String?, osName: String) -> String? {
        if let model {
            if model.hasPrefix("iPad") { return "tablet" }
            if model.hasPrefix("iPhone") || model.hasPrefix("iPod") { return "mobile" }
            if model.hasPrefix("Mac") || model.hasPrefix("iMac") || model.hasPrefix("VirtualMac") { return "desktop" }
        }
        return osName == "macOS" ? "desktop" : nil
    }

    /// The user's traits, and the group as `group_id` and `group_`-prefixed traits, under GA4's
    /// rules for user properties (names of at most 24 characters, values of at most 36, 25 in all).
    private func ga4UserProperties(
        _ identity: EventIdentity, event: EventName, adaptations: inout [EncodedBatch.Rejection]
    ) -> EventArgs {
        var candidates: [(String, EventValue)] = identity.traits.keys.sorted().map { ($0, identity.traits[$0]!) }
        if let groupID = identity.groupID {
            candidates.append(("group_id", .string(groupID)))
            candidates += identity.groupTraits.keys.sorted().map { ("group_" + $0, identity.groupTraits[$0]!) }
        }
        var properties: EventArgs = [:]
        for (key, value) in candidates {
            guard
                case .success(let name) = Self.ga4Name(
                    key, reservedNames: Self.reservedUserPropertyNames,
                    reservedPrefixes: Self.reservedUserPropertyPrefixes),
                name.count <= Self.maximumUserPropertyNameLength, properties[name] == nil,
                properties.count < Self.maximumUserProperties
            else {
                adaptations.append(
                    .init(event: event, reason: "user property \(quotedInFull(key)) left out: GA4 cannot take it"))
                continue
            }
            let (converted, wasCut) = Self.ga4Value(value, maximumLength: Self.maximumUserPropertyValueLength)
            properties[name] = converted
            if wasCut {
                adaptations.append(
                    .init(
                        event: event,
                        reason:
                            "user property \(quotedInFull(key)) cut to \(Self.maximumUserPropertyValueLength) characters"
                    ))
            }
        }
        return properties
    }

    /// `value` as GA4 takes it: a boolean as `"true"` or `"false"`, a string cut to
    /// `maximumLength` characters; and whether it was cut.
    private static func ga4Value(_ value: EventValue, maximumLength: Int) -> (value: EventValue, wasCut: Bool) {
        switch value {
        case .string(let string) where string.count > maximumLength:
            return (.string(String(string.prefix(maximumLength))), true)
        case .bool(let bool): return (.string(bool ? "true" : "false"), false)
        default: return (value, false)
        }
    }

    /// The event's params under GA4's rules, leaving room within the 25 for the session params
    /// and for `reserving`, the params the caller adds (a screen's `screen_name`).
    func ga4Params(
        _ event: MeasurementEvent, reserving reserved: [String] = [], adaptations: inout [EncodedBatch.Rejection]
    ) -> EventArgs {
        var params: EventArgs = [:]
        var dropped: [String] = []
        let taken = Self.sessionParams + reserved
        for key in event.vendorProperties.keys.sorted() {
            let value = event.vendorProperties[key]!
            guard case .success(let name) = Self.ga4Name(key, reservedPrefixes: Self.reservedParamPrefixes) else {
                adaptations.append(
                    .init(event: event.name, reason: "param \(quotedInFull(key)) dropped: not a valid GA4 param name"))
                continue
            }
            if params[name] != nil || taken.contains(name) || params.count >= Self.maximumParams - taken.count {
                dropped.append(key)
                continue
            }
            if name != key {
                adaptations.append(.init(event: event.name, reason: "param \(quotedInFull(key)) sent as \(name)"))
            }
            let (converted, wasCut) = Self.ga4Value(value, maximumLength: Self.maximumStringValueLength)
            params[name] = converted
            if wasCut {
                adaptations.append(
                    .init(
                        event: event.name,
                        reason: "param \(quotedInFull(key)) cut to \(Self.maximumStringValueLength) characters"))
            }
        }
        if !dropped.isEmpty {
            adaptations.append(
                .init(
                    event: event.name,
                    reason:
                        "params dropped (GA4 takes \(Self.maximumParams) per event, names unique): \(dropped.joined(separator: ", "))"
                ))
        }
        return params
    }
}

extension GA4Encoder: ServerValidatedEncoder {
    /// The check of each body by `/debug/mp/collect` when ``validation`` is on in this build
    /// (``GA4Validator``); nil when it is off.
    package func makeRequestValidator(
        transport: any HTTPTransport, timeout: TimeInterval, report: @escaping @Sendable (String) -> Void
    ) -> (any RequestValidator)? {
        validation.isOn ? GA4Validator(transport: transport, timeout: timeout, report: report) : nil
    }
}
