import Foundation
import MeasurementEvents

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

extension EventContext {
    /// The context of this process, from Foundation and the C library only (no UIKit): the
    /// main bundle's info, the OS name and version, the device model (`sysctl`/`uname`), the
    /// locale and the time zone.
    ///
    /// - Parameters:
    ///   - bundleInfo: the app's `Info.plist` values; tests pass their own.
    ///   - locale: the locale reported as the user's language and region.
    ///   - timeZone: the time zone reported with every event.
    /// - Returns: the context, with `nil` for whatever this platform does not tell.
    public static func current(
        bundleInfo: [String: Any]? = Bundle.main.infoDictionary, locale: Locale = .current,
        timeZone: TimeZone = .current
    ) -> EventContext {
        let info = bundleInfo ?? [:]
        func string(_ key: String) -> String? {
            guard let value = info[key] as? String, !value.isEmpty else { return nil }
            return value
        }
        let app = App(
            name: string("CFBundleDisplayName") ?? string("CFBundleName") ?? ProcessInfo.processInfo.processName,
            version: string("CFBundleShortVersionString"), build: string("CFBundleVersion"),
            bundleID: string("CFBundleIdentifier"))
        return EventContext(
            app: app, os: OS(name: osName, version: osVersion(ProcessInfo.processInfo.operatingSystemVersion)),
            device: Device(model: deviceModel(), manufacturer: manufacturer), locale: languageTag(locale.identifier),
            timeZone: timeZone.identifier.isEmpty ? nil : timeZone.identifier)
    }

    static var osName: String {
        #if os(iOS)
            return "iOS"
        #elseif os(macOS)
            return "macOS"
        #elseif os(tvOS)
            return "tvOS"
        #elseif os(watchOS)
            return "watchOS"
        #elseif os(visionOS)
            return "visionOS"
        #elseif os(Linux)
            return "Linux"
        #elseif os(Windows)
            return "Windows"
        #elseif os(Android)
            return "Android"
        #else
            return "unknown"
        #endif
    }

    /// "17.2.1", or "17.2" when the patch is 0.
    static func osVersion(_ version: OperatingSystemVersion) -> String {
        let base = "\(version.majorVersion).\(version.minorVersion)"
        return version.patchVersion == 0 ? base : base + ".\(version.patchVersion)"
    }

    /// "en_US@calendar=gregorian" → "en-US"; nil for an empty identifier.
    static func languageTag(_ identifier: String) -> String? {
        let base = identifier.split(separator: "@", maxSplits: 1).first.map(String.init) ?? ""
        guard !base.isEmpty else { return nil }
        return base.replacingOccurrences(of: "_", with: "-")
    }

    static var manufacturer: String? {
        #if canImport(Darwin)
            return "Apple"
        #else
            return nil
        #endif
    }

    /// The hardware model identifier.
    static func deviceModel() -> String? {
        #if os(macOS) || targetEnvironment(macCatalyst)
            // On a Mac (a Catalyst app too), hw.machine names the processor; the model is here.
            return sysctlString("hw.model")
        #elseif canImport(Darwin)
            // In the simulator, hw.machine names the Mac's processor; the simulated model is here.
            if let simulated = ProcessInfo.processInfo.environment["SIMULATOR_MODEL_IDENTIFIER"] { return simulated }
            return sysctlString("hw.machine")
        #else
            var names = utsname()
            guard uname(&names) == 0 else { return nil }
            // `machine` is a fixed-size C array, which Swift imports as a tuple: its bytes are
            // read in place, up to the terminating zero (through reflection, they cost about
            // 3 M instructions at start-up, issue 34).
            let bytes = withUnsafeBytes(of: names.machine) { Array($0.prefix { $0 != 0 }) }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        #endif
    }

    #if canImport(Darwin)
        private static func sysctlString(_ name: String) -> String? {
            var size = 0
            guard sysctlbyname(name, nil, &size, nil, 0) == 0, size > 0, size <= 1_024 else { return nil }
            var buffer = [UInt8](repeating: 0, count: size)
            guard sysctlbyname(name, &buffer, &size, nil, 0) == 0 else { return nil }
            let bytes = buffer.prefix(while: { $0 != 0 })
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    #endif
}
