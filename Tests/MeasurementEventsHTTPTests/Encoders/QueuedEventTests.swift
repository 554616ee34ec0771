import EncoderTestSupport
import Foundation
import MeasurementEvents
import XCTest

@testable import MeasurementEventsHTTP

final class QueuedEventTests: XCTestCase {
    private func queued(_ attribution: EventAttribution?) -> QueuedEvent {
        var event = MeasurementEvent("feed/item_tapped")
        event.attribution = attribution
        return QueuedEvent(event: event)
    }

    /// `hasSameContext(as:)` says what comparing the two `context`s says, in every case.
    func testSameContextAgreesWithComparingTheContexts() {
        var otherContext = EncoderSamples.context
        otherContext.app.version = "9.9.9"
        var otherUser = EncoderSamples.attribution
        otherUser.identity.userID = "someone-else"
        let withoutContext = EventAttribution(identity: EncoderSamples.identity)
        let samples = [
            queued(nil), queued(withoutContext), queued(EncoderSamples.attribution), queued(otherUser),
            queued(EventAttribution(identity: EncoderSamples.identity, context: otherContext)),
        ]
        for lhs in samples {
            for rhs in samples {
                XCTAssertEqual(
                    lhs.hasSameContext(as: rhs), lhs.context == rhs.context,
                    "\(lhs.context as Any) \(rhs.context as Any)")
            }
        }
        XCTAssertTrue(samples[2].hasSameContext(as: samples[3]), "another user, the same context")
        XCTAssertFalse(samples[2].hasSameContext(as: samples[4]))
        XCTAssertTrue(samples[0].hasSameContext(as: samples[1]), "no attribution and no context are alike")
    }
}
