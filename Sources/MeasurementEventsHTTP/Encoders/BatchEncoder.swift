import Foundation
import MeasurementEvents

/// Turns a batch of queued events into one HTTP request for a vendor.
///
/// Four encoders ship: ``SegmentEncoder``, ``AmplitudeEncoder``, ``GA4Encoder`` and
/// ``OTLPLogsEncoder``. A custom
/// one needs an endpoint, limits, and `encode`:
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
/// Each queued event carries its own identity, session and context (``QueuedEvent/identity``, ``QueuedEvent/sessionID``, ``QueuedEvent/context``).
/// A vendor whose request holds one user only says so with ``requestKey(for:)``.
public protocol BatchEncoder: Sendable {
    /// Where requests go. Plain `http://` is refused unless the host is a loopback address.
    var endpoint: URL { get }
    /// What one request may carry.
    var limits: BatchLimits { get }
    /// One request for `events`, and the events it had to leave out or change, with reasons.
    func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch
    /// For a request the server refused (a 4xx other than 408, 413 and 429): the positions, in
    /// the `events` given to ``encode(_:context:)``, of the events the server named as the
    /// bad ones. The uploader drops those (counted and logged) and sends the rest again.
    /// `nil`, the default, means the server did not say: the whole request is dropped.
    func refusedEvents(in response: HTTPResponse, of events: [QueuedEvent]) -> Set<Int>?
    /// Events with different keys never share a request: the uploader splits batches where
    /// the key changes. GA4 returns its client and user id (one request is one user); `nil`,
    /// the default, means any events may share a request.
    func requestKey(for event: QueuedEvent) -> String?
}

extension BatchEncoder {
    public func refusedEvents(in response: HTTPResponse, of events: [QueuedEvent]) -> Set<Int>? { nil }
    public func requestKey(for event: QueuedEvent) -> String? { nil }
}

/// What one request to a vendor may carry.
public struct BatchLimits: Sendable, Equatable {
    public var maximumEvents: Int
    /// The largest request body; bigger batches are halved before sending.
    public var maximumBytes: Int

    public init(maximumEvents: Int, maximumBytes: Int) {
        self.maximumEvents = max(1, maximumEvents)
        self.maximumBytes = max(1, maximumBytes)
    }
}

/// What every request of a batch shares.
public struct BatchContext: Sendable, Equatable {
    /// When the request is made.
    public var sentAt: Date

    public init(sentAt: Date) {
        self.sentAt = sentAt
    }
}

/// A request ready to send.
public struct HTTPRequest: Sendable, Equatable {
    public var url: URL
    public var method: String
    /// Header names as sent.
    public var headers: [String: String]
    public var body: [UInt8]

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

    public init(request: HTTPRequest?, rejected: [Rejection] = [], adaptations: [Rejection] = []) {
        self.request = request
        self.rejected = rejected
        self.adaptations = adaptations
    }

    /// One event and what happened to it.
    public struct Rejection: Sendable, Equatable, CustomStringConvertible {
        public var event: EventName
        public var reason: String

        public init(event: EventName, reason: String) {
            self.event = event
            self.reason = reason
        }

        public var description: String { "\(event): \(reason)" }
    }
}

/// Which name a vendor sees.
public enum VendorEventName: Sendable, Equatable {
    /// The event's own name (adapted to the vendor's rules).
    case name
    /// The tracking plan's label (`MeasurementEvent.label`) when set, else the name.
    case labelWhenSet

    func pick(_ event: MeasurementEvent) -> String {
        switch self {
        case .name: return event.name.rawValue
        case .labelWhenSet: return event.label ?? event.name.rawValue
        }
    }
}

extension MeasurementEvent {
    /// The args a vendor receives as properties: the event's args, plus `event_type` and
    /// `category` unless the event has args of those names.
    var vendorProperties: EventArgs {
        var properties = args
        if properties["event_type"] == nil { properties["event_type"] = .string(type.name) }
        if let category, properties["category"] == nil { properties["category"] = .string(category) }
        return properties
    }
}
