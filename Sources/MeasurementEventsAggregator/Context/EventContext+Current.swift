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
        let system = runningSystem
        return EventContext(
            app: app, os: OS(name: system.osName, version: system.osVersion),
            device: Device(model: deviceModel(onMac: system.runsOnMac), manufacturer: manufacturer),
            locale: languageTag(locale.identifier), timeZone: timeZone.identifier.isEmpty ? nil : timeZone.identifier)
    }

    /// This process's system, from ProcessInfo (``RunningSystem`` decides what to report).
    static var runningSystem: (osName: String, osVersion: String, runsOnMac: Bool) {
        let process = ProcessInfo.processInfo
        #if canImport(Darwin)
            // No availability check: isiOSAppOnMac is available from iOS 14, Mac Catalyst 14,
            // macOS 11, tvOS 14, watchOS 7 and visionOS 1, isMacCatalystApp from earlier, both
            // within this package's deployment targets (developer.apple.com/documentation/
            // foundation/processinfo/isiosapponmac and …/ismaccatalystapp).
            let isMacCatalystApp = process.isMacCatalystApp
            let isiOSAppOnMac = process.isiOSAppOnMac
        #else
            // swift-corelibs-foundation has neither.
            let isMacCatalystApp = false
            let isiOSAppOnMac = false
        #endif
        return RunningSystem.describe(
            platform: .current, isMacCatalystApp: isMacCatalystApp, isiOSAppOnMac: isiOSAppOnMac,
            version: process.operatingSystemVersion)
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
    ///
    /// - Parameter onMac: whether the hardware is a Mac (``RunningSystem``'s `runsOnMac`).
    static func deviceModel(onMac: Bool) -> String? {
        #if canImport(Darwin)
            // On a Mac (a Mac app, a Catalyst app, an iPhone or iPad app), hw.machine names the
            // processor ("arm64"); the model ("Mac14,2") is hw.model.
            if onMac { return sysctlString("hw.model") }
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
