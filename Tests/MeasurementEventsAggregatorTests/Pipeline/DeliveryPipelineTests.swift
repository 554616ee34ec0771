import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// The delivery pipeline's order, seen from inside: a step inserted after each built-in step
/// (`Configuration.insert(_:after:)`, public) sees the event as that step left it, and the steps
/// come in the order the head of `EventAggregator+Delivery.swift` gives.
final class DeliveryPipelineTests: XCTestCase {
    private typealias Step = EventAggregator.BuiltInStep
    private let catalog = AccountCatalog.catalog

    /// What the inserted processors saw, in the order they saw it.
    private final class Seen: Sendable {
        let entries = LockedValue<[(Step, MeasurementEvent)]>([])

        func processor(after step: Step, discarding: Bool = false) -> any EventProcessor {
            ClosureProcessor { [entries] event in
                entries.withLock { $0.append((step, event)) }
                return discarding ? nil : event
            }
        }

        func event(after step: Step) -> MeasurementEvent? {
            entries.withLock { $0.first { $0.0 == step }?.1 }
        }
    }

    private func makeAggregator(
        trackers: [any EventTracker], processors: [any EventProcessor] = [],
        after: [Step: [any EventProcessor]], holdsUntilReady: Bool = false
    ) -> (EventAggregator, NotificationCenter) {
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration.testing
        configuration.holdsEventsUntilReady = holdsUntilReady
        configuration.catalogs = [catalog]
        configuration.personalDataSalt = "salt"
        configuration.planConformance.actions[.unplannedArg] = .omitArg
        configuration.problemHandler = nil
        for (step, processors) in after { configuration.insert(ProcessorsStep(processors), after: step) }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: trackers, processors: processors,
            configuration: configuration)
        aggregator.start()
        return (aggregator, center)
    }

    func testAProcessorAfterEachStepSeesTheEventAsThatStepLeftItInOrder() throws {
        let seen = Seen()
        let tracker = RecordingTracker()
        let appProcessor = ClosureProcessor { event in
            var event = event
            event.label = "labelled by the app"
            return event
        }
        var after: [Step: [any EventProcessor]] = [:]
        for step in Step.allCases { after[step] = [seen.processor(after: step)] }
        let (aggregator, center) = makeAggregator(trackers: [tracker], processors: [appProcessor], after: after)

        MeasurementEvent.post(
            "account/signed_up", args: ["email": "jane@example.com", "plan": "pro", "coupon": "SPRING"], to: center)
        aggregator.waitUntilDelivered()

        XCTAssertEqual(
            seen.entries.withLock { $0.map(\.0) }, [.attribution, .plan, .processors, .admission, .personalData])
        // 1. Attribution: stamped, nothing else changed yet.
        let stamped = try XCTUnwrap(seen.event(after: .attribution))
        XCTAssertNotNil(stamped.anonymousID)
        XCTAssertNotNil(stamped.sessionID)
        XCTAssertEqual(stamped.args["coupon"], "SPRING")
        // 2. The plan: the unplanned arg omitted, personal data still in clear.
        let checked = try XCTUnwrap(seen.event(after: .plan))
        XCTAssertNil(checked.args["coupon"])
        XCTAssertEqual(checked.args["email"], "jane@example.com")
        XCTAssertNil(checked.label)
        // 3. The app's processors.
        XCTAssertEqual(seen.event(after: .processors)?.label, "labelled by the app")
        XCTAssertEqual(seen.event(after: .processors)?.args["email"], "jane@example.com")
        // 5. Personal data: hashed, which is what the tracker gets.
        let hashed = PersonalDataProcessor.hashed("jane@example.com", salt: "salt")
        XCTAssertEqual(seen.event(after: .personalData)?.args["email"], .string(hashed))
        XCTAssertEqual(tracker.events.map(\.args), [["email": .string(hashed), "plan": "pro"]])
        XCTAssertEqual(tracker.events.first?.label, "labelled by the app")
    }

    func testAnInsertedProcessorThatDiscardsEndsTheEventThereAndIsCounted() {
        for step in Step.allCases {
            let seen = Seen()
            let tracker = RecordingTracker()
            var after: [Step: [any EventProcessor]] = [:]
            for other in Step.allCases {
                after[other] = [seen.processor(after: other, discarding: other == step)]
            }
            let (aggregator, center) = makeAggregator(trackers: [tracker], after: after)

            MeasurementEvent.post("account/signed_up", args: ["email": "jane@example.com", "plan": "pro"], to: center)
            aggregator.waitUntilDelivered()

            XCTAssertTrue(tracker.events.isEmpty, "discarded after \(step)")
            XCTAssertEqual(aggregator.diagnostics.discarded, 1, "discarded after \(step)")
            // Admitted (counted as forwarded) at the admission step.
            XCTAssertEqual(
                aggregator.diagnostics.forwarded, step == .personalData || step == .admission ? 1 : 0, "after \(step)")
            // No step after the one that discarded saw the event.
            let steps = Step.allCases
            XCTAssertEqual(
                seen.entries.withLock { $0.map(\.0) }, Array(steps[...steps.firstIndex(of: step)!]),
                "discarded after \(step)")
        }
    }

    func testWithoutInsertedProcessorsTheWholeBatchTakesTheFastPathAndArrivesInOrder() {
        let tracker = RecordingTracker()
        let (aggregator, center) = makeAggregator(trackers: [tracker], after: [:])
        for index in 0..<50 {
            MeasurementEvent.post(
                "account/signed_up", args: ["email": "user\(index)@example.com", "plan": "p\(index)"], to: center)
        }
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.map { $0.args["plan"] }, (0..<50).map { .string("p\($0)") })
        XCTAssertEqual(aggregator.diagnostics.forwarded, 50)
    }

    /// Events held until the trackers are ready joined the pipeline after the admission when
    /// released: hashed then, seen by what comes after personal data, in posting order.
    func testHeldEventsGoThroughTheStepsAfterTheAdmissionWhenReleased() {
        let seen = Seen()
        let tracker = RecordingTracker()
        var after: [Step: [any EventProcessor]] = [:]
        for step in Step.allCases { after[step] = [seen.processor(after: step)] }
        let (aggregator, center) = makeAggregator(trackers: [tracker], after: after, holdsUntilReady: true)

        for index in 0..<3 {
            MeasurementEvent.post(
                "account/signed_up", args: ["email": "user\(index)@example.com", "plan": "p\(index)"], to: center)
        }
        aggregator.waitUntilDelivered()
        XCTAssertTrue(tracker.events.isEmpty)
        XCTAssertEqual(aggregator.diagnostics.held, 3)
        XCTAssertEqual(seen.entries.withLock { $0.filter { $0.0 == .personalData }.count }, 0, "held before step 5")

        aggregator.markReady()
        aggregator.waitUntilDelivered()
        let hashed = (0..<3).map {
            EventValue.string(PersonalDataProcessor.hashed(.string("user\($0)@example.com"), salt: "salt"))
        }
        XCTAssertEqual(tracker.events.map { $0.args["email"] }, hashed)
        XCTAssertEqual(tracker.events.map { $0.args["plan"] }, ["p0", "p1", "p2"])
        XCTAssertEqual(
            seen.entries.withLock { $0.filter { $0.0 == .personalData }.map { $0.1.args["email"] } }, hashed)
        XCTAssertEqual(aggregator.diagnostics.forwarded, 3)
    }

    /// Step 5 keeps each event as it was for the trackers that take personal data in clear;
    /// every other tracker, and what comes after the step, gets it hashed.
    func testATrackerInClearGetsTheEventBeforeHashingAndTheOthersAfter() {
        let seen = Seen()
        let hashedTracker = RecordingTracker()
        let clearTracker = RecordingTracker()
        let (aggregator, center) = makeAggregator(
            trackers: [hashedTracker, clearTracker.receivingPersonalDataInClear()],
            after: [.personalData: [seen.processor(after: .personalData)]])

        MeasurementEvent.post("account/signed_up", args: ["email": "jane@example.com", "plan": "pro"], to: center)
        MeasurementEvent.post("account/signed_up", args: ["plan": "free"], to: center)
        aggregator.waitUntilDelivered()

        let hashed = EventValue.string(PersonalDataProcessor.hashed("jane@example.com", salt: "salt"))
        XCTAssertEqual(hashedTracker.events.map { $0.args["email"] }, [hashed, nil])
        XCTAssertEqual(clearTracker.events.map { $0.args["email"] }, ["jane@example.com", nil])
        XCTAssertEqual(clearTracker.events.map { $0.args["plan"] }, ["pro", "free"])
        XCTAssertEqual(seen.entries.withLock { $0.map { $0.1.args["email"] } }, [hashed, nil])
    }

    /// A step of the app's own (not processors) before and after every built-in step: the steps
    /// run in the documented order, each app step sees the event as the step before it left it,
    /// and the one before the admission sees no id yet only if no processors gave it one.
    func testAStepOfTheAppsBetweenEveryTwoBuiltInStepsSeesTheEventAsEachLeftIt() throws {
        struct Looking: DeliveryStep {
            let label: String
            let seen: LockedValue<[(String, MeasurementEvent)]>
            func run(_ batch: inout DeliveryBatch, for aggregator: EventAggregator) {
                for event in batch.events { seen.withLock { $0.append((label, event)) } }
            }
        }
        let seen = LockedValue<[(String, MeasurementEvent)]>([])
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration.testing
        configuration.catalogs = [catalog]
        configuration.personalDataSalt = "salt"
        configuration.planConformance.actions[.unplannedArg] = .omitArg
        configuration.problemHandler = nil
        for step in Step.allCases {
            configuration.insert(Looking(label: "before \(step)", seen: seen), before: step)
            configuration.insert(Looking(label: "after \(step)", seen: seen), after: step)
        }
        let labeller = ClosureProcessor { event in
            var event = event
            event.label = "labelled"
            return event
        }
        let tracker = RecordingTracker()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], processors: [labeller], configuration: configuration
        )
        aggregator.start()
        MeasurementEvent.post(
            "account/signed_up", args: ["email": "jane@example.com", "plan": "pro", "coupon": "SPRING"], to: center)
        aggregator.waitUntilDelivered()

        let entries = seen.withLock { $0 }
        XCTAssertEqual(entries.map(\.0), Step.allCases.flatMap { ["before \($0)", "after \($0)"] })
        func event(_ label: String) throws -> MeasurementEvent { try XCTUnwrap(entries.first { $0.0 == label }?.1) }
        XCTAssertNil(try event("before attribution").anonymousID, "not stamped yet")
        XCTAssertNotNil(try event("after attribution").anonymousID)
        XCTAssertEqual(try event("before plan").args["coupon"], "SPRING")
        XCTAssertNil(try event("after plan").args["coupon"], "the unplanned arg omitted")
        XCTAssertNil(try event("before processors").label)
        XCTAssertEqual(try event("after processors").label, "labelled")
        XCTAssertEqual(try event("before admission").args["email"], "jane@example.com")
        XCTAssertEqual(try event("after admission").args["email"], "jane@example.com", "in clear until step 5")
        let hashed = EventValue.string(PersonalDataProcessor.hashed("jane@example.com", salt: "salt"))
        XCTAssertEqual(try event("after personalData").args["email"], hashed)
        XCTAssertEqual(tracker.events.first?.args["email"], hashed)
    }
}
