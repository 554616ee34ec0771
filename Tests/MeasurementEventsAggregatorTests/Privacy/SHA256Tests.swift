import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

/// NIST FIPS 180-4 example vectors (also in RFC 6234).
final class SHA256Tests: XCTestCase {
    func testEmptyInput() {
        XCTAssertEqual(
            SHA256.hexDigest(of: [UInt8]()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    func testAbc() {
        XCTAssertEqual(
            SHA256.hexDigest(of: Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testTwoBlockMessage() {
        XCTAssertEqual(
            SHA256.hexDigest(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    func testMillionAs() {
        XCTAssertEqual(
            SHA256.hexDigest(of: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testIncrementalUpdatesMatchOneShot() {
        var hasher = SHA256()
        hasher.update(Array("abcdbcdecdefdefgefghfghighijhijk".utf8))
        hasher.update(Array("ijkljklmklmnlmnomnopnopq".utf8))
        XCTAssertEqual(
            hasher.finalize(), SHA256.digest(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
        )
    }
}
