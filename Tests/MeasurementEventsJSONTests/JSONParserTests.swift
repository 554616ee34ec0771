import MeasurementEventsJSON
import XCTest

final class JSONParserTests: XCTestCase {
    private func parse(_ text: String) throws -> (JSONNode, [JSONParser.DuplicateKey]) {
        var parser = JSONParser(bytes: Array(text.utf8))
        let root = try parser.parse()
        return (root, parser.duplicateKeys)
    }

    /// A parsed tree as text, for comparing trees: the parser's types are not `Equatable` (issue 34:
    /// the synthesized `==` of the recursive tree took about 10 KB in every app linking the parser,
    /// for these assertions only). Reflection writes every field, positions included.
    private func tree(_ value: Any) -> String { String(reflecting: value) }

    private func syntaxError(_ text: String, maximumDepth: Int = 512) -> JSONSyntaxError? {
        var parser = JSONParser(bytes: Array(text.utf8), maximumDepth: maximumDepth)
        do {
            _ = try parser.parse()
            return nil
        } catch {
            return error
        }
    }

    func testObjectsKeepKeyOrderAndPositions() throws {
        let (root, _) = try parse("{\n  \"zeta\": 1,\n  \"alpha\": [true, null],\n  \"mid\": \"é\"\n}")
        guard case .object(let members) = root.value else { return XCTFail("not an object") }
        XCTAssertEqual(members.map(\.key), ["zeta", "alpha", "mid"])
        XCTAssertEqual(
            members.map(\.keyPosition),
            [
                SourcePosition(line: 2, column: 3), SourcePosition(line: 3, column: 3),
                SourcePosition(line: 4, column: 3),
            ])
        XCTAssertEqual(
            tree(members[0].value), tree(JSONNode(value: .number("1"), position: SourcePosition(line: 2, column: 11))))
        XCTAssertEqual(tree(members[2].value.value), tree(JSONNode.Value.string("é")))
    }

    func testColumnsCountCharactersNotBytes() throws {
        let (root, _) = try parse(#"{"é": "ü", "x": 1}"#)
        guard case .object(let members) = root.value else { return XCTFail("not an object") }
        XCTAssertEqual(members[1].keyPosition, SourcePosition(line: 1, column: 12))
    }

    func testEscapesIncludingSurrogatePairs() throws {
        let (root, _) = try parse(#"["a\"b\\c\/d\n\t", "\u00e9\ud83d\ude00"]"#)
        XCTAssertEqual(
            tree(root.value),
            tree(
                JSONNode.Value.array([
                    JSONNode(value: .string("a\"b\\c/d\n\t"), position: SourcePosition(line: 1, column: 2)),
                    JSONNode(value: .string("é😀"), position: SourcePosition(line: 1, column: 20)),
                ])))
    }

    func testDuplicateKeysAreReportedWithBothPositions() throws {
        let (root, duplicates) = try parse(#"{"a": {"k": 1, "k": 2}, "b": 3, "b": 4}"#)
        XCTAssertEqual(
            duplicates,
            [
                JSONParser.DuplicateKey(
                    objectPath: [.key("a")], key: "k", position: SourcePosition(line: 1, column: 16),
                    firstPosition: SourcePosition(line: 1, column: 8)),
                JSONParser.DuplicateKey(
                    objectPath: [], key: "b", position: SourcePosition(line: 1, column: 33),
                    firstPosition: SourcePosition(line: 1, column: 25)),
            ])
        guard case .object(let members) = root.value else { return XCTFail("not an object") }
        XCTAssertEqual(members.map(\.key), ["a", "b"], "the first value is kept")
    }

    func testSyntaxErrorsSayWhereWhatAndWhatWasExpected() {
        let trailingComma = syntaxError("{\"a\": 1,}")
        XCTAssertEqual(trailingComma?.position, SourcePosition(line: 1, column: 9))
        XCTAssertEqual(trailingComma?.found, "\"}\"")
        XCTAssertEqual(trailingComma?.expected, "a string key")

        XCTAssertEqual(syntaxError("[1, 2")?.expected, "\",\" or \"]\" (the array opened at 1:1 is never closed)")
        XCTAssertEqual(syntaxError("\"open")?.found, "the end of the file")
        XCTAssertEqual(syntaxError("{\"a\": tru}")?.found, "\"tru\"")
        XCTAssertEqual(syntaxError("01")?.expected, "the end of the file after the top-level value")
        XCTAssertEqual(syntaxError("{} x")?.position, SourcePosition(line: 1, column: 4))
        XCTAssertEqual(syntaxError("\"a\u{01}\"")?.found, "a control character (U+0001)")
        XCTAssertEqual(syntaxError(#""\ud800x""#)?.found, #"a lone high surrogate \uD800"#)
        XCTAssertEqual(syntaxError("")?.found, "the end of the file")
    }

    func testControlCharactersInFoundTextAreShownEscaped() {
        XCTAssertEqual(syntaxError("\u{0}")?.found, #""\u{0}""#)
        XCTAssertEqual(syntaxError("{\"a\": 1 \u{1B}}")?.found, #""\u{1B}""#)
        XCTAssertEqual(syntaxError("{\"a\u{2028}b\" 1}")?.expected, #"":" after the key "a\u{2028}b""#)
    }

    func testDeepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000)
        XCTAssertEqual(syntaxError(deep)?.found, "more than 512 nested arrays or objects")
    }

    func testNumbersKeepTheirText() throws {
        let (root, _) = try parse("[-0, 1.50, 2e10, 3E-2]")
        guard case .array(let elements) = root.value else { return XCTFail("not an array") }
        XCTAssertEqual(
            tree(elements.map(\.value)),
            tree([JSONNode.Value.number("-0"), .number("1.50"), .number("2e10"), .number("3E-2")]))
    }

    func testDepthLimitCountsContainersNotScalars() throws {
        var shallow = JSONParser(bytes: Array("[[1]]".utf8), maximumDepth: 2)
        XCTAssertNoThrow(try shallow.parse())
        let error = syntaxError("[[[1]]]", maximumDepth: 2)
        XCTAssertEqual(error?.found, "more than 2 nested arrays or objects")
        XCTAssertEqual(error?.position, SourcePosition(line: 1, column: 3))
        XCTAssertEqual(error?.reason, .tooDeep(limit: 2))
    }

    func testDuplicateMembersCanBeKeptForReadersThatReportThemThemselves() throws {
        var parser = JSONParser(bytes: Array(#"{"b": 1, "a": 2, "b": 3}"#.utf8), keepsDuplicateMembers: true)
        let root = try parser.parse()
        guard case .object(let members) = root.value else { return XCTFail("not an object") }
        XCTAssertEqual(members.map(\.key), ["b", "a", "b"])
        XCTAssertEqual(
            tree(members.map(\.value.value)), tree([JSONNode.Value.number("1"), .number("2"), .number("3")]))
        XCTAssertEqual(parser.duplicateKeys.map(\.position), [SourcePosition(line: 1, column: 18)])
    }

    func testByteOrderMarkIsSkippedAndNotCountedAsAColumn() throws {
        var parser = JSONParser(bytes: [0xEF, 0xBB, 0xBF] + Array(#"{"a": 1}"#.utf8))
        let root = try parser.parse()
        guard case .object(let members) = root.value else { return XCTFail("not an object") }
        XCTAssertEqual(root.position, SourcePosition(line: 1, column: 1))
        XCTAssertEqual(members.first?.keyPosition, SourcePosition(line: 1, column: 2))
    }

    func testInvalidUTF8IsReportedAtTheFirstBadByte() {
        var parser = JSONParser(bytes: Array(#"["é", ""#.utf8) + [0xFF] + Array(#""]"#.utf8))
        XCTAssertThrowsError(try parser.parse()) { error in
            let error = error as? JSONSyntaxError
            XCTAssertEqual(error?.reason, .invalidUTF8)
            XCTAssertEqual(error?.position, SourcePosition(line: 1, column: 8))
            XCTAssertEqual(error?.offset, 8)
            XCTAssertEqual(error?.found, "bytes that are not UTF-8")
        }
    }

    func testSyntaxErrorsCarryTheirReasonAndByteOffset() {
        let unterminated = syntaxError("[\"é\", \"open")
        XCTAssertEqual(unterminated?.reason, .unterminatedString(opening: SourcePosition(line: 1, column: 7)))
        XCTAssertEqual(unterminated?.position, SourcePosition(line: 1, column: 12))
        XCTAssertEqual(unterminated?.offset, 12)

        XCTAssertEqual(syntaxError(#"{"key" 1}"#)?.reason, .expectedColon(afterKey: "key"))
        XCTAssertEqual(syntaxError(#"{"key": 1 2}"#)?.reason, .expectedCommaOrClosingBrace(afterKey: "key"))
        XCTAssertEqual(
            syntaxError(#"["\q"]"#)?.reason, .invalidEscape(UInt8(ascii: "q"), at: SourcePosition(line: 1, column: 4)))
        XCTAssertEqual(syntaxError("-x")?.reason, .expectedDigit(after: .minusSign))
        XCTAssertEqual(syntaxError("1.x")?.reason, .expectedDigit(after: .decimalPoint))
        XCTAssertEqual(syntaxError("1ex")?.reason, .expectedDigit(after: .exponentMark))
        XCTAssertEqual(syntaxError("[] []")?.reason, .trailingContent)
    }
}
