import ImpressionTracking
import XCTest

final class ImpressionConfigurationTests: XCTestCase {
    func testDefaultsFollowTheViewabilityStandard() throws {
        let configuration = ImpressionConfiguration()
        XCTAssertEqual(configuration.minimumVisibleFraction, 0.5)
        XCTAssertEqual(configuration.minimumVisibleDuration, 1.0)
        XCTAssertNoThrow(try configuration.validate())
    }

    func testIntervalNotGreaterThanTheMinimumTimeIsRejected() {
        for interval in [1.0, 0.5, 0, -1, .nan, .infinity] {
            var configuration = ImpressionConfiguration()
            configuration.commitInterval = interval
            XCTAssertThrowsError(try ImpressionEngine<Int>(configuration: configuration), "interval \(interval)") {
                error in
                let error = error as? ImpressionConfigurationError
                XCTAssertEqual(error?.problems.map(\.setting), ["commitInterval"], "interval \(interval)")
                XCTAssertTrue(
                    error?.description.contains("strictly greater than minimumVisibleDuration (1.0 s)") == true)
            }
        }
    }

    func testIntervalJustAboveTheMinimumTimeIsAccepted() {
        var configuration = ImpressionConfiguration()
        configuration.minimumVisibleDuration = 2
        configuration.commitInterval = 2.001
        XCTAssertNoThrow(try configuration.validate())
    }

    func testEveryInvalidSettingIsListedAtOnce() {
        var configuration = ImpressionConfiguration()
        configuration.minimumVisibleFraction = 0
        configuration.minimumVisibleDuration = -1
        configuration.batchSize = 0
        configuration.storeLimit = 0
        configuration.commitInterval = .nan
        XCTAssertThrowsError(try configuration.validate()) { error in
            XCTAssertEqual(
                (error as? ImpressionConfigurationError)?.problems.map(\.setting),
                ["minimumVisibleFraction", "minimumVisibleDuration", "commitInterval", "batchSize", "storeLimit"])
            XCTAssertEqual(
                (error as? ImpressionConfigurationError)?.problems.first?.description,
                "minimumVisibleFraction: found 0.0, expected a share of the item's area greater than 0 and at most 1")
        }
    }
}
