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
    ) -> (osName: String, osVersion: String, runsOnMac: Bool) {
        RunningSystem.describe(
            platform: platform, isMacCatalystApp: catalyst, isiOSAppOnMac: iOSAppOnMac, version: version ?? sonoma)
    }

    /// Every platform, so that a case added to `CompiledPlatform` fails to compile here until its
    /// report is decided.
    static func everyPlatform() -> [CompiledPlatform] {
        let all: [CompiledPlatform] = [
            .iOS, .macCatalyst, .macOS, .tvOS, .watchOS, .visionOS, .linux, .android, .windows, .other,
        ]
        for platform in all {
            switch platform {
            case .iOS, .macCatalyst, .macOS, .tvOS, .watchOS, .visionOS, .linux, .android, .windows, .other: break
            }
        }
        return all
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
        XCTAssertEqual(designedForIPad.osVersion, "14.2.1")
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
        let expected: [(CompiledPlatform, String, Bool)] = [
            (.macOS, "macOS", true), (.tvOS, "tvOS", false), (.watchOS, "watchOS", false),
            (.visionOS, "visionOS", false), (.linux, "Linux", false), (.android, "Android", false),
            (.windows, "Windows", false), (.other, "unknown", false),
        ]
        for (platform, name, onMac) in expected {
            XCTAssertEqual(system(platform).osName, name, "\(platform)")
            XCTAssertEqual(system(platform).runsOnMac, onMac, "\(platform)")
        }
        // The flags only ever describe a Mac; elsewhere they change nothing.
        XCTAssertEqual(system(.visionOS, catalyst: true, iOSAppOnMac: true).osName, "visionOS")
        XCTAssertEqual(expected.count + 2, Self.everyPlatform().count)  // and .iOS, .macCatalyst above
    }

    func testTheVersionLeavesOutAZeroPatch() {
        let sequoia = OperatingSystemVersion(majorVersion: 15, minorVersion: 0, patchVersion: 0)
        XCTAssertEqual(system(.macOS, version: sequoia).osVersion, "15.0")
        let tahoe = OperatingSystemVersion(majorVersion: 26, minorVersion: 1, patchVersion: 2)
        XCTAssertEqual(system(.macOS, version: tahoe).osVersion, "26.1.2")
    }

    func testThisBuildsPlatformIsTheOneItsContextReports() throws {
        let version = ProcessInfo.processInfo.operatingSystemVersion
        let context = EventContext.current(bundleInfo: [:])
        #if os(Linux)
            XCTAssertEqual(CompiledPlatform.current, .linux)
            XCTAssertEqual(context.os.name, "Linux")
        #elseif os(macOS)
            XCTAssertEqual(CompiledPlatform.current, .macOS)
            XCTAssertEqual(context.os.name, "macOS")
            // hw.model ("Mac14,2", "VirtualMac2,1" in a virtual machine), not the processor.
            XCTAssertNotNil(context.device.model)
            XCTAssertFalse(["arm64", "x86_64"].contains(context.device.model ?? ""), context.device.model ?? "")
        #elseif os(iOS) && targetEnvironment(simulator)
            // The tests' iOS Simulator: an iOS app, not on a Mac as far as the app can tell.
            XCTAssertEqual(CompiledPlatform.current, .iOS)
            XCTAssertEqual(context.os.name, "iOS")
        #else
            throw XCTSkip("checks Linux, macOS and the iOS Simulator")
        #endif
        XCTAssertEqual(context.os.version, RunningSystem.versionText(version))
    }
}
