import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

final class EventFilterTests: XCTestCase {
    func testExactNamesMatchOnlyThemselves() {
        let filter = EventFilter(allow: ["feed/item_tapped"])
        XCTAssertTrue(filter.allows("feed/item_tapped"))
        XCTAssertFalse(filter.allows("feed/item_tapped_twice"))
        XCTAssertFalse(filter.allows("feed"))
    }

    func testWildcardMatchesEveryDepthBelowItsPrefix() {
        let filter = EventFilter(allow: ["app/permission/*"])
        XCTAssertTrue(filter.allows("app/permission/photo_library/granted"))
        XCTAssertTrue(filter.allows("app/permission/denied"))
        XCTAssertFalse(filter.allows("app/permission"))
        XCTAssertFalse(filter.allows("app/permissions/denied"))
        XCTAssertFalse(filter.allows("app/launched"))
    }

    func testDenyListWinsOverAllowList() {
        let filter = EventFilter(allow: ["feed/*"], deny: ["feed/debug/*", "feed/item_seen"])
        XCTAssertTrue(filter.allows("feed/item_tapped"))
        XCTAssertFalse(filter.allows("feed/debug/layout_pass"))
        XCTAssertFalse(filter.allows("feed/item_seen"))
    }

    func testStarAllowsEverythingAndEmptyAllowsNothing() {
        XCTAssertTrue(EventFilter.allowAll.allows("anything/at/all"))
        XCTAssertFalse(EventFilter.denyAll.allows("feed/opened"))
        XCTAssertFalse(EventFilter(allow: ["*"], deny: ["*"]).allows("feed/opened"))
    }

    func testInvalidPatternsMatchNothingAndAreListed() {
        let filter = EventFilter(allow: ["feed/item_*", "feed*", "*/opened", "feed/opened"])
        XCTAssertEqual(filter.invalidPatterns, ["feed/item_*", "feed*", "*/opened"])
        XCTAssertFalse(filter.allows("feed/item_tapped"))
        XCTAssertTrue(filter.allows("feed/opened"))
    }

    func testParseExplainsWhatIsWrong() {
        XCTAssertThrowsError(try EventPattern.parse("feed/item_*")) { error in
            XCTAssertEqual(
                "\(error)",
                #"invalid event pattern "feed/item_*": a wildcard must be "*" alone or a final "/*", as in "feed/*""#)
        }
        XCTAssertThrowsError(try EventPattern.parse("")) { error in
            XCTAssertEqual("\(error)", #"invalid event pattern "": the name is empty"#)
        }
        XCTAssertEqual(try EventPattern.parse("feed/*").description, "feed/*")
    }

    func testLargeListsStillMatchExactly() {
        var patterns = (0..<100_000).map { EventPattern(EventName("module\($0 % 100)/event_\($0)")) }
        patterns += (0..<100).map { EventPattern(stringLiteral: "wild\($0)/*") }
        let filter = EventFilter(allow: patterns)
        XCTAssertTrue(filter.allows("module7/event_99907"))
        XCTAssertFalse(filter.allows("module7/event_100000"))
        XCTAssertTrue(filter.allows("wild42/deep/name"))
        XCTAssertFalse(filter.allows("wild100/name"))
    }

    func testAPatternAndAFilterAgreeOnACombiningMarkAfterTheSlash() {
        let name = EventName("feed/\u{301}x")
        XCTAssertNil(name.validationFailure)
        XCTAssertTrue(EventFilter(allow: ["feed/*"]).allows(name))
        XCTAssertTrue(EventPattern("feed/*").matches(name))
    }

    func testPatternsCodeAsStrings() throws {
        let data = Data(#"["feed/*","app/launched"]"#.utf8)
        let patterns = try JSONDecoder().decode([EventPattern].self, from: data)
        XCTAssertEqual(patterns.map(\.description), ["feed/*", "app/launched"])
        XCTAssertThrowsError(try JSONDecoder().decode([EventPattern].self, from: Data(#"["fe*d"]"#.utf8)))
    }
}
