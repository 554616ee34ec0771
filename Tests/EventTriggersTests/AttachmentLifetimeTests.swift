import EventTriggers
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

final class AttachmentLifetimeTests: XCTestCase {
    func testAttachingDoesNotKeepTheObjectAlive() {
        let detector = TriggerDetector()
        weak var released: ScreenObject?
        do {
            let object = ScreenObject()
            released = object
            detector.attach(TriggeredEvent(.didAppear) { _ in }, to: object)
            XCTAssertEqual(detector.attachedObjectCount, 1)
        }
        XCTAssertNil(released)
        XCTAssertEqual(detector.attachedObjectCount, 0)
    }

    func testPruningReleasesTheActionsOfReleasedObjects() {
        let detector = TriggerDetector()
        weak var capturedByAction: ScreenObject?
        do {
            let object = ScreenObject()
            let captured = ScreenObject("captured")
            capturedByAction = captured
            detector.attach(TriggeredEvent(.didAppear) { _ in _ = captured.name }, to: object)
        }
        XCTAssertNotNil(capturedByAction, "the action is held until pruned")
        XCTAssertEqual(detector.registryEntryCount, 1)
        detector.prune()
        XCTAssertEqual(detector.registryEntryCount, 0)
        XCTAssertNil(capturedByAction)
    }

    func testTheRegistryPrunesItselfAsItGrows() {
        let detector = TriggerDetector()
        for _ in 0..<1_000 {
            detector.attach(TriggeredEvent(.didAppear) { _ in }, to: ScreenObject())
        }
        XCTAssertLessThan(detector.registryEntryCount, 128)
        XCTAssertEqual(detector.attachedObjectCount, 0)
    }

    func testNoActionFiresForANewObjectAtAReleasedObjectsAddress() {
        let detector = TriggerDetector()
        let fired = Collected<String>()
        var releasedID: ObjectIdentifier?
        weak var released: ScreenObject?
        do {
            let object = ScreenObject("old")
            released = object
            releasedID = ObjectIdentifier(object)
            detector.attach(TriggeredEvent(.didAppear) { _ in fired.append("old") }, to: object)
        }
        XCTAssertNil(released)
        // Allocate until the allocator hands the old address out again (it usually does at once).
        var keep: [ScreenObject] = []
        var reusedAddress = false
        for _ in 0..<10_000 {
            let candidate = ScreenObject("new")
            if ObjectIdentifier(candidate) == releasedID {
                reusedAddress = true
                XCTAssertFalse(detector.reportDidAppear(candidate))
                XCTAssertEqual(detector.events(attachedTo: candidate).count, 0)
                break
            }
            keep.append(candidate)
        }
        detector.flush()
        XCTAssertEqual(fired.all, [])
        if !reusedAddress { print("note: the released object's address was not reused; checked no firing only") }
    }

    func testAnActionQueuedBeforeReleaseStillRunsAndNothingAfter() {
        let detector = TriggerDetector()
        let fired = Collected<String>()
        let gate = DispatchSemaphore(value: 0)
        weak var released: ScreenObject?
        // The blocker is released at once.
        detector.attach(TriggeredEvent(.didEndTouch) { _ in gate.wait() }, to: ScreenObject("blocker"))
        do {
            let object = ScreenObject()
            released = object
            detector.attach(TriggeredEvent(.didAppear) { _ in fired.append("appeared") }, to: object)
            XCTAssertTrue(detector.reportDidAppear(object))
        }
        gate.signal()
        detector.flush()
        XCTAssertNil(released)
        XCTAssertEqual(fired.all, ["appeared"])
        detector.prune()
        XCTAssertEqual(detector.registryEntryCount, 0)
    }
}
