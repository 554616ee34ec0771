import Foundation

/// The device and app an event comes from, as vendors want it (Segment's `context`,
/// Amplitude's `platform`/`os_*`/`device_*`/`app_version`, OpenTelemetry's resource).
///
/// The aggregator collects it once at start with ``current(bundleInfo:locale:timeZone:)`` (Foundation and the C
/// library only, no UIKit) and again when the app returns to the foreground. An app adds or
/// overrides fields with ``EventAggregator/Configuration/context``:
///
/// ```swift
/// configuration.context = {
///     var context = EventContext.current()
///     context.extra["screen_width"] = 390   // read from UIKit by the app
///     return context
/// }
/// ```
public struct EventContext: Sendable, Hashable, Codable {
    /// The app: from the main bundle's info.
    public struct App: Sendable, Hashable, Codable {
        public var name: String?
        /// `CFBundleShortVersionString`, for example "2.4.1".
        public var version: String?
        /// `CFBundleVersion`, for example "812".
        public var build: String?
        /// `CFBundleIdentifier`, for example "com.example.shop".
        public var bundleID: String?

        public init(name: String? = nil, version: String? = nil, build: String? = nil, bundleID: String? = nil) {
            self.name = name
            self.version = version
            self.build = build
            self.bundleID = bundleID
        }
    }

    /// The operating system.
    public struct OS: Sendable, Hashable, Codable {
        /// "iOS", "macOS", "tvOS", "watchOS", "visionOS", "Linux", …
        public var name: String
        /// "17.2.1".
        public var version: String

        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }
    }

    /// The hardware.
    public struct Device: Sendable, Hashable, Codable {
        /// The model identifier: "iPhone15,2", "MacBookPro18,3"; the machine name elsewhere.
        public var model: String?
        /// "Apple" on Apple platforms.
        public var manufacturer: String?

        public init(model: String? = nil, manufacturer: String? = nil) {
            self.model = model
            self.manufacturer = manufacturer
        }
    }

    /// The library that sent the event.
    public struct Library: Sendable, Hashable, Codable {
        public var name: String
        public var version: String

        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }

        /// This package.
        public static let measurementEvents = Library(name: "MeasurementEvents", version: "1.1.0")
    }

    public var app: App
    public var os: OS
    public var device: Device
    /// The user's locale as a BCP 47 tag: "en-US".
    public var locale: String?
    /// The time zone's identifier: "Europe/Berlin".
    public var timeZone: String?
    public var library: Library
    /// Fields the app adds (a screen size it reads from UIKit, a build flavour); scalar values.
    public var extra: EventArgs

    public init(
        app: App = App(), os: OS, device: Device = Device(), locale: String? = nil, timeZone: String? = nil,
        library: Library = .measurementEvents, extra: EventArgs = [:]
    ) {
        self.app = app
        self.os = os
        self.device = device
        self.locale = locale
        self.timeZone = timeZone
        self.library = library
        self.extra = extra
    }
}
