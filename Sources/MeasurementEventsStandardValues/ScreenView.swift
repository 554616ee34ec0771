import Foundation
import MeasurementEvents

/// A screen view: the screen's name, its class, and properties of the screen.
///
/// ```swift
/// ScreenView("Feed", screenClass: "FeedViewController", properties: ["tab": "home"]).post()
/// ```
///
/// Posted as `screen/viewed`, the event a tracking plan's screens post
/// (`TrackingPlan.reportScreenAppeared(_:to:)`). Segment receives a `screen` call, Amplitude
/// `[Amplitude] Screen Viewed`, GA4 the custom event `screen_viewed` (the Measurement Protocol
/// reserves `screen_view`), OTLP a record with `app.screen.name`.
/// An empty name is reported and dropped by `MeasurementEventsStandard`'s `StandardEventsProcessor`.
public struct ScreenView: Sendable, Equatable {
    /// The screen's name: `Feed`.
    public var name: String
    /// The screen's class: `FeedViewController`, when it helps to tell screens apart.
    public var screenClass: String?
    /// Properties of the screen, sent beside the name.
    public var properties: EventArgs

    /// A screen view.
    ///
    /// - Parameters:
    ///   - name: the screen's name.
    ///   - screenClass: the screen's class.
    ///   - properties: properties of the screen; the names `screen`, `screen_class` and `label` are taken.
    public init(_ name: String, screenClass: String? = nil, properties: EventArgs = [:]) {
        self.name = name
        self.screenClass = screenClass
        self.properties = properties
    }

    /// The screen view of a `screen/viewed` event, or `nil` for any other event. The name is
    /// the plan's `label` when the event has one, else its `screen`.
    ///
    /// - Parameter event: an event from the bus.
    public init?(_ event: MeasurementEvent) {
        guard event.name == Self.eventName, let screen = event.args["screen"]?.stringValue else { return nil }
        for optional in ["screen_class", "label"] {
            if let value = event.args[optional], value.stringValue == nil { return nil }
        }
        var properties = event.args
        for key in Self.reservedArgs { properties[key] = nil }
        self.init(
            event.args["label"]?.stringValue ?? screen, screenClass: event.args["screen_class"]?.stringValue,
            properties: properties)
    }

    /// The event's args: the properties, `screen` and `screen_class`.
    public var args: EventArgs {
        var args = properties
        for key in Self.reservedArgs { args[key] = nil }
        args["screen"] = .string(name)
        args["screen_class"] = screenClass.map { .string($0) }
        return args
    }

    /// Posts `screen/viewed`.
    ///
    /// - Parameter center: where to post; `.default` unless a test isolates it.
    public func post(to center: NotificationCenter = .default) {
        MeasurementEvent.post(Self.eventName, type: Self.eventType, args: args, to: center)
    }

    /// The event a screen view is posted as, declared in `Events/MeasurementEventsStandard.json`
    /// (`MeasurementEventsStandardEvents.ScreenViewed`, whose args ``args`` writes and
    /// ``init(_:)`` reads; a test holds the two to the catalog).
    package static let eventName: EventName = "screen/viewed"
    /// The event's type in the catalog.
    package static let eventType: EventType = .activity
    /// The args of the event itself; the others are the screen's properties.
    package static let reservedArgs = ["screen", "screen_class", "label"]
}
