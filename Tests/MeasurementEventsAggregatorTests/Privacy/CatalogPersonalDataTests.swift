import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsTesting
import XCTest

/// An aggregator given catalogs hashes their personal-data args before any tracker sees them,
/// unless the code says otherwise, per tracker or per arg.
final class CatalogPersonalDataTests: XCTestCase {
    private let catalog = AccountCatalog.catalog

    private func deliver(
        _ args: EventArgs, as name: EventName = "account/signed_up", trackers: [any EventTracker],
        _ configure: (inout EventAggregator.Configuration) -> Void = { _ in }
    ) {
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration.testing
        configuration.catalogs = [catalog]
        configuration.personalDataSalt = "salt"
        configure(&configuration)
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: trackers, configuration: configuration)
        aggregator.start()
        MeasurementEvent.post(name, args: args.mapValues { $0 as any EventValueConvertible }, to: center)
        aggregator.waitUntilDelivered()
    }

    func testPersonalArgsOfARegisteredCatalogReachTrackersHashed() {
        let recorder = RecordingTracker()
        deliver(["email": "jane@example.com", "plan": "pro"], trackers: [recorder])
        XCTAssertEqual(
            recorder.events.first?.args,
            ["email": .string(PersonalDataProcessor.hashed("jane@example.com", salt: "salt")), "plan": "pro"])
    }

    func testAnArgIsPersonalOnlyInTheEventsWhoseCatalogMarksIt() {
        let recorder = RecordingTracker()
        deliver(["email": "jane@example.com"], as: "account/plan_changed", trackers: [recorder])
        XCTAssertEqual(recorder.events.first?.args["email"], "jane@example.com")
    }

    func testWithoutCatalogsNothingIsHashed() {
        let recorder = RecordingTracker()
        deliver(["email": "jane@example.com"], trackers: [recorder]) { $0.catalogs = [] }
        XCTAssertEqual(recorder.events.first?.args["email"], "jane@example.com")
    }

    func testATrackerReceivingPersonalDataInClearGetsItWhileTheOthersGetTheHash() {
        let clear = RecordingTracker()
        let hashed = RecordingTracker()
        deliver(
            ["email": "jane@example.com", "plan": "pro"], trackers: [clear.receivingPersonalDataInClear(), hashed])
        XCTAssertEqual(clear.events.first?.args["email"], "jane@example.com")
        XCTAssertEqual(
            hashed.events.first?.args["email"], .string(PersonalDataProcessor.hashed("jane@example.com", salt: "salt")))
    }

    func testAnArgSentInClearByConfigurationIsNotHashed() {
        let recorder = RecordingTracker()
        deliver(["email": "jane@example.com"], trackers: [recorder]) {
            $0.personalDataSentInClear = ["account/signed_up": ["email"]]
        }
        XCTAssertEqual(recorder.events.first?.args["email"], "jane@example.com")
    }

    func testWithoutASaltOfTheAppsOwnTheHashUsesARandomSaltNotAnEmptyOne() {
        let recorder = RecordingTracker()
        deliver(["email": "jane@example.com"], trackers: [recorder]) { $0.personalDataSalt = nil }
        let sent = recorder.events.first?.args["email"]?.stringValue
        XCTAssertEqual(sent?.hasPrefix("sha256:"), true)
        XCTAssertNotEqual(sent, PersonalDataProcessor.hashed("jane@example.com", salt: ""))
    }

    func testDidReceiveSeesTheHashedEvent() {
        final class Subclass: EventAggregator, @unchecked Sendable {
            // @unchecked: `seen` is only touched under its own lock.
            let seen = LockedValue<[MeasurementEvent]>([])
            override func didReceive(_ event: MeasurementEvent) { seen.withLock { $0.append(event) } }
        }
        let center = NotificationCenter()
        var configuration = EventAggregator.Configuration.testing
        configuration.catalogs = [catalog]
        let aggregator = Subclass(center: center, filter: .allowAll, configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("account/signed_up", args: ["email": "jane@example.com", "plan": "pro"], to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(aggregator.seen.withLock { $0 }.first?.args["email"]?.stringValue?.hasPrefix("sha256:"), true)
    }

    func testTheProcessorTakesTheGeneratedPerEventMapAndCatalogs() {
        let event = MeasurementEvent("account/signed_up", args: ["email": "jane@example.com", "plan": "pro"])
        let byMap = PersonalDataProcessor(personalArgsByEvent: ["account/signed_up": ["email"]])
        let byGeneratedMap = PersonalDataProcessor(
            personalArgs: ["account/signed_up": ["email"]] as [EventName: Set<String>])
        let byCatalogs = PersonalDataProcessor(catalogs: [catalog])
        XCTAssertEqual(byMap.process(event)?.args, ["plan": "pro"])
        XCTAssertEqual(byCatalogs.process(event)?.args, ["plan": "pro"])
        XCTAssertEqual(byGeneratedMap.process(event)?.args, ["plan": "pro"])
        XCTAssertEqual(byGeneratedMap.personalArgs, [])
    }
}
