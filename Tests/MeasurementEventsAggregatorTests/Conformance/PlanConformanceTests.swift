import DemoFeed
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// An aggregator given catalogs checks every event against them before the processors run:
/// each kind of violation is reported to the problem handler and counted, and the policy
/// decides whether the event is delivered as posted, without the arg, or not at all.
final class PlanConformanceTests: XCTestCase {
    static let catalog = EventCatalog(
        module: "Feed",
        events: [
            EventSpec(
                name: "feed/item_tapped", type: .click,
                args: [
                    ArgSpec(
                        name: "item_id", type: .string, isRequired: true, isPersonalData: false, pattern: "^[a-z0-9]+$",
                        maxLength: 8),
                    ArgSpec(
                        name: "position", type: .int, isRequired: true, isPersonalData: false, minimum: 0, maximum: 99),
                    ArgSpec(
                        name: "source", type: .string, isRequired: false, isPersonalData: false,
                        allowedValues: ["feed", "search"]),
                    ArgSpec(name: "email", type: .string, isRequired: false, isPersonalData: true, maxLength: 10),
                    ArgSpec(name: "ratio", type: .double, isRequired: false, isPersonalData: false),
                ]),
            EventSpec(
                name: "feed/old_tapped", type: .click, args: [], isDeprecated: true, replacement: "feed/item_tapped"),
        ])

    private final class Problems: @unchecked Sendable {
        // @unchecked: appended on the delivery queue, read after waitUntilDelivered().
        var violations: [PlanViolation] = []
    }

    /// Posts `args` as `name` to an aggregator with the catalog; returns what the trackers got,
    /// the violations the problem handler got, and the aggregator's diagnostics.
    private func deliver(
        _ name: EventName, _ args: [String: any EventValueConvertible],
        _ configure: (inout EventAggregator.Configuration) -> Void = { _ in }
    ) -> (events: [MeasurementEvent], violations: [PlanViolation], diagnostics: EventAggregator.Diagnostics) {
        let center = NotificationCenter()
        let recorder = RecordingTracker()
        let problems = Problems()
        var configuration = EventAggregator.Configuration.testing
        configuration.catalogs = [Self.catalog]
        configuration.personalDataSentInClear = ["feed/item_tapped": ["email"]]
        configuration.problemHandler = { problem in
            if case .planViolation(let violation) = problem { problems.violations.append(violation) }
        }
        configure(&configuration)
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [recorder], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post(name, args: args, to: center)
        aggregator.waitUntilDelivered()
        return (recorder.events, problems.violations, aggregator.diagnostics)
    }

    private func withoutSite(_ violation: PlanViolation) -> PlanViolation {
        var violation = violation
        violation.file = nil
        violation.line = nil
        return violation
    }

    private let valid: [String: any EventValueConvertible] = ["item_id": "a1", "position": 3]

    func testAConformingEventIsDeliveredWithNoReport() {
        let result = deliver("feed/item_tapped", valid.merging(["source": "feed", "ratio": 2]) { $1 })
        XCTAssertEqual(result.events.count, 1)
        XCTAssertEqual(result.violations, [])
        XCTAssertEqual(result.diagnostics.planViolations, [:])
    }

    func testEachKindOfViolationIsReportedWithTheRuleAndTheValuesType() {
        let cases: [(EventName, [String: any EventValueConvertible], PlanViolation)] = [
            (
                "feed/unknown", [:],
                PlanViolation(kind: .unplannedEvent, event: "feed/unknown", rule: "not in any registered catalog")
            ),
            (
                "feed/item_tapped", ["item_id": "a1"],
                PlanViolation(
                    kind: .missingArg, event: "feed/item_tapped", arg: "position", rule: "required by the plan")
            ),
            (
                "feed/item_tapped", valid.merging(["coupon": "X"]) { $1 },
                PlanViolation(
                    kind: .unplannedArg, event: "feed/item_tapped", arg: "coupon", rule: "not in the plan",
                    valueType: "string")
            ),
            (
                "feed/item_tapped", ["item_id": "a1", "position": "3"],
                PlanViolation(
                    kind: .wrongType, event: "feed/item_tapped", arg: "position", rule: "the plan says int",
                    valueType: "string", value: "3")
            ),
            (
                "feed/item_tapped", valid.merging(["source": "home"]) { $1 },
                PlanViolation(
                    kind: .valueNotAllowed, event: "feed/item_tapped", arg: "source",
                    rule: #"the plan allows "feed", "search""#, valueType: "string", value: "home")
            ),
            (
                "feed/item_tapped", ["item_id": "a1", "position": 120],
                PlanViolation(
                    kind: .outOfRange, event: "feed/item_tapped", arg: "position", rule: "the plan's maximum is 99",
                    valueType: "int", value: "120")
            ),
            (
                "feed/item_tapped", ["item_id": "A-1", "position": 1],
                PlanViolation(
                    kind: .patternMismatch, event: "feed/item_tapped", arg: "item_id",
                    rule: "the plan's pattern is ^[a-z0-9]+$", valueType: "string", value: "A-1")
            ),
            (
                "feed/item_tapped", ["item_id": "abcdefghij", "position": 1],
                PlanViolation(
                    kind: .tooLong, event: "feed/item_tapped", arg: "item_id", rule: "the plan's maxLength is 8",
                    valueType: "string", value: "abcdefghij")
            ),
            (
                "feed/old_tapped", [:],
                PlanViolation(
                    kind: .deprecatedEvent, event: "feed/old_tapped",
                    rule: "the plan deprecates this event; post feed/item_tapped instead")
            ),
        ]
        XCTAssertEqual(Set(cases.map(\.2.kind)), Set(PlanViolation.Kind.allCases), "every kind is covered")
        for (name, args, expected) in cases {
            let result = deliver(name, args)
            // The file and line are those of `deliver`'s post (PlanViolationSiteTests checks them).
            XCTAssertEqual(
                result.violations.map(\.file), ["MeasurementEventsAggregatorTests/PlanConformanceTests.swift"])
            XCTAssertEqual(result.violations.map(withoutSite), [expected], "\(expected.kind)")
            XCTAssertEqual(result.diagnostics.planViolations, [expected.kind: 1])
            XCTAssertEqual(result.events.count, 1, "reported, not blocked, by default")
        }
    }

    func testAPersonalDataValueIsNeverInTheReport() {
        let result = deliver("feed/item_tapped", valid.merging(["email": "jane.doe@example.com"]) { $1 })
        XCTAssertEqual(result.violations.map(\.kind), [.tooLong])
        XCTAssertNil(result.violations.first?.value)
        XCTAssertEqual(result.violations.first?.valueType, "string")
        XCTAssertFalse(result.violations.description.contains("jane"))
        XCTAssertTrue(result.violations[0].description.contains("personal data, not shown"))
    }

    func testAPersonalIntIsAnInt() {
        let result = deliver("feed/item_tapped", valid.merging(["email": 42]) { $1 })
        XCTAssertEqual(result.violations.map(\.kind), [.wrongType])
        XCTAssertTrue(
            result.violations[0].description.contains(#"arg "email" is an int (personal data, not shown)"#),
            result.violations[0].description)
    }

    func testTheBlockPolicyKeepsTheEventFromTrackersAndCountsIt() {
        let result = deliver("feed/unknown", [:]) { $0.planConformance.actions[.unplannedEvent] = .block }
        XCTAssertEqual(result.events, [])
        XCTAssertEqual(result.violations.map(\.action), [.block])
        XCTAssertEqual(result.diagnostics.blockedByPlan, 1)
        XCTAssertEqual(result.diagnostics.forwarded, 0)
    }

    func testTheOmitArgPolicyDeliversTheEventWithoutTheArg() {
        let result = deliver("feed/item_tapped", valid.merging(["coupon": "X"]) { $1 }) {
            $0.planConformance.actions[.unplannedArg] = .omitArg
        }
        XCTAssertEqual(result.events.first?.args, ["item_id": "a1", "position": 3])
        XCTAssertEqual(result.violations.map(\.action), [.omitArg])
    }

    func testOmitArgOnAKindWithoutAnArgReports() {
        let result = deliver("feed/unknown", [:]) { $0.planConformance.actions[.unplannedEvent] = .omitArg }
        XCTAssertEqual(result.events.count, 1)
        XCTAssertEqual(result.violations.map(\.action), [.report])
    }

    func testViolationEventsGoToTrackersWhenAsked() {
        let result = deliver("feed/item_tapped", ["item_id": "a1", "position": "3"]) {
            $0.planConformance.forwardsViolationEvents = true
        }
        XCTAssertEqual(result.events.map(\.name), ["feed/item_tapped", "plan/violation"])
        var args = result.events.last?.args
        XCTAssertEqual(args?.removeValue(forKey: "file"), "MeasurementEventsAggregatorTests/PlanConformanceTests.swift")
        XCTAssertNotNil(args?.removeValue(forKey: "line")?.intValue)
        XCTAssertEqual(
            args,
            [
                "violated_event": "feed/item_tapped", "kind": "wrongType", "rule": "the plan says int",
                "action": "report", "arg": "position", "value_type": "string",
            ])
    }

    func testWithoutCatalogsOrWithCheckingOffNothingIsChecked() {
        XCTAssertEqual(deliver("feed/unknown", [:]) { $0.catalogs = [] }.violations, [])
        XCTAssertEqual(deliver("feed/unknown", [:]) { $0.planConformance.isEnabled = false }.violations, [])
    }

    func testViolationsAreCheckedBeforeTheProcessorsRun() {
        // A processor that renames every event would hide an unplanned name if it ran first.
        struct Renaming: EventProcessor {
            func process(_ event: MeasurementEvent) -> MeasurementEvent? {
                var event = event
                event.name = "feed/old_tapped"
                return event
            }
        }
        let center = NotificationCenter()
        let problems = Problems()
        var configuration = EventAggregator.Configuration.testing
        configuration.catalogs = [Self.catalog]
        configuration.problemHandler = { problem in
            if case .planViolation(let violation) = problem { problems.violations.append(violation) }
        }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, processors: [Renaming()], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("feed/unknown", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(problems.violations.map(\.kind), [.unplannedEvent])
    }
}

/// A violation names the file and line that posted the event, through `MeasurementEvent.post`
/// and the generated helpers; the site is never an arg of the event.
final class PlanViolationSiteTests: XCTestCase {
    private final class Problems: @unchecked Sendable {
        // @unchecked: appended on the delivery queue, read after waitUntilDelivered().
        var violations: [PlanViolation] = []
    }

    private func checkingAggregator(
        on center: NotificationCenter, _ recorder: RecordingTracker, _ problems: Problems
    ) -> EventAggregator {
        var configuration = EventAggregator.Configuration.testing
        configuration.catalogs = [PlanConformanceTests.catalog]
        configuration.problemHandler = { problem in
            if case .planViolation(let violation) = problem { problems.violations.append(violation) }
        }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [recorder], configuration: configuration)
        aggregator.start()
        return aggregator
    }

    func testAViolationNamesTheFileAndLineOfMeasurementEventPost() {
        let center = NotificationCenter()
        let recorder = RecordingTracker()
        let problems = Problems()
        let aggregator = checkingAggregator(on: center, recorder, problems)
        let line = #line + 1
        MeasurementEvent.post("feed/item_tapped", args: ["item_id": "a1", "position": "3"], to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(problems.violations.first?.file, "MeasurementEventsAggregatorTests/PlanConformanceTests.swift")
        XCTAssertEqual(problems.violations.first?.line, line)
        XCTAssertTrue(
            problems.violations.first?.description.hasPrefix(
                "MeasurementEventsAggregatorTests/PlanConformanceTests.swift:\(line): ")
                ?? false)
        XCTAssertEqual(recorder.events.first?.args, ["item_id": "a1", "position": "3"], "the site is not an arg")
    }

    func testAViolationNamesTheFileAndLineOfAGeneratedHelper() {
        let center = NotificationCenter()
        let recorder = RecordingTracker()
        let problems = Problems()
        let aggregator = checkingAggregator(on: center, recorder, problems)
        let line = #line + 1
        DemoFeedEvents.postFeedOpened(source: "tab", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(problems.violations.map(\.kind), [.unplannedEvent])
        XCTAssertEqual(problems.violations.first?.file, "MeasurementEventsAggregatorTests/PlanConformanceTests.swift")
        XCTAssertEqual(problems.violations.first?.line, line)
    }

    func testObserversWithoutAPlanNeverSeeTheSite() {
        let center = NotificationCenter()
        let problems = Problems()
        let checking = checkingAggregator(on: center, RecordingTracker(), problems)
        let plain = RecordingTracker()
        let unchecked = EventAggregator(center: center, filter: .allowAll, trackers: [plain], configuration: .testing)
        unchecked.start()
        let recorder = EventRecorder(center: center)
        MeasurementEvent.post("feed/item_tapped", args: ["item_id": "a1", "position": 3], to: center)
        checking.waitUntilDelivered()
        unchecked.waitUntilDelivered()
        XCTAssertEqual(plain.events.first?.args, ["item_id": "a1", "position": 3])
        XCTAssertEqual(recorder.events.first?.args, ["item_id": "a1", "position": 3])
    }

    /// The README's pattern: an `XCTestExpectation` handler compares the posted args exactly. A
    /// plan with post sites checked on the same center changes nothing it sees, and the violation
    /// still names the line.
    func testAnExpectationHandlerSeesExactlyThePostedArgsWhileAPlanWithPostSitesIsChecked() {
        let center = NotificationCenter()
        let problems = Problems()
        let aggregator = checkingAggregator(on: center, RecordingTracker(), problems)
        let seen = LockedValue<(keys: [String], decoded: EventArgs?)>(([], nil))
        let posted = expectation(forNotification: .measurementEvent, object: nil, notificationCenter: center) {
            note in
            let args = note.userInfo?[MeasurementEvent.UserInfoKey.args] as? [String: Any]
            let decoded = try? MeasurementEvent(notification: note).args
            seen.withLock { $0 = (args?.keys.sorted() ?? [], decoded) }
            return true
        }
        let line = #line + 1
        MeasurementEvent.post("feed/item_tapped", args: ["item_id": "a1", "position": "3"], to: center)
        wait(for: [posted], timeout: 10)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(seen.withLock { $0.keys }, ["item_id", "position"], "the post site is not an arg")
        XCTAssertEqual(seen.withLock { $0.decoded }, ["item_id": "a1", "position": "3"])
        XCTAssertEqual(problems.violations.map(\.kind), [.wrongType])
        XCTAssertEqual(problems.violations.first?.line, line)
    }

    func testWithoutAPlanNothingIsCarried() {
        let center = NotificationCenter()
        let keys = LockedValue<[String]>([])
        let observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { note in
            let args = note.userInfo?["args"] as? [String: Any]
            keys.withLock { $0 = args?.keys.sorted() ?? [] }
        }
        defer { center.removeObserver(observer) }
        MeasurementEvent.post("feed/item_tapped", args: ["item_id": "a1"], to: center)
        XCTAssertEqual(keys.withLock { $0 }, ["item_id"])
    }
}
