import Foundation
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

@testable import MeasurementEvents

final class EventValueConvertibleTests: XCTestCase {
    func testWideIntegersThatDoNotFitA32BitIntBecomeTheirDigitsNotATrap() {
        XCTAssertEqual(Int64.eventValue(3_000_000_000, limit: .int32), .string("3000000000"))
        XCTAssertEqual(UInt32.eventValue(.max, limit: .int32), .string("4294967295"))
        XCTAssertEqual(Int64.eventValue(-7, limit: .int32), .int(-7))
    }

    func testCheckedEventValueRejectsWideIntegersThatDoNotFit() {
        XCTAssertEqual(EventValue.integer(Int64(3_000_000_000), limit: .int32), .failure(.outOfRange))
        XCTAssertEqual(EventValue.integer(UInt32.max, limit: .int32), .failure(.outOfRange))
        XCTAssertEqual(Int64(5).checkedEventValue, .success(.int(5)))
        XCTAssertEqual("x".checkedEventValue, .success(.string("x")))
    }

    func testAPostedValueThatCannotBeAnArgumentIsRejectedAsMalformedAndCounted() {
        let center = NotificationCenter()
        let tracker = RecordingTracker()
        var configuration = EventAggregator.Configuration.testing
        let problems = LockedValue<[String]>([])
        configuration.problemHandler = { problem in problems.withLock { $0.append("\(problem)") } }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("feed/opened", args: ["count": OutOfRangeValue()], to: center)
        MeasurementEvent.post("feed/closed", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.diagnostics.malformed, 1)
        XCTAssertEqual(tracker.events.map { $0.name.rawValue }, ["feed/closed"])
        XCTAssertEqual(problems.withLock { $0.filter { $0.contains("an integer that does not fit in Int") }.count }, 1)
    }
}

/// What an `Int64` beyond 32 bits is on Apple Watch.
private struct OutOfRangeValue: EventValueConvertible {
    var eventValue: EventValue { .string("3000000000") }
    var checkedEventValue: Result<EventValue, EventValue.ValueRejection> { .failure(.outOfRange) }
}
