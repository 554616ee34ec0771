import EventTriggers
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

final class TriggerDetectorTests: XCTestCase {
    /// Calls the entry point dedicated to `trigger`, for one object.
    private func reportThroughEntryPoint(_ trigger: Trigger, _ object: AnyObject, on detector: TriggerDetector) -> Bool
    {
        switch trigger {
        case .none: return detector.report(.none, for: [object])
        case .didAppear: return detector.reportDidAppear(object)
        case .didDisappear: return detector.reportDidDisappear(object)
        case .didEndTouch: return detector.reportDidEndTouch(object)
        case .didBeginScroll: return detector.reportDidBeginScroll(object)
        case .didBecomeFirstResponder: return detector.reportDidBecomeFirstResponder(object)
        case .didResignFirstResponder: return detector.reportDidResignFirstResponder(object)
        case .targetAction: return detector.reportTargetAction(object)
        }
    }

    func testEachEntryPointFiresOnlyTheEventsOfItsTrigger() {
        let detector = TriggerDetector()
        let object = ScreenObject()
        let fired = Collected<Trigger>()
        for trigger in Trigger.allCases {
            detector.attach(TriggeredEvent(trigger) { fired.append($0.trigger) }, to: object)
        }
        for trigger in Trigger.allCases where trigger != .none {
            XCTAssertTrue(reportThroughEntryPoint(trigger, object, on: detector), "\(trigger)")
            detector.flush()
            XCTAssertEqual(fired.all.last, trigger)
        }
        XCTAssertEqual(fired.all, Trigger.allCases.filter { $0 != .none })
    }

    func testArrayEntryPointsReportEveryObject() {
        let detector = TriggerDetector()
        let cells = [ScreenObject("a"), ScreenObject("b"), ScreenObject("c")]
        let fired = Collected<String>()
        for cell in cells {
            let name = cell.name
            detector.attach(TriggeredEvent(.didAppear) { _ in fired.append(name) }, to: cell)
            detector.attach(TriggeredEvent(.didDisappear) { _ in fired.append("-" + name) }, to: cell)
        }
        XCTAssertTrue(detector.reportDidAppear(cells))
        XCTAssertTrue(detector.reportDidDisappear(Array(cells.prefix(2))))
        detector.flush()
        XCTAssertEqual(fired.all, ["a", "b", "c", "-a", "-b"])
    }

    func testTriggerNoneNeverFires() {
        let detector = TriggerDetector()
        let object = ScreenObject()
        let fired = Collected<Trigger>()
        detector.attach(TriggeredEvent(.none) { fired.append($0.trigger) }, to: object)
        XCTAssertFalse(detector.report(.none, for: [object], synchronously: true))
        for trigger in Trigger.allCases {
            XCTAssertFalse(reportThroughEntryPoint(trigger, object, on: detector))
        }
        detector.flush()
        XCTAssertEqual(fired.all, [])
    }

    func testReportingAnObjectWithoutEventsFiresNothing() {
        let detector = TriggerDetector()
        XCTAssertFalse(detector.reportDidAppear(ScreenObject()))
        XCTAssertFalse(detector.reportDidAppear([AnyObject]()))
    }

    func testSeveralEventsOnOneObjectFireInAttachmentOrder() {
        let detector = TriggerDetector()
        let object = ScreenObject()
        let fired = Collected<String>()
        detector.attach(TriggeredEvent(.didAppear) { _ in fired.append("first") }, to: object)
        detector.attach(
            [
                TriggeredEvent(.didEndTouch) { _ in fired.append("touch") },
                TriggeredEvent(.didAppear) { _ in fired.append("second") },
            ], to: object)
        detector.attach(TriggeredEvent(.didAppear) { _ in fired.append("third") }, to: object)
        XCTAssertEqual(detector.events(attachedTo: object).count, 4)

        detector.reportDidAppear(object)
        detector.reportDidAppear(object)
        detector.flush()
        XCTAssertEqual(fired.all, ["first", "second", "third", "first", "second", "third"])
    }

    func testTraceTimestampAndIdentifierReachTheAction() throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 5_000))
        let traces = Collected<String>()
        let detector = TriggerDetector(now: { clock.now }, traceHandler: { traces.append($0) })
        let object = ScreenObject()
        let firings = Collected<TriggerFiring>()
        let id = detector.attach(TriggeredEvent(.didEndTouch, trace: "buy button") { firings.append($0) }, to: object)
        let untraced = detector.attach(TriggeredEvent(.didEndTouch) { firings.append($0) }, to: object)
        clock.advance(by: 2.5)

        detector.reportDidEndTouch(object)
        detector.flush()

        XCTAssertEqual(
            firings.all,
            [
                TriggerFiring(
                    timestamp: Date(timeIntervalSince1970: 5_002.5), trigger: .didEndTouch, eventID: id,
                    trace: "buy button"),
                TriggerFiring(
                    timestamp: Date(timeIntervalSince1970: 5_002.5), trigger: .didEndTouch, eventID: untraced,
                    trace: nil),
            ])
        XCTAssertEqual(traces.all, ["didEndTouch fired \"buy button\" (id \(id.uuidString))"])
    }

    func testEventIdentifiersAreUnique() {
        let ids = Set((0..<1_000).map { _ in TriggeredEvent(.didAppear) { _ in }.id })
        XCTAssertEqual(ids.count, 1_000)
    }

    func testAsynchronousActionsRunOffTheReportingThread() {
        let detector = TriggerDetector()
        let object = ScreenObject()
        let ranOnMainThread = Collected<Bool>()
        detector.attach(TriggeredEvent(.didAppear) { _ in ranOnMainThread.append(Thread.isMainThread) }, to: object)
        XCTAssertTrue(Thread.isMainThread)
        detector.reportDidAppear(object)
        detector.flush()
        XCTAssertEqual(ranOnMainThread.all, [false])
    }

    func testSynchronousReportRunsActionsBeforeReturningAfterQueuedOnes() {
        let detector = TriggerDetector()
        let object = ScreenObject()
        let fired = Collected<String>()
        let gate = DispatchSemaphore(value: 0)
        detector.attach(
            TriggeredEvent(.didAppear) { _ in
                gate.wait(); fired.append("appear")
            }, to: object)
        detector.attach(TriggeredEvent(.didEndTouch) { _ in fired.append("touch") }, to: object)

        detector.reportDidAppear(object)  // queued, blocked on the gate
        DispatchQueue.global().async { gate.signal() }
        XCTAssertTrue(detector.reportDidEndTouch(object, synchronously: true))
        XCTAssertEqual(fired.all, ["appear", "touch"])
    }

    func testAnActionMayReportSynchronouslyWithoutDeadlock() {
        let detector = TriggerDetector()
        let object = ScreenObject()
        let fired = Collected<String>()
        detector.attach(
            TriggeredEvent(.didAppear) { [weak object] _ in
                fired.append("appear")
                if let object { detector.reportDidEndTouch(object, synchronously: true) }
                detector.flush()
            }, to: object)
        detector.attach(TriggeredEvent(.didEndTouch) { _ in fired.append("touch") }, to: object)
        detector.reportDidAppear(object)
        detector.flush()
        XCTAssertEqual(fired.all, ["appear", "touch"])
    }

    func testDetachStopsOneEvent() {
        let detector = TriggerDetector()
        let object = ScreenObject()
        let fired = Collected<String>()
        let first = detector.attach(TriggeredEvent(.didAppear) { _ in fired.append("first") }, to: object)
        detector.attach(TriggeredEvent(.didAppear) { _ in fired.append("second") }, to: object)
        XCTAssertTrue(detector.detach(first, from: object))
        XCTAssertFalse(detector.detach(first, from: object))
        detector.reportDidAppear(object, synchronously: true)
        detector.detachAll(from: object)
        XCTAssertFalse(detector.reportDidAppear(object))
        XCTAssertEqual(fired.all, ["second"])
    }
}
