import Foundation

/// One measurement event: what happened (``name``), its scalar ``args``, its ``type``,
/// and, set by the bus, a unique ``id``, the ``timestamp`` at which it was posted and, once an
/// aggregator forwards it, its ``attribution``: who posted it, in which session, on which device.
///
/// ```swift
/// MeasurementEvent.post("feed/item_tapped", args: ["item_id": "42", "position": 3])
/// ```
public struct MeasurementEvent: Hashable, Sendable, Identifiable {
    /// Unique per accepted event; vendors use it to de-duplicate retried uploads.
    public var id: UUID
    /// The event's name, for example `feed/item_tapped`.
    public var name: EventName
    /// The event's arguments: scalar values keyed by name.
    public var args: EventArgs
    /// The event's type; `userAction` unless the poster said otherwise.
    public var type: EventType
    /// An optional category for grouping events.
    public var category: String?
    /// The tracking plan's label for this event, when a plan applied one.
    public var label: String?
    /// When the event was posted.
    public var timestamp: Date
    /// Identity, session and context, shared between events (see ``attribution``).
    package var attributionStorage: AttributionStorage?
}

extension MeasurementEvent {
    /// An event.
    ///
    /// - Parameters:
    ///   - name: the event's name.
    ///   - type: the event's type.
    ///   - category: an optional category.
    ///   - args: the event's arguments.
    ///   - label: the tracking plan's label.
    ///   - id: unique per event; vendors de-duplicate on it.
    ///   - timestamp: when the event was posted.
    public init(
        _ name: EventName,
        type: EventType = .default,
        category: String? = nil,
        args: EventArgs = [:],
        label: String? = nil,
        id: UUID = EventIDGenerator.makeID(),
        timestamp: Date = Date()
    ) {
        // Through the memberwise initialiser: setting each field made the optimiser build the
        // event twice, copy one and destroy the other.
        self.init(
            id: id, name: name, args: args, type: type, category: category, label: label, timestamp: timestamp,
            attributionStorage: nil)
    }
}

extension MeasurementEvent: CustomStringConvertible {
    /// One readable line: `[ua] feed/item_tapped item_id=42 position=3`, args sorted by key.
    /// One readable line: the type code, the name and the args.
    public var description: String {
        var line = "[\(type.rawValue)] \(name.rawValue)"
        if let category { line += " (\(category))" }
        if let label { line += " \(quotedInFull(label))" }
        for key in args.keys.sorted() {
            line += " \(key)=\(args[key]!)"
        }
        return line
    }
}

extension MeasurementEvent: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, name, type, category, label, args, timestamp, attribution
    }

    /// Reads an event written by ``encode(to:)``.
    ///
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` for missing or mistyped fields.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        name = try container.decode(EventName.self, forKey: .name)
        type = try container.decodeIfPresent(EventType.self, forKey: .type) ?? .default
        category = try container.decodeIfPresent(String.self, forKey: .category)
        label = try container.decodeIfPresent(String.self, forKey: .label)
        args = try container.decodeIfPresent(EventArgs.self, forKey: .args) ?? [:]
        let seconds = try container.decode(Double.self, forKey: .timestamp)
        timestamp = Date(timeIntervalSince1970: seconds)
        attributionStorage = try container.decodeIfPresent(EventAttribution.self, forKey: .attribution)
            .map(AttributionStorage.init)
    }

    /// Encodes `timestamp` as seconds since 1970, whatever the encoder's date strategy.
    ///
    /// - Parameter encoder: the encoder to write to.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(type, forKey: .type)
        try container.encodeIfPresent(category, forKey: .category)
        try container.encodeIfPresent(label, forKey: .label)
        try container.encode(args, forKey: .args)
        try container.encode(timestamp.timeIntervalSince1970, forKey: .timestamp)
        try container.encodeIfPresent(attribution, forKey: .attribution)
    }
}

extension MeasurementEvent {
    /// Reads a received notification back into an event, strictly; never crashes.
    ///
    /// Events without an id or timestamp in their userInfo (the usual case) get a new id and
    /// the current time.
    ///
    /// - Parameter notification: a notification on the event name.
    /// - Throws: ``MalformedEventError`` saying what was wrong.
    public init(notification: Notification) throws(MalformedEventError) {
        var record = try PostedEvent(decoding: notification, keys: .standard)
        record.postSite = nil  // for the aggregators only: not an arg
        var event = try record.makeEvent()
        if event.id == Self.placeholderID { event.id = EventIDGenerator.makeID() }
        self = event
    }
}

extension MeasurementEvent {
    /// The timestamps a notification may carry, in seconds since 1970: years 1 to 9999. Larger
    /// values are garbage, and would overflow the integer milliseconds and microseconds of
    /// the wire formats.
    static let timestampRange: ClosedRange<TimeInterval> = UnixTime.earliestSeconds...UnixTime.latestSeconds

    /// The all-zero UUID, never produced by ``EventIDGenerator``.
    package static let placeholderID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
