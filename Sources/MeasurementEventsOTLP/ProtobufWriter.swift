/// Writes Protocol Buffers' binary wire format straight to bytes: the few field kinds an OTLP
/// logs request needs, and nested messages whose length is known only once they are written.
///
/// The wire format is protobuf's own (protobuf.dev/programming-guides/encoding/): a field is a
/// tag (`field number << 3 | wire type`, a varint), then its value: a varint (wire type 0), 8
/// little-endian bytes (1), or a length as a varint and that many bytes (2: strings, bytes,
/// nested messages).
///
/// ```swift
/// var writer = ProtobufWriter()
/// let record = writer.beginMessage(2)
/// writer.fixed64(1, 1_714_566_603_000_000_000)
/// writer.string(12, "checkout/started")
/// writer.endMessage(record)
/// ```
struct ProtobufWriter: Sendable {
    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []

    private enum WireType: UInt64 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
    }

    /// Room for `count` more bytes, so that a body of a megabyte grows once.
    mutating func reserveCapacity(forMore count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    /// Adds what `other` wrote, as it is: whole fields of the message being written.
    mutating func append(_ other: ProtobufWriter) {
        bytes.append(contentsOf: other.bytes)
    }

    /// Writes `value` as a varint: 7 bits a byte, least significant first, the high bit set on
    /// every byte but the last.
    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    private mutating func tag(_ field: UInt32, _ type: WireType) {
        varint(UInt64(field) << 3 | type.rawValue)
    }

    /// A `uint32`, `uint64` or enum field (wire type 0).
    mutating func unsigned(_ field: UInt32, _ value: UInt64) {
        tag(field, .varint)
        varint(value)
    }

    /// An `int64` field: a negative number as its two's complement, ten bytes (proto3's
    /// `int64`, not the zigzag `sint64`).
    mutating func int64(_ field: UInt32, _ value: Int64) {
        tag(field, .varint)
        varint(UInt64(bitPattern: value))
    }

    /// A `bool` field: 1 or 0.
    mutating func bool(_ field: UInt32, _ value: Bool) {
        tag(field, .varint)
        bytes.append(value ? 1 : 0)
    }

    /// A `fixed64` field: 8 bytes, little-endian.
    mutating func fixed64(_ field: UInt32, _ value: UInt64) {
        tag(field, .fixed64)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A `double` field: its IEEE 754 bits as 8 bytes, little-endian.
    mutating func double(_ field: UInt32, _ value: Double) {
        fixed64(field, value.bitPattern)
    }

    /// A `string` field: its UTF-8 bytes after their count.
    mutating func string(_ field: UInt32, _ value: String) {
        tag(field, .lengthDelimited)
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// A `string` field holding the decimal digits of `value` (`-` first when negative).
    mutating func decimal(_ field: UInt32, _ value: Int64) {
        // 20 digits and a sign at most: one byte of length.
        tag(field, .lengthDelimited)
        let lengthAt = bytes.count
        bytes.append(0)
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let digitsStart = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[digitsStart...].reverse()
        bytes[lengthAt] = UInt8(truncatingIfNeeded: bytes.count - lengthAt - 1)
    }

    /// Starts a nested message in `field`; what is written until ``endMessage(_:)`` with the
    /// returned mark is its content.
    ///
    /// - Parameter field: the field number of the message.
    /// - Returns: where its content starts, for ``endMessage(_:)``.
    mutating func beginMessage(_ field: UInt32) -> Int {
        tag(field, .lengthDelimited)
        // One byte of length, the most a short message needs; a longer one moves its content
        // up by the bytes its length needs more (a record a byte, a request's list of records
        // two or three, once a request).
        bytes.append(0)
        return bytes.count
    }

    /// Ends the nested message begun at `start`: writes its length before it.
    ///
    /// - Parameter start: what ``beginMessage(_:)`` returned.
    mutating func endMessage(_ start: Int) {
        let length = UInt64(bytes.count - start)
        guard length >= 0x80 else {
            bytes[start - 1] = UInt8(truncatingIfNeeded: length)
            return
        }
        var extra = 0
        var rest = length >> 7
        while rest > 0 {
            extra += 1
            rest >>= 7
        }
        bytes.insert(contentsOf: repeatElement(0, count: extra), at: start)
        var value = length
        var index = start - 1
        while value >= 0x80 {
            bytes[index] = UInt8(truncatingIfNeeded: value) | 0x80
            value >>= 7
            index += 1
        }
        bytes[index] = UInt8(truncatingIfNeeded: value)
    }
}
