/// A Swift value that can be an event argument: `String`, the integer types, `Double`,
/// `Float`, `Bool`, and ``EventValue`` itself.
///
/// Posting takes `[String: any EventValueConvertible]`, so literals and variables mix freely:
///
/// ```swift
/// MeasurementEvent.post("feed/item_tapped", args: ["item_id": item.id, "position": index])
/// ```
public protocol EventValueConvertible: Sendable {
    /// The value as an event arg value.
    var eventValue: EventValue { get }

    /// The value, or why it cannot be an event argument here: posting uses this, and rejects
    /// the event (counted, reported) instead of trapping or changing the value.
    ///
    /// The default is `.success(eventValue)`; `Int64` and `UInt32` fail with
    /// ``EventValue/ValueRejection/outOfRange`` where they do not fit in `Int` (Apple Watch).
    var checkedEventValue: Result<EventValue, EventValue.ValueRejection> { get }
}

extension EventValueConvertible {
    public var checkedEventValue: Result<EventValue, EventValue.ValueRejection> { .success(eventValue) }
}

extension EventValue: EventValueConvertible {
    /// The value itself.
    public var eventValue: EventValue { self }
}

extension String: EventValueConvertible {
    /// The value as a string.
    public var eventValue: EventValue { .string(self) }
}

extension Substring: EventValueConvertible {
    /// The value as a string.
    public var eventValue: EventValue { .string(String(self)) }
}

extension Int: EventValueConvertible {
    /// The value as an integer.
    public var eventValue: EventValue { .int(self) }
}

extension Int8: EventValueConvertible {
    /// The value as an integer.
    public var eventValue: EventValue { .int(Int(self)) }  // fits: Int has at least 32 bits
}

extension Int16: EventValueConvertible {
    /// The value as an integer.
    public var eventValue: EventValue { .int(Int(self)) }  // fits: Int has at least 32 bits
}

extension Int32: EventValueConvertible {
    /// The value as an integer.
    public var eventValue: EventValue { .int(Int(self)) }  // fits: Int has at least 32 bits
}

extension Int64: EventValueConvertible {
    /// `.int`, or where the value does not fit in `Int` (only where `Int` is 32 bits), its
    /// decimal digits as `.string`, so that nothing traps or is lost; posting rejects such a
    /// value instead, through ``checkedEventValue``.
    public var eventValue: EventValue { Self.eventValue(self, limit: .native) }

    public var checkedEventValue: Result<EventValue, EventValue.ValueRejection> {
        EventValue.integer(self, limit: .native)
    }

    static func eventValue(_ value: Self, limit: IntRange) -> EventValue {
        checkedInt(value, limit: limit).map(EventValue.int) ?? .string(String(value))
    }
}

extension UInt8: EventValueConvertible {
    /// The value as an integer.
    public var eventValue: EventValue { .int(Int(self)) }  // fits: Int has at least 32 bits
}

extension UInt16: EventValueConvertible {
    /// The value as an integer.
    public var eventValue: EventValue { .int(Int(self)) }  // fits: Int has at least 32 bits
}

extension UInt32: EventValueConvertible {
    /// `.int`, or where the value does not fit in `Int` (only where `Int` is 32 bits), its
    /// decimal digits as `.string`, so that nothing traps or is lost; posting rejects such a
    /// value instead, through ``checkedEventValue``.
    public var eventValue: EventValue { Self.eventValue(self, limit: .native) }

    public var checkedEventValue: Result<EventValue, EventValue.ValueRejection> {
        EventValue.integer(self, limit: .native)
    }

    static func eventValue(_ value: Self, limit: IntRange) -> EventValue {
        checkedInt(value, limit: limit).map(EventValue.int) ?? .string(String(value))
    }
}

/// Only `Double` and `Float` convert: other floating-point types are rare in events.
extension Double: EventValueConvertible {
    /// The value as a floating-point number.
    public var eventValue: EventValue { .double(self) }
}

extension Float: EventValueConvertible {
    /// The value as a floating-point number.
    public var eventValue: EventValue { .double(Double(self)) }
}

extension Bool: EventValueConvertible {
    /// The value as a boolean.
    public var eventValue: EventValue { .bool(self) }
}

extension Dictionary where Key == String, Value == any EventValueConvertible {
    /// The arguments as ``EventArgs``.
    public var eventArgs: EventArgs { mapValues(\.eventValue) }
}
