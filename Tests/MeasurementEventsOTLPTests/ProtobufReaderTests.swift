import XCTest

@testable import MeasurementEventsOTLP

/// Bytes that are not protobuf are an error that says where, never a crash or a read past the end.
final class ProtobufReaderTests: XCTestCase {
    private func error(_ bytes: [UInt8]) -> String? {
        var reader = ProtobufReader(bytes[...])
        do {
            while try reader.next() != nil {}
            return nil
        } catch {
            return "\(error)"
        }
    }

    func testEveryWireTypeReads() throws {
        var reader = ProtobufReader(
            [0x08, 0x96, 0x01, 0x11, 1, 0, 0, 0, 0, 0, 0, 0, 0x1A, 0x02, 0x68, 0x69, 0x25, 2, 0, 0, 0][...])
        XCTAssertEqual(try reader.next()?.value, .varint(150))
        XCTAssertEqual(try reader.next()?.value, .fixed64(1))
        XCTAssertEqual(try reader.next()?.value, .lengthDelimited([0x68, 0x69][...]))
        let last = try XCTUnwrap(try reader.next())
        XCTAssertEqual(last.number, 4)
        XCTAssertEqual(last.value, .fixed32(2))
        XCTAssertNil(try reader.next())
    }

    func testMalformedBytesSayWhatAndWhere() {
        XCTAssertEqual(error([0x08]), "not protobuf at byte 1: the bytes end inside a varint")
        XCTAssertEqual(error([0x0A, 0x05, 0x01]), "not protobuf at byte 2: a field of 5 bytes where 1 remain")
        XCTAssertEqual(error([0x0B]), "not protobuf at byte 0: wire type 3, which protobuf does not use")
        XCTAssertEqual(error([0x00]), "not protobuf at byte 0: field number 0")
        XCTAssertEqual(
            error([0x08] + Array(repeating: 0xFF, count: 11)), "not protobuf at byte 11: a varint longer than ten bytes"
        )
        XCTAssertEqual(error([0x09, 1, 2]), "not protobuf at byte 1: a 64-bit field where 2 bytes remain")
        XCTAssertEqual(
            error([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]).map {
                $0.contains("where 0 remain")
            }, true)
    }
}
