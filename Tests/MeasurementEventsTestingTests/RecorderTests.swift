import MeasurementEventsTesting
import XCTest

final class RecorderTests: XCTestCase {
    func testPlaceholder() {
        XCTAssertEqual(EventName("a/b").components, ["a", "b"])
    }
}
