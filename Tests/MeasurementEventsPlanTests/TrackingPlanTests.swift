import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsPlan
import XCTest

final class TrackingPlanTests: XCTestCase {
    func testAValidPlanIsReadInFileOrder() throws {
        let plan = try plan(examplePlanJSON, catalog: exampleCatalog)
        XCTAssertEqual(plan.destinations, ["amplitude", "console"])
        XCTAssertEqual(
            plan.screens,
            [
                .init(name: "FeedViewController", label: "Feed"),
                .init(name: "SettingsViewController", label: "Settings"),
            ])
        XCTAssertEqual(
            plan.events,
            [
                .init(pattern: "feed/item_tapped", label: "Feed item tapped", destinations: ["amplitude"]),
                .init(pattern: "feed/*", label: "Feed"),
                .init(pattern: "app/permission/*", label: "Permission", destinations: ["console"]),
            ])
        XCTAssertEqual(plan.allow, ["settings/opened"])
        XCTAssertEqual(plan.deny, ["feed/debug/*"])
        XCTAssertEqual(plan.warnings, [])
        XCTAssertEqual(plan.source, "plan.json")
    }

    func testTheMostSpecificEventEntryWins() throws {
        let plan = try plan(
            """
            {"version": 1, "events": {
              "*": {"label": "Anything"}, "feed/*": {"label": "Feed"},
              "feed/item/*": {"label": "Item"}, "feed/item/tapped": {"label": "Tapped"}}}
            """)
        XCTAssertEqual(plan.trackedEvent(named: "feed/item/tapped")?.label, "Tapped")
        XCTAssertEqual(plan.trackedEvent(named: "feed/item/shared")?.label, "Item")
        XCTAssertEqual(plan.trackedEvent(named: "feed/opened")?.label, "Feed")
        XCTAssertEqual(plan.trackedEvent(named: "settings/opened")?.label, "Anything")
    }

    func testTheFilterAllowsEventsAllowListAndScreenViewsMinusDenyList() throws {
        let filter = try plan(examplePlanJSON).filter
        XCTAssertTrue(filter.allows("feed/opened"))
        XCTAssertTrue(filter.allows("app/permission/photo_library/granted"))
        XCTAssertTrue(filter.allows("settings/opened"))
        XCTAssertTrue(filter.allows(TrackingPlan.screenViewEvent))
        XCTAssertFalse(filter.allows("feed/debug/layout_pass"))
        XCTAssertFalse(filter.allows("settings/theme_changed"))
        XCTAssertFalse(
            try plan(#"{"version": 1, "allow": ["*"], "deny": ["screen/*"]}"#).filter.allows("screen/viewed"))
        XCTAssertFalse(try plan(#"{"version": 1}"#).filter.allows(TrackingPlan.screenViewEvent))
    }

    func testDestinationsDefaultToAllWhenAnEntryNamesNone() throws {
        let plan = try plan(examplePlanJSON)
        XCTAssertTrue(plan.sends("feed/item_tapped", to: "amplitude"))
        XCTAssertFalse(plan.sends("feed/item_tapped", to: "console"))
        XCTAssertTrue(plan.sends("feed/opened", to: "console"))
        XCTAssertTrue(plan.sends("settings/opened", to: "console"))
    }

    func testScreenViewsArePostedOnlyForPlannedScreens() throws {
        let plan = try plan(examplePlanJSON)
        let center = NotificationCenter()
        let posted = LockedValue<[MeasurementEvent]>([])
        let observer = center.addObserver(forName: .measurementEvent, object: nil, queue: nil) { note in
            if let event = try? MeasurementEvent(notification: note) { posted.withLock { $0.append(event) } }
        }
        defer { center.removeObserver(observer) }

        XCTAssertTrue(plan.reportScreenAppeared("FeedViewController", to: center))
        XCTAssertFalse(plan.reportScreenAppeared("DebugMenuViewController", to: center))

        let events = posted.withLock { $0 }
        XCTAssertEqual(events.map(\.name), ["screen/viewed"])
        XCTAssertEqual(events.first?.args, ["screen": "FeedViewController", "label": "Feed"])
        XCTAssertEqual(events.first?.type, .activity)
        XCTAssertEqual(plan.screenViewEvent(for: "SettingsViewController")?.label, "Settings")
        XCTAssertNil(plan.screenViewEvent(for: "Nope"))
    }

    func testKeysAreReadWithEscapesAndUnicode() throws {
        let plan = try plan(#"{"version": 1, "screens": {"Caf\u00e9 \"List\"": "Caf\u00e9 😀", "Tab\n": "T"}}"#)
        XCTAssertEqual(plan.label(forScreen: "Café \"List\""), "Café 😀")
        XCTAssertEqual(plan.label(forScreen: "Tab\n"), "T")
    }

    func testUndeclaredNamesAreWarningsInLenientMode() throws {
        let plan = try plan(
            """
            {"version": 1,
             "allow": ["feed/opend", "promo/*"]}
            """, catalog: exampleCatalog, strictness: .lenient)
        XCTAssertEqual(plan.allow, ["feed/opend", "promo/*"])
        XCTAssertEqual(
            plan.warnings.map(\.description),
            [
                #"plan.json:2:12: warning: $.allow[0]: found the event "feed/opend", which no module's catalog declares, expected an event declared in a catalog (Events/<Module>.json); did you mean "feed/opened"?"#,
                #"plan.json:2:26: warning: $.allow[1]: found the wildcard "promo/*", which matches no event a module's catalog declares, expected a wildcard that matches at least one declared event"#,
            ])
    }

    func testTheScreenViewEventNeedsNoCatalogEntry() throws {
        let plan = try plan(
            #"{"version": 1, "events": {"screen/viewed": {"label": "Screen"}}}"#, catalog: exampleCatalog)
        XCTAssertEqual(plan.events.count, 1)
    }

    func testAPlanIsReadFromAFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("plan-\(UUID().uuidString).json")
        try Data(examplePlanJSON.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        XCTAssertEqual(try TrackingPlan(contentsOf: url), try plan(examplePlanJSON))
        XCTAssertEqual(try TrackingPlan(contentsOf: url).source, url.lastPathComponent)
    }

    func testAMissingFileIsOneProblemWithoutPosition() {
        let url = URL(fileURLWithPath: "/nonexistent/plan.json")
        XCTAssertThrowsError(try TrackingPlan(contentsOf: url)) { error in
            let problems = (error as? TrackingPlanError)?.problems ?? []
            XCTAssertEqual(problems.count, 1)
            XCTAssertEqual(problems.first?.path, "$")
            XCTAssertNil(problems.first?.line)
            XCTAssertTrue(
                problems.first?.description.hasPrefix("/nonexistent/plan.json: $: cannot read the file") == true)
        }
    }

    func testTheDemoPlanFileIsValid() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/MeasurementDemo/tracking-plan.json")
        // screen/time_on_screen is posted by the demo's time-on-screen trigger recipe.
        let plan = try TrackingPlan(
            contentsOf: url, catalog: exampleCatalog.merging(.init(names: ["screen/time_on_screen"])))
        XCTAssertFalse(plan.screens.isEmpty)
        XCTAssertEqual(plan.warnings, [])
    }
}
