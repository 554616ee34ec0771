import XCTest

@testable import MeasurementEvents

/// Messages name types in sentences ("arg \"n\" is an int"): the article follows the sound.
final class IndefiniteArticleTests: XCTestCase {
    func testTheArticleFollowsTheFirstSound() {
        let expected = [
            "int": "an int", "string": "a string", "double": "a double", "bool": "a bool",
            "Int": "an Int", "Array<Int>": "an Array<Int>", "Optional<Any>": "an Optional<Any>",
            "Dictionary<String, Int>": "a Dictionary<String, Int>", "NSNull": "an NSNull",
            "NSDictionary": "an NSDictionary", "URL": "a URL", "UInt": "a UInt", "UUID": "a UUID",
            "UnsafePointer<Int>": "an UnsafePointer<Int>", "unicode": "a unicode", "Date": "a Date",
            "?": "a ?", "": "a ",
        ]
        for (word, sentence) in expected {
            XCTAssertEqual(word.withIndefiniteArticle, sentence, word)
        }
    }
}
