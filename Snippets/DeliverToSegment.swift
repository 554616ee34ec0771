// An HTTP tracker with the Segment encoder. Here it points at a loopback address and is never
// asked to upload, so the sample runs anywhere without sending a byte.
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("DeliverToSegment-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: directory) }

// snippet.show
var configuration = HTTPTracker.Configuration()
configuration.flushAt = 100  // upload once 100 events are queued (20 by default)
let segment = try HTTPTracker(
    encoder: SegmentEncoder(writeKey: "YOUR_WRITE_KEY", baseURL: URL(string: "http://127.0.0.1:9")!),
    directory: directory.appendingPathComponent("segment"),
    configuration: configuration)

let aggregator = EventAggregator(
    filter: EventFilter(allow: ["feed/*"]),
    trackers: [segment],
    processors: [PersonalDataProcessor(personalArgs: ["email"], treatment: .remove)])
aggregator.start()

MeasurementEvent.post("feed/item_tapped", type: .click, args: ["position": 3, "email": "a@example.com"])
aggregator.waitUntilDelivered()
print(segment.diagnostics.queued)  // 1: on disk, waiting for its batch
// snippet.end
precondition(segment.diagnostics.queued == 1 && segment.diagnostics.requests == 0)
