import XCTest

@testable import MeasurementEventsOTLP

/// The wire format as protobuf.dev/programming-guides/encoding/ spells its examples, and
/// round trips through ``ProtobufReader``.
final class ProtobufWriterTests: XCTestCase {
    func testVarintsAsTheEncodingGuideWritesThem() {
        // "Base 128 Varints": 1 is 01; 150 is 96 01; "08 96 01" is field 1 = 150.
        var writer = ProtobufWriter()
        writer.unsigned(1, 150)
        XCTAssertEqual(writer.bytes, [0x08, 0x96, 0x01])
        writer = ProtobufWriter()
        writer.varint(300)
        XCTAssertEqual(writer.bytes, [0xAC, 0x02])
        writer = ProtobufWriter()
        writer.varint(UInt64.max)
        XCTAssertEqual(writer.bytes, Array(repeating: 0xFF, count: 9) + [0x01])
    }

    func testNegativeInt64IsTenBytesOfTwosComplement() {
        // "Signed Integers": an int64 of -2 is ten bytes, fe ff ff ff ff ff ff ff ff 01.
        var writer = ProtobufWriter()
        writer.int64(3, -2)
        XCTAssertEqual(writer.bytes, [0x18, 0xFE] + Array(repeating: 0xFF, count: 8) + [0x01])
    }

    func testStringsFixed64DoublesAndBools() {
        // "Length-Delimited Records": "12 07 74 65 73 74 69 6e 67" is field 2 = "testing".
        var writer = ProtobufWriter()
        writer.string(2, "testing")
        XCTAssertEqual(writer.bytes, [0x12, 0x07] + Array("testing".utf8))
        writer = ProtobufWriter()
        writer.fixed64(1, 0x0102_0304_0506_0708)
        XCTAssertEqual(writer.bytes, [0x09, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
        writer = ProtobufWriter()
        writer.double(4, 1.5)
        XCTAssertEqual(writer.bytes, [0x21, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F])
        writer = ProtobufWriter()
        writer.bool(2, true)
        writer.bool(2, false)
        XCTAssertEqual(writer.bytes, [0x10, 0x01, 0x10, 0x00])
    }

    func testDecimalsAreTheDigitsAsAString() {
        for number: Int64 in [0, 7, -7, 1_714_566_000_000, .max, .min] {
            var writer = ProtobufWriter()
            writer.decimal(1, number)
            var expected = ProtobufWriter()
            expected.string(1, String(number))
            XCTAssertEqual(writer.bytes, expected.bytes, "\(number)")
        }
    }

    /// A message's length is written once it is known: one byte under 128, more above, with
    /// its content moved up intact; nested messages end inside out.
    func testNestedMessagesOfEverySizeReadBackWhole() throws {
        for size in [0, 1, 127, 128, 300, 16_383, 16_384, 70_000] {
            let text = String(repeating: "x", count: size)
            var writer = ProtobufWriter()
            let outer = writer.beginMessage(1)
            writer.unsigned(1, 5)
            let inner = writer.beginMessage(2)
            writer.string(1, text)
            writer.endMessage(inner)
            writer.endMessage(outer)
            writer.unsigned(3, 9)

            var reader = ProtobufReader(writer.bytes[...])
            let first = try XCTUnwrap(try reader.next())
            XCTAssertEqual(first.number, 1)
            guard case .lengthDelimited(let outerBytes) = first.value else { return XCTFail("\(first)") }
            XCTAssertEqual(try reader.next()?.value, .varint(9))
            XCTAssertNil(try reader.next())

            var outerReader = ProtobufReader(outerBytes)
            XCTAssertEqual(try outerReader.next()?.value, .varint(5))
            guard case .lengthDelimited(let innerBytes) = try outerReader.next()?.value else { return XCTFail() }
            XCTAssertNil(try outerReader.next())
            var innerReader = ProtobufReader(innerBytes)
            guard case .lengthDelimited(let textBytes) = try innerReader.next()?.value else { return XCTFail() }
            XCTAssertEqual(String(decoding: textBytes, as: UTF8.self), text, "size \(size)")
        }
    }
}
