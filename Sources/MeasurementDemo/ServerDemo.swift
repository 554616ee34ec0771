import DemoServer
import Foundation
import MeasurementEvents

/// `swift run measurement-demo server`: 1,000 concurrent requests of 100 users, each in its own
/// `MeasurementRequestContext`, posting 5 events each through one aggregator; every event must
/// carry its own request's user (exit status 1 otherwise).
func runServerDemo() throws {
    print("== server: 1,000 concurrent requests of 100 users, 5 events each ==")
    let report = LockedValue<ServerSimulation.Report?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result = await ServerSimulation().run()
        report.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    guard let report = report.withLock({ $0 }) else { return }
    print(report)
    guard report.isCorrect else { throw ServerDemoFailure(report: report) }
    print("every event carries its own request's user")
}

struct ServerDemoFailure: Error, CustomStringConvertible {
    var report: ServerSimulation.Report
    var description: String {
        "server demo: \(report.wrongUser) events carried another request's user, "
            + "\(report.incompleteRequests) requests are missing events (\(report.delivered) of \(report.posted) delivered)"
    }
}
