import DemoFeed
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// Registering catalogs: merged declarations, personal-data marks, and what happens to odd input.
final class RegisteredCatalogsTests: XCTestCase {
    private let checkout = EventCatalog(
        module: "Checkout",
        events: [
            EventSpec(
                name: "checkout/paid", type: .click,
                args: [
                    ArgSpec(name: "cart_id", type: .string, isRequired: true, isPersonalData: false),
                    ArgSpec(name: "email", type: .string, isRequired: true, isPersonalData: true),
                ])
        ])

    func testPersonalDataArgsAreListedPerEvent() {
        let registered = RegisteredCatalogs([checkout, DemoFeedEvents.catalog])
        XCTAssertEqual(registered.personalDataArgs, ["checkout/paid": ["email"]])
        XCTAssertEqual(registered.spec(for: "feed/item_tapped")?.args.map(\.name), ["item_id", "position"])
        XCTAssertNil(registered.spec(for: "feed/unknown"))
        XCTAssertEqual(registered.problems, [])
    }

    func testTheSameCatalogRegisteredTwiceCountsOnceAndIsReported() {
        let registered = RegisteredCatalogs([checkout, DemoFeedEvents.catalog, checkout])
        XCTAssertEqual(registered.catalogs.map(\.module), ["Checkout", "DemoFeed"])
        XCTAssertEqual(registered.problems, [.registeredTwice(module: "Checkout")])
        XCTAssertEqual(
            registered.problems.first?.description,
            "catalog Checkout is registered twice; the second registration is ignored")
    }

    func testTwoDifferentCatalogsOfOneModuleAreBothUsedAndReported() {
        var other = checkout
        other.events[0].name = "checkout/refunded"
        let registered = RegisteredCatalogs([checkout, other])
        XCTAssertEqual(registered.problems, [.moduleRegisteredTwice(module: "Checkout")])
        XCTAssertEqual(registered.personalDataArgs, ["checkout/paid": ["email"], "checkout/refunded": ["email"]])
    }

    func testConflictingPersonalDataMarksAreResolvedAsPersonalAndReported() {
        var legacy = checkout
        legacy.module = "LegacyCheckout"
        legacy.events[0].args[1].isPersonalData = false
        let registered = RegisteredCatalogs([legacy, checkout])
        XCTAssertEqual(registered.personalDataArgs, ["checkout/paid": ["email"]])
        XCTAssertEqual(
            registered.problems,
            [
                .conflictingPersonalDataMarks(
                    event: "checkout/paid", arg: "email", markedIn: ["Checkout"], unmarkedIn: ["LegacyCheckout"])
            ])
        XCTAssertEqual(
            registered.problems.first?.description,
            #"checkout/paid: arg "email" is marked "pii" in Checkout but not in LegacyCheckout; it is treated as personal data and hashed for every tracker"#
        )
    }

    func testPersonalDataOfAnotherTypeIsHashedAllTheSameAndReported() {
        let profile = EventCatalog(
            module: "Profile",
            events: [
                EventSpec(
                    name: "profile/saved", type: .userAction,
                    args: [ArgSpec(name: "birth_year", type: .int, isRequired: true, isPersonalData: true)])
            ])
        let registered = RegisteredCatalogs([profile])
        XCTAssertEqual(registered.personalDataArgs, ["profile/saved": ["birth_year"]])
        XCTAssertEqual(
            registered.problems.map(\.description),
            [
                #"Profile: profile/saved: arg "birth_year" is personal data of type int; it is hashed all the same and reaches trackers as a "sha256:…" string (declare it "type": "string")"#
            ])
        let recorder = RecordingTracker()
        var configuration = EventAggregator.Configuration.testing
        configuration.catalogs = [profile]
        configuration.personalDataSalt = "s"
        let center = NotificationCenter()
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [recorder], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("profile/saved", args: ["birth_year": 1984], to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(
            recorder.events.first?.args["birth_year"], .string(PersonalDataProcessor.hashed(.int(1984), salt: "s")))
    }

    func testTheAggregatorReportsAndCountsRegistrationProblems() {
        let problems = LockedValue<[String]>([])
        var configuration = EventAggregator.Configuration.testing
        configuration.catalogs = [checkout, checkout]
        configuration.problemHandler = { problem in problems.withLock { $0.append(problem.description) } }
        let aggregator = EventAggregator(center: NotificationCenter(), configuration: configuration)
        XCTAssertEqual(
            problems.withLock { $0 }, ["catalog Checkout is registered twice; the second registration is ignored"])
        XCTAssertEqual(aggregator.diagnostics.catalogProblems, 1)
        XCTAssertEqual(aggregator.registeredCatalogs.catalogs, [checkout])
    }
}
