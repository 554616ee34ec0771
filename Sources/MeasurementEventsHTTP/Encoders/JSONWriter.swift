import Foundation
import MeasurementEvents

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
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
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
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func int(_ value: Int) { bytes.append(contentsOf: String(value).utf8) }

    public mutating func int64(_ value: Int64) { bytes.append(contentsOf: String(value).utf8) }

    /// Non-finite numbers have no JSON form and are written as `null`.
    public mutating func double(_ value: Double) {
        if value.isFinite { bytes.append(contentsOf: String(value).utf8) } else { null() }
    }

    public mutating func bool(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }

    public mutating func null() { bytes.append(contentsOf: "null".utf8) }

    public mutating func value(_ value: EventValue) {
        switch value {
        case .string(let string): self.string(string)
        case .int(let int): self.int(int)
        case .double(let double): self.double(double)
        case .bool(let bool): self.bool(bool)
        }
    }

    /// Appends already-encoded JSON.
    public mutating func raw(_ json: [UInt8]) { bytes.append(contentsOf: json) }

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
    public mutating func object(_ args: EventArgs) {
        object { object in
            for key in args.keys.sorted() {
                object.field(key) { $0.value(args[key]!) }
            }
        }
    }

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

        public mutating func field(_ key: String, _ value: (inout JSONWriter) -> Void) {
            if !isEmpty { writer.bytes.append(UInt8(ascii: ",")) }
            isEmpty = false
            writer.string(key)
            writer.bytes.append(UInt8(ascii: ":"))
            value(&writer)
        }
    }
}
