import EncoderTestSupport
import Foundation
import MeasurementEvents
import XCTest

@testable import MeasurementEventsHTTP

final class QueuedEventTests: XCTestCase {
    private func same(_ lhs: QueuedEvent, _ rhs: QueuedEvent) -> Bool {
        QueuedEvent.sameContext(lhs.event.attributionStorage, rhs.event.attributionStorage)
    }

    private func queued(_ attribution: EventAttribution?) -> QueuedEvent {
        var event = MeasurementEvent("feed/item_tapped")
        event.attribution = attribution
        return QueuedEvent(event: event)
    }

    /// `sameContext` of two events' attributions says what comparing their `context`s says, in every case.
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
                    same(lhs, rhs), lhs.context == rhs.context,
                    "\(lhs.context as Any) \(rhs.context as Any)")
            }
        }
        XCTAssertTrue(same(samples[2], samples[3]), "another user, the same context")
        XCTAssertFalse(same(samples[2], samples[4]))
        XCTAssertTrue(same(samples[0], samples[1]), "no attribution and no context are alike")
    }
}
