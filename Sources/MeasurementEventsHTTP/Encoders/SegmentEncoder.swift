import Foundation
import MeasurementEvents

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
/// the tracker's anonymous id and `userId` the user id when set. Authentication is HTTP
/// Basic with the write key as user name and an empty password.
///
/// Limits: at most 500 KB per request (larger batches are halved) and 32 KB per event
/// (larger events are rejected, counted and logged). EU workspaces: pass
/// `baseURL: URL(string: "https://events.eu1.segmentapis.com")!`.
public struct SegmentEncoder: BatchEncoder {
    public static let defaultBaseURL = URL(string: "https://api.segment.io")!
    /// Segment refuses a call larger than 32 KB.
    public static let maximumEventBytes = 32_000

    public let writeKey: String
    public let endpoint: URL
    public let limits: BatchLimits
    public let eventName: VendorEventName

    public init(
        writeKey: String,
        baseURL: URL = SegmentEncoder.defaultBaseURL,
        eventName: VendorEventName = .labelWhenSet,
        limits: BatchLimits = BatchLimits(maximumEvents: 100, maximumBytes: 500_000)
    ) {
        self.writeKey = writeKey
        self.endpoint = WireFormats.url(baseURL, path: "/v1/batch")
        self.eventName = eventName
        self.limits = limits
    }

    public func encode(_ events: [QueuedEvent], context: BatchContext) -> EncodedBatch {
        var calls: [[UInt8]] = []
        var rejected: [EncodedBatch.Rejection] = []
        for queued in events {
            let call = encodeCall(queued, context: context)
            if call.count > Self.maximumEventBytes {
                rejected.append(.init(
                    event: queued.event.name,
                    reason: "Segment accepts calls of at most \(Self.maximumEventBytes) bytes; this one has \(call.count)"))
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
        return EncodedBatch(request: request, rejected: rejected)
    }

    private func encodeCall(_ queued: QueuedEvent, context: BatchContext) -> [UInt8] {
        let event = queued.event
        var json = JSONWriter()
        json.object { call in
            call.field("anonymousId") { $0.string(context.anonymousID) }
            call.field("context") {
                $0.object { context in
                    context.field("library") {
                        $0.object { library in
                            library.field("name") { $0.string(HTTPTracker.libraryName) }
                            library.field("version") { $0.string(HTTPTracker.libraryVersion) }
                        }
                    }
                }
            }
            call.field("event") { $0.string(eventName.pick(event)) }
            call.field("messageId") { $0.string(event.id.uuidString) }
            call.field("properties") { $0.object(event.vendorProperties) }
            call.field("timestamp") { $0.string(WireFormats.iso8601(event.timestamp)) }
            call.field("type") { $0.string("track") }
            if let userID = queued.userID { call.field("userId") { $0.string(userID) } }
        }
        return json.bytes
    }
}
