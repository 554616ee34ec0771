// A server handles each request in its own context: every event posted while handling it carries
// that request's user and attributes, whatever the other requests do meanwhile.
import MeasurementEvents
import MeasurementEventsAggregator

var configuration = EventAggregator.Configuration()
configuration.identityStore = .inMemory
let aggregator = EventAggregator(
    filter: EventFilter(allow: ["checkout/*"]),
    trackers: [
        ClosureTracker { event in
            print(event.name, "user:", event.userID ?? "none", "tenant:", event.args["tenant"] ?? "none")
        }
    ],
    configuration: configuration)
aggregator.start()

// snippet.show
func handleCheckout(userID: String, tenant: String, requestID: String) async {
    let context = MeasurementRequestContext(
        userID: userID, attributes: ["tenant": tenant, "request_id": requestID])
    await context.run {
        MeasurementEvent.post("checkout/started")  // carries userID, tenant and request_id
        await Task.yield()  // other requests run meanwhile
        MeasurementIdentity.identify(userID: nil, traits: ["plan": "pro"])  // this request's user only
        MeasurementEvent.post("checkout/completed")
    }
}

await withTaskGroup(of: Void.self) { group in
    group.addTask { await handleCheckout(userID: "u-1", tenant: "acme", requestID: "r-1") }
    group.addTask { await handleCheckout(userID: "u-2", tenant: "globex", requestID: "r-2") }
}
// snippet.end

aggregator.waitUntilDelivered()
