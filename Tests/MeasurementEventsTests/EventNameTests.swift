import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

final class EventNameTests: XCTestCase {
    func testNamespacedNamesAreValid() {
        XCTAssertNil(EventName("feed/item_tapped").validationFailure)
        XCTAssertNil(EventName("app/permission/photo_library/granted").validationFailure)
        XCTAssertNil(EventName("launch").validationFailure)
    }

    func testEmptyComponentsAreRejected() {
        for name in ["", "/feed", "feed/", "feed//item"] {
            XCTAssertNotNil(EventName(name).validationFailure, name)
        }
    }

    func testWhitespaceAndControlCharactersAreRejected() {
        XCTAssertEqual(
            EventName("feed/item tapped").validationFailure, "the name contains whitespace or a control character")
        XCTAssertNotNil(EventName("feed/\u{7}bell").validationFailure)
    }

    func testUnicodeWhitespaceControlAndInvisibleCharactersAreRejected() {
        for (scalar, code) in [
            ("\u{A0}", "00A0"), ("\u{85}", "0085"), ("\u{2028}", "2028"), ("\u{2029}", "2029"), ("\u{200B}", "200B"),
            ("\u{3000}", "3000"), ("\u{FEFF}", "FEFF"), ("\u{202E}", "202E"), ("\u{9F}", "009F"),
        ] {
            XCTAssertEqual(
                EventName("feed/item\(scalar)tapped").validationFailure,
                "the name contains whitespace or an invisible character (U+\(code))", code)
        }
    }

    func testNonASCIILettersAndEmojiAreAccepted() {
        XCTAssertNil(EventName("café/ouvert").validationFailure)
        XCTAssertNil(
            EventName("feed/👩‍👩‍👧_shown").validationFailure, "the zero-width joiner of an emoji sequence is part of it")
    }

    func testLengthLimitIsCountedInUTF8Bytes() {
        XCTAssertNil(EventName(String(repeating: "a", count: EventName.maximumLength)).validationFailure)
        XCTAssertEqual(
            EventName(String(repeating: "é", count: 129)).validationFailure,
            "the name is 258 bytes long; at most 256 are allowed")
    }

    func testComponentsSplitOnSlashes() {
        XCTAssertEqual(EventName("app/permission/granted").components, ["app", "permission", "granted"])
    }

    func testCodesAsAPlainString() throws {
        let data = try JSONEncoder().encode([EventName("feed/opened")])
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"["feed\/opened"]"#)
        XCTAssertEqual(try JSONDecoder().decode([EventName].self, from: data), ["feed/opened"])
    }
}
