import Foundation
import MeasurementEventsTesting
import XCTest

/// Recorders created, stopped and released while other threads post on the same center: what a
/// test suite under ThreadSanitizer does. Run under ThreadSanitizer in `.ci/run`.
final class RecorderLifecycleRaceTests: XCTestCase {
    func testRecordersMadeStoppedAndReleasedWhileOtherThreadsPost() throws {
        let center = NotificationCenter()
        let running = LockedValue(true)
        let group = DispatchGroup()
        for thread in 0..<2 {
            DispatchQueue.global().async(group: group) {
                var sequence = 0
                while running.withLock({ $0 }) {
                    MeasurementEvent.post("race/tick", args: ["thread": thread, "sequence": sequence], to: center)
                    MeasurementIdentity.identify(userID: "user-\(thread)", to: center)
                    sequence += 1
                }
            }
        }
        for round in 0..<40 {
            var recorder: EventRecorder? = EventRecorder(center: center)
            if round % 2 == 0 { recorder?.stop() }
            _ = recorder?.events.count
            recorder = nil
        }
        let last = EventRecorder(center: center)
        running.withLock { $0 = false }
        group.wait()
        last.stop()
        // What the last recorder saw of each thread is in that thread's posting order.
        for thread in 0..<2 {
            let sequences = last.events.filter { $0.args["thread"]?.intValue == thread }
                .compactMap { $0.args["sequence"]?.intValue }
            XCTAssertEqual(sequences, sequences.sorted())
        }
        MeasurementEvent.post("race/after", to: center)
        XCTAssertFalse(last.events.contains { $0.name == "race/after" }, "a stopped recorder records nothing")
    }
}
