// Identity travels on the bus, in posting order with the events: the sign-out event still carries
// the user who signed out; the event after the reset carries a new anonymous id and no user id.
import MeasurementEvents
import MeasurementEventsAggregator

let aggregator = EventAggregator(
    filter: EventFilter(allow: ["account/*", "feed/*"]),
    trackers: [
        ClosureTracker { event in
            print(event.name, "user:", event.userID ?? "none", "session:", event.sessionID ?? 0)
        }
    ])
aggregator.start()

// snippet.show
MeasurementIdentity.identify(userID: "u-1234", traits: ["plan": "pro"])
MeasurementIdentity.group("team-7", traits: ["seats": 40])
MeasurementEvent.post("feed/opened")
MeasurementEvent.post("account/signed_out")  // carries user u-1234
MeasurementIdentity.reset()
MeasurementEvent.post("feed/opened")  // no user id, a new anonymous id
// snippet.end

aggregator.waitUntilDelivered()
