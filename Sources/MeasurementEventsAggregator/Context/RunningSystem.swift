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
///
/// A namespace and a tuple rather than a type with conformances: an app links only the function,
/// never metadata or conformance records of its own (Benchmarks/SizeBudget).
package enum RunningSystem {
    /// The system an app compiled for `platform` runs on.
    ///
    /// - Parameters:
    ///   - platform: what the app was compiled for (``CompiledPlatform/current``).
    ///   - isMacCatalystApp: ProcessInfo's `isMacCatalystApp`: true for a Mac Catalyst app, and
    ///     for an iPhone or iPad app on a Mac (Apple's documentation of the property).
    ///   - isiOSAppOnMac: ProcessInfo's `isiOSAppOnMac`: true for an iPhone or iPad app on a Mac
    ///     only.
    ///   - version: ProcessInfo's `operatingSystemVersion`.
    /// - Returns: `osName` ("iOS", "macOS", "tvOS", "watchOS", "visionOS", "Linux", "Android",
    ///   "Windows" or "unknown"), `osVersion` ("17.2.1", or "17.2" when the patch is 0), and
    ///   `runsOnMac`: whether the hardware is a Mac, whose model is then `hw.model` (a Mac app, a
    ///   Mac Catalyst app, or an iPhone or iPad app on a Mac).
    package static func describe(
        platform: CompiledPlatform, isMacCatalystApp: Bool, isiOSAppOnMac: Bool, version: OperatingSystemVersion
    ) -> (osName: String, osVersion: String, runsOnMac: Bool) {
        let (osName, runsOnMac): (String, Bool) =
            switch platform {
            case .macOS, .macCatalyst: ("macOS", true)
            case .iOS where isMacCatalystApp || isiOSAppOnMac: ("macOS", true)
            case .iOS: ("iOS", false)
            case .tvOS: ("tvOS", false)
            case .watchOS: ("watchOS", false)
            case .visionOS: ("visionOS", false)
            case .linux: ("Linux", false)
            case .android: ("Android", false)
            case .windows: ("Windows", false)
            case .other: ("unknown", false)
            }
        return (osName, versionText(version), runsOnMac)
    }

    /// "17.2.1", or "17.2" when the patch is 0.
    static func versionText(_ version: OperatingSystemVersion) -> String {
        let base = "\(version.majorVersion).\(version.minorVersion)"
        return version.patchVersion == 0 ? base : base + ".\(version.patchVersion)"
    }
}
