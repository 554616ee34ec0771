import Foundation
import MeasurementEvents
import XCTest

@testable import MeasurementEventsAggregator

/// What the context reports for each platform an app is compiled for and each way it runs: an
/// iPad app on a Mac is reported as the Mac it runs on.
final class RunningSystemTests: XCTestCase {
    private let sonoma = OperatingSystemVersion(majorVersion: 14, minorVersion: 2, patchVersion: 1)

    private func system(
        _ platform: CompiledPlatform, catalyst: Bool = false, iOSAppOnMac: Bool = false,
        version: OperatingSystemVersion? = nil
    ) -> RunningSystem {
        RunningSystem(
            platform: platform, isMacCatalystApp: catalyst, isiOSAppOnMac: iOSAppOnMac, version: version ?? sonoma)
    }

    func testAMacCatalystAppIsReportedAsMacOSWithTheMacsVersionAndModel() {
        let catalyst = system(.macCatalyst, catalyst: true)
        XCTAssertEqual(catalyst.osName, "macOS")
        XCTAssertEqual(catalyst.osVersion, "14.2.1")
        XCTAssertTrue(catalyst.runsOnMac)
    }

    func testAnIPhoneOrIPadAppOnAMacIsReportedAsMacOS() {
        // ProcessInfo says both: isMacCatalystApp is true for an iOS app on Apple silicon too.
        let designedForIPad = system(.iOS, catalyst: true, iOSAppOnMac: true)
        XCTAssertEqual(designedForIPad.osName, "macOS")
        XCTAssertTrue(designedForIPad.runsOnMac)
        // Either flag alone is enough.
        XCTAssertEqual(system(.iOS, iOSAppOnMac: true).osName, "macOS")
        XCTAssertEqual(system(.iOS, catalyst: true).osName, "macOS")
    }

    func testAnIPhoneAppOnAnIPhoneIsReportedAsIOSWithItsOwnModel() {
        let phone = system(.iOS, version: OperatingSystemVersion(majorVersion: 18, minorVersion: 1, patchVersion: 0))
        XCTAssertEqual(phone.osName, "iOS")
        XCTAssertEqual(phone.osVersion, "18.1")
        XCTAssertFalse(phone.runsOnMac)
    }

    func testEveryOtherPlatformIsReportedByItsName() {
        let expected: [CompiledPlatform: (String, Bool)] = [
            .macOS: ("macOS", true), .tvOS: ("tvOS", false), .watchOS: ("watchOS", false),
            .visionOS: ("visionOS", false), .linux: ("Linux", false), .android: ("Android", false),
            .windows: ("Windows", false), .other: ("unknown", false),
        ]
        for (platform, (name, onMac)) in expected {
            XCTAssertEqual(system(platform).osName, name, "\(platform)")
            XCTAssertEqual(system(platform).runsOnMac, onMac, "\(platform)")
        }
        // The flags only ever describe a Mac; elsewhere they change nothing.
        XCTAssertEqual(system(.visionOS, catalyst: true, iOSAppOnMac: true).osName, "visionOS")
        XCTAssertEqual(Set(expected.keys).union([.iOS, .macCatalyst]), Set(CompiledPlatform.allCases))
    }

    func testTheVersionLeavesOutAZeroPatch() {
        XCTAssertEqual(
            system(.macOS, version: OperatingSystemVersion(majorVersion: 15, minorVersion: 0, patchVersion: 0))
                .osVersion, "15.0")
        XCTAssertEqual(
            system(.macOS, version: OperatingSystemVersion(majorVersion: 26, minorVersion: 1, patchVersion: 2))
                .osVersion, "26.1.2")
    }

    func testThisBuildsPlatformIsTheOneItsContextReports() throws {
        #if os(Linux)
            XCTAssertEqual(CompiledPlatform.current, .linux)
            XCTAssertEqual(
                EventContext.runningSystem, system(.linux, version: ProcessInfo.processInfo.operatingSystemVersion))
        #elseif os(macOS)
            XCTAssertEqual(CompiledPlatform.current, .macOS)
            XCTAssertEqual(
                EventContext.runningSystem, system(.macOS, version: ProcessInfo.processInfo.operatingSystemVersion))
        #elseif os(iOS) && targetEnvironment(simulator)
            // The tests' iOS Simulator: an iOS app, not on a Mac as far as the app can tell.
            XCTAssertEqual(CompiledPlatform.current, .iOS)
            XCTAssertEqual(EventContext.runningSystem.osName, "iOS")
        #else
            throw XCTSkip("checks Linux, macOS and the iOS Simulator")
        #endif
    }
}
