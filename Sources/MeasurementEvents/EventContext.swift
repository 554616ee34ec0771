import Foundation

/// The device and app an event comes from, as vendors want it (Segment's `context`,
/// Amplitude's `platform`/`os_*`/`device_*`/`app_version`, OpenTelemetry's resource).
///
/// The aggregator collects it once at start with `current(bundleInfo:locale:timeZone:)` (Foundation and the C
/// library only, no UIKit) and again when the app returns to the foreground. An app adds or
/// overrides fields with `EventAggregator.Configuration.context`:
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
        /// The app's display name.
        public var name: String?
        /// `CFBundleShortVersionString`, for example "2.4.1".
        public var version: String?
        /// `CFBundleVersion`, for example "812".
        public var build: String?
        /// `CFBundleIdentifier`, for example "com.example.shop".
        public var bundleID: String?

        /// An app description; every field is optional.
        ///
        /// - Parameters:
        ///   - name: the app's display name.
        ///   - version: `CFBundleShortVersionString`.
        ///   - build: `CFBundleVersion`.
        ///   - bundleID: `CFBundleIdentifier`.
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

        /// An operating system and its version.
        ///
        /// - Parameters:
        ///   - name: the OS name: "iOS", "macOS", "Linux", ….
        ///   - version: the OS version: "17.2.1".
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

        /// A device description.
        ///
        /// - Parameters:
        ///   - model: the model identifier.
        ///   - manufacturer: the maker, "Apple" on Apple platforms.
        public init(model: String? = nil, manufacturer: String? = nil) {
            self.model = model
            self.manufacturer = manufacturer
        }
    }

    /// The library that sent the event.
    public struct Library: Sendable, Hashable, Codable {
        /// The library's name.
        public var name: String
        /// The library's version.
        public var version: String

        /// A library and its version.
        ///
        /// - Parameters:
        ///   - name: the library's name.
        ///   - version: the library's version.
        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }

        /// This package.
        public static let measurementEvents = Library(
            name: "MeasurementEvents", version: PackageVersion.current)
    }

    /// The app: name, version, build and bundle id.
    public var app: App
    /// The operating system and its version.
    public var os: OS
    /// The device model and manufacturer.
    public var device: Device
    /// The user's locale as a BCP 47 tag: "en-US".
    public var locale: String?
    /// The time zone's identifier: "Europe/Berlin".
    public var timeZone: String?
    /// The library that sent the event; this package unless the app says otherwise.
    public var library: Library
    /// Fields the app adds (a screen size it reads from UIKit, a build flavour); scalar values.
    public var extra: EventArgs

    /// A context; `current(bundleInfo:locale:timeZone:)` collects one for this process.
    ///
    /// - Parameters:
    ///   - app: the app's name, version, build and bundle id.
    ///   - os: the operating system.
    ///   - device: the device model and manufacturer.
    ///   - locale: the user's locale as a BCP 47 tag.
    ///   - timeZone: the time zone's identifier.
    ///   - library: the library that sends the events.
    ///   - extra: fields the app adds; scalar values.
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
