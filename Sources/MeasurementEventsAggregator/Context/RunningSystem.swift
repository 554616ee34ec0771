import Foundation

/// The operating system an app runs on, as the context reports it to vendors: what it was
/// compiled for, corrected for an iPad app that runs on a Mac.
///
/// A Mac Catalyst app and an iPhone or iPad app on a Mac with Apple silicon are compiled with
/// `os(iOS)`, but they run on macOS, where `hw.machine` names the processor ("arm64"), not a
/// model. Reported as "iOS" (an iPad app on a Mac with "arm64" for its model), they would land
/// among the iPhones of every vendor's dashboard. They are reported as what they run on: "macOS",
/// ProcessInfo's version, and the Mac's model (`hw.model`, "Mac14,2"). Each vendor's field asks for
/// the system the app runs on:
/// - Segment, `context.os`: "information about the operating system, containing `name` and
///   `version`" (twilio.com/docs/segment/connections/spec/common, "Context fields");
/// - Amplitude, `os_name`, `os_version` and `platform` (amplitude.com/docs/apis/analytics/http-v2,
///   "Keys for the event argument": the name and version of the operating system the user is
///   using);
/// - GA4, `device.operating_system`, `operating_system_version` and `category`
///   (developers.google.com/analytics/devguides/collection/protocol/ga4/reference, "device"); the
///   category comes from the model, and a Mac is "desktop" (`GA4Encoder.deviceCategory`);
/// - OpenTelemetry, `os.type` "darwin" and `os.name`, the "human readable operating system name"
///   (opentelemetry.io/docs/specs/semconv/resource/os/).
///
/// Everything is decided here, from the values the platform code reads (ProcessInfo's
/// `isMacCatalystApp`, `isiOSAppOnMac` and `operatingSystemVersion`), so that every case is
/// tested on Linux.
package struct RunningSystem: Sendable, Hashable {
    /// "iOS", "macOS", "tvOS", "watchOS", "visionOS", "Linux", "Android", "Windows" or "unknown".
    package var osName: String
    /// "17.2.1", or "17.2" when the patch is 0.
    package var osVersion: String
    /// Whether the hardware is a Mac, so that its model is `hw.model`: a Mac app, a Mac Catalyst
    /// app, or an iPhone or iPad app on a Mac.
    package var runsOnMac: Bool

    /// The system an app compiled for `platform` runs on.
    ///
    /// - Parameters:
    ///   - platform: what the app was compiled for (``CompiledPlatform/current``).
    ///   - isMacCatalystApp: ProcessInfo's `isMacCatalystApp`: true for a Mac Catalyst app, and
    ///     for an iPhone or iPad app on a Mac (Apple's documentation of the property).
    ///   - isiOSAppOnMac: ProcessInfo's `isiOSAppOnMac`: true for an iPhone or iPad app on a Mac
    ///     only.
    ///   - version: ProcessInfo's `operatingSystemVersion`.
    package init(
        platform: CompiledPlatform, isMacCatalystApp: Bool, isiOSAppOnMac: Bool, version: OperatingSystemVersion
    ) {
        switch platform {
        case .macOS, .macCatalyst: (runsOnMac, osName) = (true, "macOS")
        case .iOS where isMacCatalystApp || isiOSAppOnMac: (runsOnMac, osName) = (true, "macOS")
        case .iOS: (runsOnMac, osName) = (false, "iOS")
        case .tvOS: (runsOnMac, osName) = (false, "tvOS")
        case .watchOS: (runsOnMac, osName) = (false, "watchOS")
        case .visionOS: (runsOnMac, osName) = (false, "visionOS")
        case .linux: (runsOnMac, osName) = (false, "Linux")
        case .android: (runsOnMac, osName) = (false, "Android")
        case .windows: (runsOnMac, osName) = (false, "Windows")
        case .other: (runsOnMac, osName) = (false, "unknown")
        }
        osVersion = Self.versionText(version)
    }

    /// "17.2.1", or "17.2" when the patch is 0.
    static func versionText(_ version: OperatingSystemVersion) -> String {
        let base = "\(version.majorVersion).\(version.minorVersion)"
        return version.patchVersion == 0 ? base : base + ".\(version.patchVersion)"
    }
}
