/// A Swift value that can be an event argument: `String`, the integer types, `Double`,
/// `Float`, `Bool`, and ``EventValue`` itself.
///
/// Posting takes `[String: any EventValueConvertible]`, so literals and variables mix freely:
///
/// ```swift
/// MeasurementEvent.post("feed/item_tapped", args: ["item_id": item.id, "position": index])
/// ```
public protocol EventValueConvertible: Sendable {
    var eventValue: EventValue { get }
}

extension EventValue: EventValueConvertible {
    public var eventValue: EventValue { self }
}

extension String: EventValueConvertible {
    public var eventValue: EventValue { .string(self) }
}

extension Substring: EventValueConvertible {
    public var eventValue: EventValue { .string(String(self)) }
}

extension Int: EventValueConvertible {
    public var eventValue: EventValue { .int(self) }
}

extension Int8: EventValueConvertible {
    public var eventValue: EventValue { .int(Int(self)) }
}

extension Int16: EventValueConvertible {
    public var eventValue: EventValue { .int(Int(self)) }
}

extension Int32: EventValueConvertible {
    public var eventValue: EventValue { .int(Int(self)) }
}

extension Int64: EventValueConvertible {
    public var eventValue: EventValue { .int(Int(self)) }
}

extension UInt8: EventValueConvertible {
    public var eventValue: EventValue { .int(Int(self)) }
}

extension UInt16: EventValueConvertible {
    public var eventValue: EventValue { .int(Int(self)) }
}

extension UInt32: EventValueConvertible {
    public var eventValue: EventValue { .int(Int(self)) }
}

/// Only `Double` and `Float` convert: other floating-point types are rare in events.
extension Double: EventValueConvertible {
    public var eventValue: EventValue { .double(self) }
}

extension Float: EventValueConvertible {
    public var eventValue: EventValue { .double(Double(self)) }
}

extension Bool: EventValueConvertible {
    public var eventValue: EventValue { .bool(self) }
}

extension Dictionary where Key == String, Value == any EventValueConvertible {
    /// The arguments as ``EventArgs``.
    public var eventArgs: EventArgs { mapValues(\.eventValue) }
}
