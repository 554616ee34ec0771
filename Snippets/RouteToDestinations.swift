// Destinations: one filter, one vendor's arg removed, one sampled; a step of the app's own.
import MeasurementEvents
import MeasurementEventsAggregator

// snippet.show
/// Removes the `debug` arg from every event, for every destination.
struct DropDebugArgs: DeliveryStep {
    func run(_ batch: inout DeliveryBatch, for aggregator: EventAggregator) {
        batch.process { event in
            var event = event
            event.args["debug"] = nil
            return event
        }
    }
}

var configuration = EventAggregator.Configuration()
configuration.identityStore = .inMemory  // a sample: nothing remembered
configuration.insert(DropDebugArgs(), after: .attribution)

let withoutCoupon = ClosureProcessor { event in
    var event = event
    event.args["coupon"] = nil  // for this vendor only
    return event
}
let aggregator = EventAggregator(
    filter: EventFilter(allow: ["checkout/*", "feed/*"]),
    destinations: [
        Destination(
            ConsoleTracker(prefix: "[amplitude]"), name: "amplitude", filter: EventFilter(allow: ["checkout/*"])),
        Destination(ConsoleTracker(prefix: "[ga4]"), name: "ga4", processors: [withoutCoupon]),
        Destination(ConsoleTracker(prefix: "[otlp]"), name: "otlp", sampleRate: 0.1),
    ],
    configuration: configuration)
aggregator.start()

MeasurementEvent.post("checkout/completed", args: ["coupon": "SPRING", "debug": "on"])
MeasurementEvent.post("feed/item_tapped", args: ["position": 3])
// snippet.end

aggregator.waitUntilDelivered()
