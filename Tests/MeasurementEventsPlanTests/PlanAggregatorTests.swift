import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsPlan
import MeasurementEventsTesting
import XCTest

final class PlanAggregatorTests: XCTestCase {
    private struct Setup {
        let center = NotificationCenter()
        let amplitude = RecordingTracker()
        let console = RecordingTracker()
        let aggregator: EventAggregator

        init(_ json: String = examplePlanJSON) throws {
            aggregator = try EventAggregator(
                plan: try plan(json, catalog: exampleCatalog),
                destinations: ["amplitude": amplitude, "console": console],
                center: center, configuration: .deliveredSynchronously)
            aggregator.start()
        }

        /// What a visit to the demo app's feature modules posts, plus screen reports.
        /// Returns whether each of the two screen reports posted.
        @discardableResult
        func postEverything() -> [Bool] {
            MeasurementEvent.post("feed/opened", type: .activity, to: center)
            MeasurementEvent.post("feed/debug/layout_pass", to: center)
            MeasurementEvent.post("feed/item_tapped", type: .click, args: ["item_id": "42"], to: center)
            MeasurementEvent.post("settings/opened", to: center)
            MeasurementEvent.post("settings/theme_changed", to: center)
            MeasurementEvent.post("app/permission/photo_library/granted", to: center)
            return [
                aggregator.reportScreenAppeared("FeedViewController"),
                aggregator.reportScreenAppeared("DebugMenuViewController"),
            ]
        }
    }

    private func labelled(_ tracker: RecordingTracker) -> [String] {
        tracker.events.map { "\($0.name) \($0.label ?? "-")" }
    }

    func testForwardsExactlyWhatThePlanAllowsWithLabelsToItsDestinations() throws {
        let setup = try Setup()
        XCTAssertEqual(setup.postEverything(), [true, false])
        setup.aggregator.flush()

        XCTAssertEqual(
            labelled(setup.amplitude),
            [
                "feed/opened Feed",
                "feed/item_tapped Feed item tapped",
                "settings/opened -",
                "screen/viewed Feed",
            ])
        XCTAssertEqual(
            labelled(setup.console),
            [
                "feed/opened Feed",
                "settings/opened -",
                "app/permission/photo_library/granted Permission",
                "screen/viewed Feed",
            ])
        XCTAssertEqual(setup.amplitude.events.last?.args, ["screen": "FeedViewController", "label": "Feed"])
        let counters = setup.aggregator.diagnostics
        XCTAssertEqual(counters.forwarded, 5)
        XCTAssertEqual(counters.filteredOut, 2)
        XCTAssertEqual(counters.filteredOutNames, ["feed/debug/layout_pass": 1, "settings/theme_changed": 1])
    }

    func testScreenViewsOfUnplannedScreensPostedDirectlyAreDiscarded() throws {
        let setup = try Setup()
        MeasurementEvent.post(
            TrackingPlan.screenViewEvent, args: ["screen": "DebugMenu", "label": "Debug"], to: setup.center)
        MeasurementEvent.post(TrackingPlan.screenViewEvent, to: setup.center)
        setup.aggregator.flush()
        XCTAssertEqual(setup.amplitude.events, [])
        XCTAssertEqual(setup.aggregator.diagnostics.discarded, 2)
    }

    func testAPlanWithoutScreensPostsNoScreenViews() throws {
        let setup = try Setup(#"{"version": 1, "destinations": ["amplitude", "console"], "allow": ["*"]}"#)
        XCTAssertFalse(setup.aggregator.reportScreenAppeared("FeedViewController"))
        setup.aggregator.flush()
        XCTAssertEqual(setup.amplitude.events, [])
    }

    func testASubclassIsBuiltFromThePlan() throws {
        final class AppAggregator: EventAggregator, @unchecked Sendable {
            // @unchecked: adds no stored state.
        }
        let console = RecordingTracker()
        let center = NotificationCenter()
        let aggregator = try AppAggregator(
            plan: try plan(#"{"version": 1, "events": {"feed/*": {"label": "Feed"}}}"#),
            destinations: ["console": console], center: center, configuration: .deliveredSynchronously)
        aggregator.start()
        MeasurementEvent.post("feed/opened", to: center)
        MeasurementEvent.post("settings/opened", to: center)
        XCTAssertEqual(labelled(console), ["feed/opened Feed"])
        XCTAssertEqual(aggregator.trackingPlan?.events.count, 1)
    }

    /// A tracker behind a destination hears consent like any other: an `HTTPTracker` there
    /// sends nothing until it hears `.granted`.
    func testDestinationsPassOnConsent() throws {
        let setup = try Setup()
        setup.aggregator.setConsent(.granted)
        setup.aggregator.setConsent(.denied)
        for tracker in [setup.amplitude, setup.console] {
            XCTAssertEqual(tracker.consentChanges.suffix(2), [.granted, .denied])
        }
    }

    func testTrackersMustMatchTheDeclaredDestinations() throws {
        let examplePlan = try plan(examplePlanJSON)
        XCTAssertThrowsError(
            try EventAggregator(
                plan: examplePlan, destinations: ["amplitude": RecordingTracker(), "firebase": RecordingTracker()],
                configuration: .testing)
        ) { error in
            XCTAssertEqual(
                (error as? TrackingPlanError)?.problems.map(\.description),
                [
                    #"plan.json: $.destinations: found no tracker for the declared destination "console", expected one in the aggregator's destinations"#,
                    #"plan.json: $.destinations: found a tracker for "firebase", which the plan does not declare, expected one of "amplitude", "console""#,
                ])
        }
        XCTAssertThrowsError(try EventAggregator(plan: examplePlan, destinations: [:], configuration: .testing)) {
            error in
            XCTAssertEqual(
                (error as? TrackingPlanError)?.problems.map(\.description),
                [
                    "plan.json: $.destinations: found no destination trackers, expected at least one"
                ])
        }
    }

    func testApplyingANewPlanSwapsFilterLabelsAndRoutesTogether() throws {
        let setup = try Setup()
        try setup.aggregator.applyPlan(
            try plan(
                """
                {"version": 1, "destinations": ["amplitude", "console"],
                 "events": {"settings/*": {"label": "Settings", "destinations": ["console"]}}}
                """))
        XCTAssertEqual(setup.postEverything(), [false, false])
        XCTAssertEqual(labelled(setup.amplitude), [])
        XCTAssertEqual(labelled(setup.console), ["settings/opened Settings", "settings/theme_changed Settings"])
    }

    /// An event is labelled (by a processor) and then routed (by the destination trackers):
    /// a plan applied in between must not label it by the old plan and route it by the new.
    func testAPlanAppliedDuringADeliveryWaitsForItToEnd() throws {
        let inProcessor = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let applied = DispatchSemaphore(value: 0)
        let amplitude = RecordingTracker()
        let console = RecordingTracker()
        let center = NotificationCenter()
        let aggregator = try EventAggregator(
            plan: try plan(
                """
                {"version": 1, "destinations": ["amplitude", "console"],
                 "events": {"feed/opened": {"label": "Old", "destinations": ["amplitude"]}}}
                """),
            destinations: ["amplitude": amplitude, "console": console], center: center,
            processors: [
                ClosureProcessor { event in
                    inProcessor.signal()
                    release.wait()
                    return event
                }
            ], configuration: .testing)
        aggregator.start()
        MeasurementEvent.post("feed/opened", to: center)
        inProcessor.wait()
        let newPlan = try plan(
            """
            {"version": 1, "destinations": ["amplitude", "console"],
             "events": {"feed/opened": {"label": "New", "destinations": ["console"]}}}
            """)
        Thread.detachNewThread {
            try? aggregator.applyPlan(newPlan)
            applied.signal()
        }
        // applyPlan must wait for the delivery in progress.
        XCTAssertEqual(applied.wait(timeout: .now() + 0.3), .timedOut)
        release.signal()
        XCTAssertEqual(applied.wait(timeout: .now() + 10), .success)
        MeasurementEvent.post("feed/opened", to: center)
        inProcessor.wait()
        release.signal()
        aggregator.waitUntilDelivered()
        XCTAssertEqual(labelled(amplitude), ["feed/opened Old"])
        XCTAssertEqual(labelled(console), ["feed/opened New"])
    }

    /// The malformed plans of ``MalformedTrackingPlanTests``, as a running aggregator would
    /// meet them on a reload: each is rejected and the aggregator keeps its whole old plan.
    func testARejectedPlanLeavesTheRunningConfigurationUntouched() throws {
        let malformed = [
            "{\"version\": 1,\n \"screens\": {\"Feed\": \"Feed\",}}",
            #"{"version": 1, "destinations": ["amplitude", "console"], "screens": {"X": ""}, "allow": ["*"]}"#,
            #"{"version": 1, "destinations": ["amplitude", "console"], "events": {"*": {"label": "All"}}, "colour": 1}"#,
            #"{"version": 1, "destinations": ["amplitude", "console"], "allow": ["*", "*"]}"#,
            #"{"version": 1, "destinations": ["amplitude", "console"], "events": {"*": {"label": "A", "destinations": ["x"]}}}"#,
            #"{"version": 1, "destinations": ["amplitude", "console"], "events": {"feed/nope": {"label": "N"}}}"#,
        ]
        let setup = try Setup()
        let before = setup.aggregator.trackingPlan
        for json in malformed {
            XCTAssertThrowsError(try setup.aggregator.applyPlan(try plan(json, catalog: exampleCatalog)), json)
        }
        // A valid file whose destinations do not match the trackers is refused as a whole too.
        XCTAssertThrowsError(
            try setup.aggregator.applyPlan(try plan(#"{"version": 1, "destinations": ["amplitude"], "allow": ["*"]}"#)))
        XCTAssertEqual(setup.aggregator.trackingPlan, before)

        XCTAssertEqual(setup.postEverything(), [true, false])
        XCTAssertEqual(
            labelled(setup.amplitude),
            [
                "feed/opened Feed", "feed/item_tapped Feed item tapped", "settings/opened -", "screen/viewed Feed",
            ])
        XCTAssertEqual(
            setup.console.names,
            [
                "feed/opened", "settings/opened", "app/permission/photo_library/granted", "screen/viewed",
            ])
    }

    func testApplyingAPlanToAnAggregatorNotBuiltFromOneFails() throws {
        let aggregator = EventAggregator(filter: .allowAll, configuration: .testing)
        XCTAssertThrowsError(try aggregator.applyPlan(TrackingPlan())) { error in
            XCTAssertEqual(
                (error as? TrackingPlanError)?.problems.map(\.description),
                [
                    "tracking plan: $: found an aggregator that was not built from a tracking plan, expected one made with init(plan:destinations:)"
                ])
        }
        XCTAssertEqual(aggregator.filter, .allowAll)
        XCTAssertFalse(aggregator.reportScreenAppeared("FeedViewController"))
    }

    func testADestinationFailureNamesTheDestinationAndSparesTheOthers() throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "vendor down" } }
        let problems = LockedValue<[String]>([])
        var configuration = EventAggregator.Configuration.deliveredSynchronously
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        let console = RecordingTracker()
        let center = NotificationCenter()
        let aggregator = try EventAggregator(
            plan: try plan(#"{"version": 1, "allow": ["*"]}"#),
            destinations: ["amplitude": ClosureTracker { _ in throw Broken() }, "console": console],
            center: center, configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("feed/opened", to: center)
        XCTAssertEqual(console.names, ["feed/opened"])
        XCTAssertEqual(
            problems.withLock { $0 },
            [
                #"tracker PlanDestinationTracker failed on feed/opened: destination "amplitude": vendor down"#
            ])
    }
}
