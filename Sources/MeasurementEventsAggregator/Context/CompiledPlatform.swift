/// The platform this code was compiled for, as a value: what `#if os(…)` and
/// `targetEnvironment(macCatalyst)` say, read in one place, so that what depends on the platform
/// is a function of it that the tests call with every case, on Linux too.
///
/// It says what the binary was built for, not where it runs: an iPhone or iPad app on a Mac with
/// Apple silicon was compiled for `.iOS` (``RunningSystem`` tells the two apart at run time).
/// No conformance is declared beyond the `Equatable` and `Hashable` every enum without payloads
/// has: an app keeps every conformance record of the modules it links (Benchmarks/SizeBudget).
package enum CompiledPlatform: Sendable {
    /// iPhone and iPad, their simulators, and their apps on a Mac ("Designed for iPad").
    case iOS
    /// A Mac app built from an iPad app with Mac Catalyst (compiled with `os(iOS)` as well).
    case macCatalyst
    case macOS
    case tvOS
    case watchOS
    case visionOS
    case linux
    case android
    case windows
    /// Anything else Swift compiles for (FreeBSD, WebAssembly, …).
    case other

    /// The platform of this build.
    package static var current: CompiledPlatform {
        // Catalyst first: `os(iOS)` is true for it too.
        #if targetEnvironment(macCatalyst)
            return .macCatalyst
        #elseif os(iOS)
            return .iOS
        #elseif os(macOS)
            return .macOS
        #elseif os(tvOS)
            return .tvOS
        #elseif os(watchOS)
            return .watchOS
        #elseif os(visionOS)
            return .visionOS
        #elseif os(Linux)
            return .linux
        #elseif os(Android)
            return .android
        #elseif os(Windows)
            return .windows
        #else
            return .other
        #endif
    }
}
