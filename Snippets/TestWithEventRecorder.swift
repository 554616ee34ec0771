// Testing that a module posted an event, with the test kit's EventRecorder.
import MeasurementEvents
import MeasurementEventsTesting

struct Feed {
    func didTapItem(at position: Int) {
        MeasurementEvent.post("feed/item_tapped", type: .click, args: ["position": position])
    }
}
let feed = Feed()

// snippet.show
let recorder = EventRecorder()
feed.didTapItem(at: 3)
let event = try recorder.waitForEvent("feed/item_tapped", args: ["position": 3])
precondition(event.type == .click)  // in a test: #expect(event.type == .click)
// snippet.end
print(event)
