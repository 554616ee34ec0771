import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Turns a batch of queued events into one HTTP request for a vendor.
///
/// Four encoders ship: ``SegmentEncoder`` here, and `AmplitudeEncoder`, `GA4Encoder` and
/// `OTLPLogsEncoder` in products of their own (`MeasurementEventsAmplitude`,
/// `MeasurementEventsGA4`, `MeasurementEventsOTLP`). A custom one needs an endpoint, limits, and
/// `encode`:
///
/// ```swift
/// struct CollectorEncoder: BatchEncoder {
///     let endpoint = URL(string: "https://collector.example.com/events")!
///     let limits = BatchLimits(maximumEvents: 50, maximumBytes: 256_000)
///     func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch {
///         var body = JSONWriter()
///         body.array(events) { json, queued in json.string(queued.event.name.rawValue) }
///         return EncodedBatch(request: HTTPRequest(url: endpoint, body: body.bytes))
///     }
/// }
/// ```
///
/// Each queued event carries its own identity, session and context (``QueuedEvent/identity``,
/// ``QueuedEvent/sessionID``, ``QueuedEvent/context``).
/// A vendor whose request holds one user only says so with ``requestKey(for:)``.
public protocol BatchEncoder: Sendable {
    /// Where requests go. Plain `http://` is refused unless the host is a loopback address.
    var endpoint: URL { get }
    /// What one request may carry.
    var limits: BatchLimits { get }
    /// One request for `events`, and the events it had to leave out or change, with reasons.
    ///
    /// - Parameters:
    ///   - events: the batch, oldest first; never more than ``limits`` allows.
    ///   - context: what every request of the batch shares.
    /// - Returns: the request (`nil` when every event was rejected) and the events left out or changed.
    func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch
    /// For a request the server refused (a reply that is neither retried nor a refusal of the
    /// configuration, nor a 413 of several events): the positions, in
    /// the `events` given to ``encode(_:context:)``, of the events the server named as the
    /// bad ones. The uploader drops those (counted and logged) and sends the rest again.
    /// `nil`, the default, means the server did not say: the whole request is dropped.
    ///
    /// - Parameters:
    ///   - response: the server's refusal.
    ///   - events: the batch the refused request was encoded from.
    /// - Returns: the positions of the refused events, or `nil` when the reply does not say.
    func refusedEvents(in response: HTTPResponse, of events: [QueuedEvent]) -> Set<Int>?
    /// Events with different keys never share a request: the uploader splits batches where
    /// the key changes. GA4 returns its client and user id (one request is one user); `nil`,
    /// the default, means any events may share a request.
    ///
    /// - Parameter event: a queued event.
    /// - Returns: the key of the request the event may travel in, or `nil` when any request will do.
    func requestKey(for event: QueuedEvent) -> String?
    /// Whether the vendor's endpoint takes a gzip body (`Content-Encoding: gzip`): the tracker
    /// then compresses every request unless `HTTPTracker.Configuration.compressesBodies` is
    /// off. `false`, the default, sends bodies as they are.
    var acceptsGzipBodies: Bool { get }
    /// The purposes of consent a destination of this vendor needs unless the app names others
    /// (`Destination.purposes`, through `HTTPTracker.defaultPurposes`). None, the default: the
    /// tracker follows the aggregator's consent.
    var defaultPurposes: Set<ConsentPurpose> { get }
    /// Whether `response` says that the tracker's configuration is wrong (its key, token or
    /// endpoint) rather than anything about the events. The tracker then stops sending, keeps
    /// the queue, reports once, and resumes after `HTTPTracker.updateEncoder(_:)` or after
    /// ``RetryPolicy/configurationRetryDelay``. The default: 401, 403 and 404.
    ///
    /// - Parameter response: a reply that is not a 2xx.
    /// - Returns: whether the reply refuses the configuration, not the events.
    func refusesConfiguration(_ response: HTTPResponse) -> Bool
    /// Whether a failed request is sent again, as it was, after a backoff (or `Retry-After`).
    /// The default: 408, 429, every 5xx, and 1xx and 3xx (which no server should end on).
    ///
    /// - Parameter response: a reply that is not a 2xx and does not refuse the configuration.
    /// - Returns: whether to send the request again later.
    func retries(_ response: HTTPResponse) -> Bool
    /// For a 2xx reply: how many of the `count` events sent the server says it did not keep,
    /// with its message (OTLP's `partial_success`). `nil`, the default: it kept all of them.
    ///
    /// - Parameters:
    ///   - response: the server's 2xx reply.
    ///   - count: the events the request carried.
    /// - Returns: the refused events' count and the server's message, or `nil`.
    func partialRefusal(in response: HTTPResponse, ofEventCount count: Int) -> PartialRefusal?
    /// How many entries of the vendor's own list a request for `events` holds, which
    /// ``BatchLimits/maximumEvents`` bounds: the uploader sends fewer events when a request
    /// would hold more. Amplitude counts an order of n products as n + 1 events (one revenue
    /// event per product); GA4 counts the `campaign_details` events it adds and not the
    /// identify calls it folds into `user_properties`. The default: `events.count`.
    ///
    /// - Parameter events: the events of one request, oldest first.
    /// - Returns: the entries the vendor counts against its limit.
    func requestEntryCount(of events: [QueuedEvent]) -> Int
    /// For a reply ``retries(_:)`` sends again: how long to wait before sending, when the
    /// vendor's reply says more than its `Retry-After` header (Amplitude's 429 names the
    /// throttled devices, which Amplitude asks to pause for 30 seconds). `nil`, the default,
    /// leaves it to `Retry-After` or the backoff of ``RetryPolicy``.
    ///
    /// - Parameters:
    ///   - response: the reply to be retried.
    ///   - events: the events of the request it answers.
    /// - Returns: the wait in seconds, or `nil`.
    func retryDelay(after response: HTTPResponse, of events: [QueuedEvent]) -> TimeInterval?
}

/// What a server that accepted a request says it did not keep of it.
public struct PartialRefusal: Sendable, Equatable {
    /// How many of the request's events the server refused; the tracker counts at most the
    /// events sent.
    public var refused: Int
    /// The server's message, or what was wrong with its reply, in words for the log.
    public var message: String

    /// What a server did not keep of a request it accepted.
    ///
    /// - Parameters:
    ///   - refused: how many of the request's events the server refused.
    ///   - message: the server's message, or what was wrong with its reply.
    public init(refused: Int, message: String) {
        self.refused = refused
        self.message = message
    }
}

extension BatchEncoder {
    /// The server does not say which events it refused.
    ///
    /// - Parameters:
    ///   - response: the server's refusal.
    ///   - events: the batch the refused request was encoded from.
    /// - Returns: `nil`: the whole request is dropped.
    public func refusedEvents(in response: HTTPResponse, of events: [QueuedEvent]) -> Set<Int>? { nil }
    /// Any events may share a request.
    ///
    /// - Parameter event: a queued event.
    /// - Returns: `nil`.
    public func requestKey(for event: QueuedEvent) -> String? { nil }
    /// Bodies are sent as they are.
    public var acceptsGzipBodies: Bool { false }
    /// None: the tracker follows the aggregator's consent.
    public var defaultPurposes: Set<ConsentPurpose> { [] }
    /// 401 (Unauthorized), 403 (Forbidden) and 404 (Not Found: no such endpoint) refuse the
    /// configuration: they say nothing about the events, and the same request sent again with
    /// a good key to the right address is accepted (RFC 9110, sections 15.5.2, 15.5.4, 15.5.5).
    ///
    /// - Parameter response: a reply that is not a 2xx.
    /// - Returns: whether the status is 401, 403 or 404.
    public func refusesConfiguration(_ response: HTTPResponse) -> Bool {
        [401, 403, 404].contains(response.status)
    }
    /// 408, 429, every 5xx, and 1xx and 3xx are sent again after a backoff.
    ///
    /// - Parameter response: a reply that is not a 2xx and does not refuse the configuration.
    /// - Returns: whether to send the request again later.
    public func retries(_ response: HTTPResponse) -> Bool {
        switch response.status {
        case 408, 429, 500..<600, 100..<200, 300..<400: return true
        default: return false
        }
    }
    /// The server kept every event of a request it accepted.
    ///
    /// - Parameters:
    ///   - response: the server's 2xx reply.
    ///   - count: the events the request carried.
    /// - Returns: `nil`.
    public func partialRefusal(in response: HTTPResponse, ofEventCount count: Int) -> PartialRefusal? { nil }
    /// One entry per event.
    ///
    /// - Parameter events: the events of one request.
    /// - Returns: `events.count`.
    public func requestEntryCount(of events: [QueuedEvent]) -> Int { events.count }
    /// `Retry-After` or the policy's backoff decides.
    ///
    /// - Parameters:
    ///   - response: the reply to be retried.
    ///   - events: the events of the request it answers.
    /// - Returns: `nil`.
    public func retryDelay(after response: HTTPResponse, of events: [QueuedEvent]) -> TimeInterval? { nil }
}

/// What one request to a vendor may carry.
///
/// The uploader fills each request up to both limits: it sends as many events as fit in
/// ``maximumBytes``, measured as ``measure`` says, and never more than ``maximumEvents`` entries
/// as the encoder counts them (``BatchEncoder/requestEntryCount(of:)``).
/// ``maximumEvents`` also bounds what the tracker holds in memory while it builds a request:
/// the rest of one queue file of at most that many events, and the next file.
public struct BatchLimits: Sendable, Equatable {
    /// The most events in one request.
    public var maximumEvents: Int
    /// The largest request body, in bytes, measured as ``measure`` says.
    public var maximumBytes: Int
    /// Which body ``maximumBytes`` applies to.
    public var measure: Measure

    /// Which body a vendor's size limit applies to.
    public enum Measure: Sendable, Equatable {
        /// The JSON the encoder writes, before gzip: for a vendor that limits the payload (or
        /// does not say). Always safe: gzip never makes a JSON body larger.
        case payload
        /// The body as sent, after gzip when the request is compressed: for a server that
        /// limits the bytes it receives.
        case wire
    }

    /// Limits of at least one event and one byte.
    ///
    /// - Parameters:
    ///   - maximumEvents: the most events in one request; at least 1.
    ///   - maximumBytes: the largest request body in bytes; at least 1.
    ///   - measure: which body `maximumBytes` applies to; the payload, before gzip, by default.
    public init(maximumEvents: Int, maximumBytes: Int, measure: Measure = .payload) {
        self.maximumEvents = max(1, maximumEvents)
        self.maximumBytes = max(1, maximumBytes)
        self.measure = measure
    }
}

/// What every request of a batch shares.
public struct BatchContext: Sendable, Equatable {
    /// When the request is made.
    public var sentAt: Date

    /// A context for requests made at `sentAt`.
    ///
    /// - Parameter sentAt: when the request is made.
    public init(sentAt: Date) {
        self.sentAt = sentAt
    }
}

/// A request ready to send.
public struct HTTPRequest: Sendable, Equatable {
    /// Where the request goes.
    public var url: URL
    /// The HTTP method, `POST` for every vendor here.
    public var method: String
    /// Header names as sent.
    public var headers: [String: String]
    /// The request body.
    public var body: [UInt8]

    /// A request to send.
    ///
    /// - Parameters:
    ///   - url: where the request goes.
    ///   - method: the HTTP method.
    ///   - headers: header names and values, as sent.
    ///   - body: the request body.
    public init(url: URL, method: String = "POST", headers: [String: String] = [:], body: [UInt8]) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }
}

/// The result of encoding a batch.
public struct EncodedBatch: Sendable {
    /// `nil` when every event was rejected.
    public var request: HTTPRequest?
    /// Events left out, with why; they are counted and logged, never sent.
    public var rejected: [Rejection]
    /// Changes made so that the vendor accepts an event (a renamed event, a cut value).
    public var adaptations: [Rejection]
    /// Events left out because they are older than the vendor takes (GA4: 72 hours); counted
    /// apart (`HTTPTracker.Diagnostics.expiredBeforeSending`) and reported once per episode.
    public var expired: [Rejection]

    /// The result of encoding a batch.
    ///
    /// - Parameters:
    ///   - request: the request, or `nil` when every event was rejected.
    ///   - rejected: events left out, with why.
    ///   - adaptations: changes made so that the vendor accepts an event.
    ///   - expired: events left out because they are older than the vendor takes.
    public init(
        request: HTTPRequest?, rejected: [Rejection] = [], adaptations: [Rejection] = [], expired: [Rejection] = []
    ) {
        self.request = request
        self.rejected = rejected
        self.adaptations = adaptations
        self.expired = expired
    }

    /// One event and what happened to it.
    public struct Rejection: Sendable, Equatable, CustomStringConvertible {
        /// The event's name.
        public var event: EventName
        /// What was wrong, or what was changed, in words for the log.
        public var reason: String

        /// One event and what happened to it.
        ///
        /// - Parameters:
        ///   - event: the event's name.
        ///   - reason: what was wrong or changed.
        public init(event: EventName, reason: String) {
            self.event = event
            self.reason = reason
        }

        /// `event: reason`.
        public var description: String { "\(event): \(reason)" }
    }
}

/// Which name a vendor sees.
public enum VendorEventName: Sendable, Equatable {
    /// The event's own name (adapted to the vendor's rules).
    case name
    /// The tracking plan's label (`MeasurementEvent.label`) when set, else the name.
    case labelWhenSet

    package func pick(_ event: MeasurementEvent) -> String {
        switch self {
        case .name: return event.name.rawValue
        case .labelWhenSet: return event.label ?? event.name.rawValue
        }
    }
}

extension MeasurementEvent {
    /// The args a vendor receives as properties: the event's args, plus `event_type` and
    /// `category` unless the event has args of those names.
    package var vendorProperties: EventArgs {
        var properties = args
        if properties["event_type"] == nil { properties["event_type"] = .string(type.name) }
        if let category, properties["category"] == nil { properties["category"] = .string(category) }
        return properties
    }

    /// ``vendorProperties`` in the order of their keys, without building the dictionary:
    /// what an encoder that writes them sorted iterates.
    package var sortedVendorProperties: [(String, EventValue)] {
        var properties = args.map { ($0.key, $0.value) }
        if args["event_type"] == nil { properties.append(("event_type", .string(type.name))) }
        if let category, args["category"] == nil { properties.append(("category", .string(category))) }
        properties.sort { $0.0 < $1.0 }
        return properties
    }
}
