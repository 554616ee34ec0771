import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// A server handling many users' requests at once, each in its own `MeasurementRequestContext`,
/// posting through one aggregator into an in-memory tracker; then the check that every event
/// carries its own request's user. `swift run measurement-demo server` runs it at full size
/// (1,000 requests of 100 users, 5 events each); a test runs it smaller.
package struct ServerSimulation: Sendable {
    /// Requests handled at once, each a task.
    package var requests = 1_000
    /// Users the requests belong to: request `n` is user `n % users`'s.
    package var users = 100
    /// Events each request posts, with an `await` between two.
    package var eventsPerRequest = 5

    package init(requests: Int = 1_000, users: Int = 100, eventsPerRequest: Int = 5) {
        self.requests = requests
        self.users = users
        self.eventsPerRequest = eventsPerRequest
    }

    /// What the check found.
    package struct Report: Sendable, CustomStringConvertible {
        package var requests = 0
        package var users = 0
        package var posted = 0
        package var delivered = 0
        /// Events whose user is not their request's.
        package var wrongUser = 0
        /// Requests whose events did not all arrive.
        package var incompleteRequests = 0
        /// Events that carried the aggregator's own user (the service's, set outside any context).
        package var carriedTheServicesUser = 0
        package var seconds = 0.0
        /// The aggregator's counters after the run.
        package var diagnostics: EventAggregator.Diagnostics?

        /// Whether every posted event arrived, each with its own request's user.
        package var isCorrect: Bool { wrongUser == 0 && incompleteRequests == 0 && delivered == posted }

        package var description: String {
            """
            \(requests) concurrent requests of \(users) users, \(posted) events posted, \(delivered) delivered \
            in \(String(format: "%.3f", seconds)) s (\(String(format: "%.0f", Double(delivered) / max(seconds, 1e-9))) events/s)
            events with another request's user: \(wrongUser); with the service's own user: \
            \(carriedTheServicesUser); requests missing events: \(incompleteRequests)
            aggregator: received \(diagnostics?.received ?? 0), forwarded \(diagnostics?.forwarded ?? 0), \
            dropped in flight \(diagnostics?.droppedInFlight ?? 0), identity changes \(diagnostics?.identityChanges ?? 0)
            """
        }
    }

    /// Runs the requests concurrently and checks what the tracker received.
    package func run() async -> Report {
        let center = NotificationCenter()
        let tracker = InMemoryTracker()
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = .inMemory
        configuration.maximumInFlightEvents = max(configuration.maximumInFlightEvents, requests * eventsPerRequest)
        let aggregator = EventAggregator(
            center: center, filter: EventFilter(allow: ["request/*"]), trackers: [tracker],
            configuration: configuration)
        aggregator.start()
        // The service's own identity, outside any context: no request's event may carry it.
        MeasurementIdentity.identify(userID: "service", to: center)

        let started = Date()
        await withTaskGroup(of: Void.self) { group in
            for request in 0..<requests {
                group.addTask { await handle(request, on: center) }
            }
        }
        aggregator.waitUntilDelivered()
        let seconds = Date().timeIntervalSince(started)

        var report = Report()
        (report.requests, report.users, report.posted) = (requests, users, requests * eventsPerRequest)
        report.seconds = seconds
        let events = tracker.events.withLock { $0 }
        report.delivered = events.count
        var perRequest = [Int](repeating: 0, count: requests)
        for event in events {
            guard let request = event.args["request"]?.intValue, perRequest.indices.contains(request) else {
                report.wrongUser += 1
                continue
            }
            perRequest[request] += 1
            if event.userID != Self.user(of: request, users: users) { report.wrongUser += 1 }
            if event.userID == "service" { report.carriedTheServicesUser += 1 }
        }
        report.incompleteRequests = perRequest.filter { $0 != eventsPerRequest }.count
        report.diagnostics = aggregator.diagnostics
        return report
    }

    static func user(of request: Int, users: Int) -> String { "user-\(request % users)" }

    /// One request: its user's context; a sign-in of half the requests (an identify inside the
    /// context, which changes that context only) and `eventsPerRequest` events, with `await`s
    /// between them so that the tasks interleave on the pool's threads.
    private func handle(_ request: Int, on center: NotificationCenter) async {
        let user = Self.user(of: request, users: users)
        let context = MeasurementRequestContext(
            userID: request % 2 == 0 ? user : nil,
            attributes: ["request": request, "tenant": "tenant-\(request % 7)"])
        await context.run {
            if request % 2 == 1 { MeasurementIdentity.identify(userID: user, traits: ["plan": "pro"], to: center) }
            for step in 0..<eventsPerRequest {
                MeasurementEvent.post("request/step", args: ["step": step], to: center)
                await Task.yield()
            }
        }
    }

    private final class InMemoryTracker: EventTracker {
        let events = LockedValue<[MeasurementEvent]>([])
        func track(_ event: MeasurementEvent) { events.withLock { $0.append(event) } }
    }
}
