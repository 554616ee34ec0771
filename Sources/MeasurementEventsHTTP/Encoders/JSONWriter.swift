import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Writes compact JSON straight to bytes, object keys in the order given (event args sorted),
/// so that a request body is the same every time and tests can compare it exactly.
///
/// ```swift
/// var json = JSONWriter()
/// json.object { object in
///     object.field("name") { $0.string("feed/item_tapped") }
///     object.field("count") { $0.int(3) }
/// }
/// String(decoding: json.bytes, as: UTF8.self)   // {"name":"feed/item_tapped","count":3}
/// ```
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// Writes a JSON string, escaping quotes, backslashes and control characters.
    ///
    /// - Parameter value: the text.
    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole (a request body is mostly strings).
        var value = value
        let copied = value.withUTF8 { utf8 -> Bool in
            for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                return false
            }
            bytes.append(contentsOf: utf8)
            return true
        }
        if !copied { escaping(value) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes the bytes of `value`, escaping quotes, backslashes and control characters.
    private mutating func escaping(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(hex[Int(byte >> 4)])  // fits: a UInt8
                bytes.append(hex[Int(byte & 0xF)])  // fits: a UInt8
            default: bytes.append(byte)
            }
        }
    }

    /// Writes an integer.
    ///
    /// - Parameter value: the number.
    public mutating func int(_ value: Int) { int64(Int64(value)) }

    /// Writes a 64-bit integer.
    ///
    /// - Parameter value: the number.
    public mutating func int64(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        digits(value.magnitude)
    }

    /// Writes the decimal digits of `value`, as `String(value)` spells them, without making the
    /// string: the encoders write a number or two per record (issue 49).
    package mutating func digits(_ value: UInt64) {
        guard value >= 10 else {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        // 24 bytes of room on the stack: a UInt64 has at most 20 digits.
        var room: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &room) { room in
            var start = room.count
            var rest = value
            while rest > 0 {
                start -= 1
                room[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: room[start...]))
        }
    }

    /// Writes a 64-bit integer as a JSON string (`"-12"`): how OTLP/JSON and others write 64-bit
    /// integers, without making the string.
    package mutating func quoted(_ value: Int64) {
        bytes.append(UInt8(ascii: "\""))
        int64(value)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes an unsigned 64-bit integer as a JSON string (`"12"`).
    package mutating func quoted(_ value: UInt64) {
        bytes.append(UInt8(ascii: "\""))
        digits(value)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Makes room for `count` more bytes of JSON, so that a large body grows once.
    package mutating func reserveCapacity(forMore count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    /// Non-finite numbers have no JSON form and are written as `null`.
    ///
    /// - Parameter value: the number.
    public mutating func double(_ value: Double) {
        if value.isFinite { bytes.append(contentsOf: String(value).utf8) } else { null() }
    }

    /// Writes `true` or `false`.
    ///
    /// - Parameter value: the boolean.
    public mutating func bool(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }

    /// Writes `null`.
    public mutating func null() { bytes.append(contentsOf: "null".utf8) }

    /// Writes an event value as its JSON scalar.
    ///
    /// - Parameter value: the value.
    public mutating func value(_ value: EventValue) {
        switch value {
        case .string(let string): self.string(string)
        case .int(let int): self.int(int)
        case .double(let double): self.double(double)
        case .bool(let bool): self.bool(bool)
        }
    }

    /// Appends already-encoded JSON.
    ///
    /// - Parameter json: valid JSON bytes, written as they are.
    public mutating func raw(_ json: [UInt8]) { bytes.append(contentsOf: json) }

    /// Appends a fixed piece of JSON (punctuation and keys an encoder writes for every record),
    /// without the closures of ``object(_:)`` and ``ObjectWriter/field(_:_:)``: for the encoders'
    /// hot loops, where those cost more than the bytes.
    package mutating func raw(_ json: StaticString) {
        json.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Writes an object whose fields `body` writes.
    ///
    /// - Parameter body: writes the fields with ``ObjectWriter/field(_:_:)``.
    public mutating func object(_ body: (inout ObjectWriter) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        // Move the buffer into the object writer and back, rather than copying it.
        var object = ObjectWriter(writer: JSONWriter())
        swap(&object.writer.bytes, &bytes)
        body(&object)
        swap(&object.writer.bytes, &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// An object of event args, keys sorted.
    ///
    /// - Parameter args: the args, written as an object.
    public mutating func object(_ args: EventArgs) {
        object { object in
            for key in args.keys.sorted() {
                object.field(key) { $0.value(args[key]!) }
            }
        }
    }

    /// Writes an array with one element per item of `elements`.
    ///
    /// - Parameters:
    ///   - elements: the items.
    ///   - body: writes one element for an item.
    public mutating func array<Element>(_ elements: [Element], _ body: (inout JSONWriter, Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            body(&self, element)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes the fields of one object, with commas.
    public struct ObjectWriter: Sendable {
        fileprivate var writer: JSONWriter
        private var isEmpty = true

        fileprivate init(writer: JSONWriter) { self.writer = writer }

        /// Writes one field: its key, then the value `value` writes.
        ///
        /// - Parameters:
        ///   - key: the field's name.
        ///   - value: writes the field's value.
        public mutating func field(_ key: String, _ value: (inout JSONWriter) -> Void) {
            if !isEmpty { writer.bytes.append(UInt8(ascii: ",")) }
            isEmpty = false
            writer.string(key)
            writer.bytes.append(UInt8(ascii: ":"))
            value(&writer)
        }
    }
}
