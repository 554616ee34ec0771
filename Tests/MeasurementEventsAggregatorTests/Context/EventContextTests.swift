import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

final class EventContextTests: XCTestCase {
    func testTheAppComesFromTheBundleInfo() {
        let context = EventContext.current(
            bundleInfo: [
                "CFBundleDisplayName": "Shop", "CFBundleName": "ShopApp", "CFBundleShortVersionString": "2.4.1",
                "CFBundleVersion": "812", "CFBundleIdentifier": "com.example.shop",
            ],
            locale: Locale(identifier: "de_CH@calendar=gregorian"), timeZone: TimeZone(identifier: "Europe/Zurich")!)
        XCTAssertEqual(
            context.app, EventContext.App(name: "Shop", version: "2.4.1", build: "812", bundleID: "com.example.shop"))
        XCTAssertEqual(context.locale, "de-CH")
        XCTAssertEqual(context.timeZone, "Europe/Zurich")
        XCTAssertEqual(context.library, .measurementEvents)
        XCTAssertFalse(context.os.name.isEmpty)
        XCTAssertTrue(context.os.version.contains("."), context.os.version)
        #if os(Linux)
            XCTAssertEqual(context.os.name, "Linux")
            // The machine name `uname -m` prints, read whole up to its terminating zero.
            #if arch(x86_64)
                XCTAssertEqual(context.device.model, "x86_64")
            #elseif arch(arm64)
                XCTAssertEqual(context.device.model, "aarch64")
            #else
                XCTAssertNotNil(context.device.model)
            #endif
        #endif
    }

    func testMissingBundleInfoFallsBackToTheProcessName() {
        let context = EventContext.current(bundleInfo: nil)
        XCTAssertEqual(context.app.name, ProcessInfo.processInfo.processName)
        XCTAssertNil(context.app.version)
    }

    func testEveryForwardedEventCarriesTheConfiguredContext() {
        let center = NotificationCenter()
        let tracker = OrderedTracker()
        var configuration = EventAggregator.Configuration.testing
        configuration.context = {
            var context = EventContext.current(bundleInfo: ["CFBundleShortVersionString": "3.0"])
            context.extra["screen_width"] = 390
            return context
        }
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
        aggregator.start()
        MeasurementEvent.post("app/one", to: center)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.events.first?.context?.app.version, "3.0")
        XCTAssertEqual(tracker.events.first?.context?.extra["screen_width"], 390)
    }
}
