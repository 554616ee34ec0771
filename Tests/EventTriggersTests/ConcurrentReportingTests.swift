import EventTriggers
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

final class ConcurrentReportingTests: XCTestCase {
    struct Firing: Sendable, Equatable {
        var thread: Int
        var sequence: Int
    }

    func testActionsFromFourReportingThreadsAllRunInPerThreadOrder() {
        let detector = TriggerDetector()
        let perThread = 2_000
        let fired = Collected<Firing>()
        let objects = (0..<4).map { ScreenObject("thread \($0)") }
        // Each thread's object carries a counter; its action records the sequence it fired at.
        for (thread, object) in objects.enumerated() {
            let counter = LockedValue(0)
            detector.attach(
                TriggeredEvent(.didEndTouch) { _ in
                    let sequence = counter.withLock { value -> Int in
                        defer { value += 1 }
                        return value
                    }
                    fired.append(Firing(thread: thread, sequence: sequence))
                }, to: object)
        }
        // A shared object fired by every thread too, to contend on the same entry.
        let shared = ScreenObject("shared")
        let sharedFirings = Collected<Int>()
        detector.attach(TriggeredEvent(.didEndTouch) { _ in sharedFirings.append(1) }, to: shared)

        let threadObjects = objects
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for index in 0..<perThread {
                XCTAssertTrue(detector.reportDidEndTouch(threadObjects[thread], synchronously: index % 100 == 0))
                if index % 10 == 0 { detector.reportDidEndTouch(shared) }
            }
        }
        detector.flush()

        let all = fired.all
        XCTAssertEqual(all.count, 4 * perThread)
        for thread in 0..<4 {
            XCTAssertEqual(all.filter { $0.thread == thread }.map(\.sequence), Array(0..<perThread), "thread \(thread)")
        }
        XCTAssertEqual(sharedFirings.all.count, 4 * perThread / 10)
    }
}
