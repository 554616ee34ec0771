import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsStandard
import MeasurementEventsTesting
import XCTest

final class TimersTests: XCTestCase {
    /// Starting a timer is a post on the bus, like any event: a feature module needs nothing
    /// but the bus, and a test sees it with a plain recorder.
    func testStartingATimerPostsTimerStartedNamingTheEvent() throws {
        let center = NotificationCenter()
        let recorder = EventRecorder(center: center)
        Timers.start("checkout/completed", to: center)
        let event = try recorder.waitForEvent("timer/started", args: ["event": "checkout/completed"])
        XCTAssertEqual(event.type, .activity)
    }
}
