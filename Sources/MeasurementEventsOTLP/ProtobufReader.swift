/// Reads Protocol Buffers' binary wire format field by field (protobuf.dev/programming-guides/encoding/):
/// what the collector's reply to a protobuf request holds. Fields of any number come back with
/// their values, for the caller to pick and to skip the others; a body that ends inside a field,
/// a varint longer than ten bytes or a wire type protobuf does not use (groups, 3 and 4, are
/// deprecated) is an error that says where.
struct ProtobufReader {
    /// A field's value as the wire carries it.
    enum Value: Equatable {
        /// Wire type 0: `int32`, `int64`, `uint32`, `uint64`, `bool`, enums.
        case varint(UInt64)
        /// Wire type 1: `fixed64`, `sfixed64`, `double`.
        case fixed64(UInt64)
        /// Wire type 2: strings, bytes, nested messages, packed repeated fields.
        case lengthDelimited(ArraySlice<UInt8>)
        /// Wire type 5: `fixed32`, `sfixed32`, `float`.
        case fixed32(UInt32)
    }

    /// What is wrong with the bytes, and at which offset.
    struct Malformed: Error, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "not protobuf at byte \(offset): \(reason)" }
    }

    private let bytes: ArraySlice<UInt8>
    private var index: Int

    /// A reader of `bytes`, from their first.
    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    /// The next field: its number and value; `nil` at the end of the bytes.
    mutating func next() throws -> (number: UInt64, value: Value)? {
        guard index < bytes.endIndex else { return nil }
        let start = index
        let tag = try varint()
        let number = tag >> 3
        guard number > 0 else { throw Malformed(offset: start - bytes.startIndex, reason: "field number 0") }
        switch tag & 7 {
        case 0: return (number, .varint(try varint()))
        case 1: return (number, .fixed64(try littleEndian(8)))
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - index) else {
                throw Malformed(
                    offset: index - bytes.startIndex,
                    reason: "a field of \(length) bytes where \(bytes.endIndex - index) remain")
            }
            let end = index + Int(length)  // fits: at most what remains, checked just above
            defer { index = end }
            return (number, .lengthDelimited(bytes[index..<end]))
        case 5: return (number, .fixed32(UInt32(truncatingIfNeeded: try littleEndian(4))))
        default:
            throw Malformed(
                offset: start - bytes.startIndex, reason: "wire type \(tag & 7), which protobuf does not use")
        }
    }

    private mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), to: 70, by: 7) {
            guard index < bytes.endIndex else {
                throw Malformed(offset: index - bytes.startIndex, reason: "the bytes end inside a varint")
            }
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
        }
        throw Malformed(offset: index - bytes.startIndex, reason: "a varint longer than ten bytes")
    }

    private mutating func littleEndian(_ count: Int) throws -> UInt64 {
        guard bytes.endIndex - index >= count else {
            throw Malformed(
                offset: index - bytes.startIndex,
                reason: "a \(count * 8)-bit field where \(bytes.endIndex - index) bytes remain")
        }
        var value: UInt64 = 0
        for offset in 0..<count { value |= UInt64(bytes[index + offset]) << UInt64(8 * offset) }
        index += count
        return value
    }
}
