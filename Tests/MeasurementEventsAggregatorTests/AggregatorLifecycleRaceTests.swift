import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// Aggregators created, started, stopped and released on one thread while other threads post on
/// the same center: what an app's tests and a user's ThreadSanitizer job do. Run under
/// ThreadSanitizer in `.ci/run`; without it, they check that nothing is lost or doubled.
final class AggregatorLifecycleRaceTests: XCTestCase {
    /// Two threads post until told to stop; returns how many each posted.
    private final class Posters: @unchecked Sendable {
        // @unchecked: `running` and `counts` sit behind their locks.
        let center: NotificationCenter
        let running = LockedValue(true)
        private let group = DispatchGroup()

        init(center: NotificationCenter, threads: Int = 2) {
            self.center = center
            for thread in 0..<threads {
                DispatchQueue.global().async(group: group) { [self] in
                    var sequence = 0
                    while running.withLock({ $0 }) {
                        MeasurementEvent.post("race/tick", args: ["thread": thread, "sequence": sequence], to: center)
                        sequence += 1
                    }
                }
            }
        }

        func stop() {
            running.withLock { $0 = false }
            group.wait()
        }
    }

    private func configuration() -> EventAggregator.Configuration {
        var configuration = EventAggregator.Configuration()
        configuration.identityStore = .inMemory
        configuration.problemHandler = nil
        return configuration
    }

    func testAggregatorsMadeStartedStoppedAndReleasedWhileOtherThreadsPost() {
        let center = NotificationCenter()
        let posters = Posters(center: center)
        for round in 0..<40 {
            let tracker = RecordingTracker()
            var aggregator: EventAggregator? = EventAggregator(
                center: center, filter: .allowAll, trackers: [tracker], configuration: configuration())
            if round % 4 != 3 { aggregator?.start() }  // some are released without ever starting
            if round % 2 == 0 { aggregator?.stop() }
            _ = aggregator?.diagnostics
            aggregator = nil
        }
        posters.stop()

        // A last aggregator, started with the posters gone, gets exactly what is posted next.
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration())
        aggregator.start()
        for index in 0..<10 { MeasurementEvent.post("race/after", args: ["index": index], to: center) }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map(\.name.rawValue), Array(repeating: "race/after", count: 10))
        XCTAssertEqual(tracker.events.compactMap { $0.args["index"]?.intValue }, Array(0..<10))
    }

    func testAnAggregatorNeverStartedCountsWhatOtherThreadsPostedAndSaysSo() {
        let center = NotificationCenter()
        let problems = LockedValue<[EventAggregator.Problem]>([])
        var configuration = configuration()
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem) } }
        let aggregator = EventAggregator(center: center, filter: .allowAll, configuration: configuration)
        let posters = Posters(center: center)
        for index in 0..<5 { MeasurementEvent.post("race/main", args: ["index": index], to: center) }
        posters.stop()
        aggregator.waitUntilDelivered()
        let notStarted = problems.withLock { $0 }.filter {
            if case .notStarted = $0 { return true }
            return false
        }
        XCTAssertEqual(notStarted.count, 1, "\(problems.withLock { $0 })")
    }
}
