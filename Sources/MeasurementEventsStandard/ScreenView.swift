import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// A screen view: the screen's name, its class, and properties of the screen.
///
/// ```swift
/// ScreenView("Feed", screenClass: "FeedViewController", properties: ["tab": "home"]).post()
/// ```
///
/// Posted as `screen/viewed`, the event a tracking plan's screens post
/// (`TrackingPlan.reportScreenAppeared(_:to:)`). Segment receives a `screen` call, Amplitude
/// `[Amplitude] Screen Viewed`, GA4 `screen_view`, OTLP a record with `app.screen.name`.
/// An empty name is reported and dropped by ``StandardEventsProcessor``.
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
        guard let typed = MeasurementEventsStandardEvents.ScreenViewed(event) else { return nil }
        var properties = event.args
        for key in Self.reservedArgs { properties[key] = nil }
        self.init(typed.label ?? typed.screen, screenClass: typed.screenClass, properties: properties)
    }

    /// The event's args: the properties, `screen` and `screen_class`.
    public var args: EventArgs {
        var args = properties
        for key in Self.reservedArgs { args[key] = nil }
        args.merge(MeasurementEventsStandardEvents.ScreenViewed(screen: name, screenClass: screenClass).args) { $1 }
        return args
    }

    /// Posts `screen/viewed`.
    ///
    /// - Parameter center: where to post; `.default` unless a test isolates it.
    public func post(to center: NotificationCenter = .default) {
        MeasurementEvent.post(
            MeasurementEventsStandardEvents.ScreenViewed.eventName,
            type: MeasurementEventsStandardEvents.ScreenViewed.eventType, args: args, to: center)
    }

    static let reservedArgs = ["screen", "screen_class", "label"]
}

/// Decides when a screen's appearance is a screen view, for the SwiftUI modifier and the
/// UIKit helper: the framework code reports appearances and disappearances, and this type
/// keeps every decision testable without the frameworks.
///
/// ```swift
/// let views = ScreenAppearances()
/// views.appeared(id: ObjectIdentifier(controller), view: ScreenView("Feed"))   // true: posted
/// views.appeared(id: ObjectIdentifier(controller), view: ScreenView("Feed"))   // false: still visible
/// views.disappeared(id: ObjectIdentifier(controller))
/// ```
///
/// Rules: a screen that appears while it is already visible (SwiftUI calls `onAppear` again
/// when a parent redraws; a UIKit container forwards `viewDidAppear` twice) is not a new view;
/// after it disappeared, it is. An empty name is not posted here either (the processor would
/// drop it); it is counted in ``ignoredEmptyNames``.
public final class ScreenAppearances: Sendable {
    private let state = LockedValue(State())
    private let post: @Sendable (ScreenView) -> Void

    private struct State {
        var visible: Set<AnyHashable> = []
        var ignoredEmptyNames = 0
    }

    /// Appearances that post on `center`.
    ///
    /// - Parameter center: where screen views are posted.
    public convenience init(center: NotificationCenter = .default) {
        self.init { $0.post(to: center) }
    }

    /// Appearances that hand each screen view to `post` (tests record them).
    ///
    /// - Parameter post: called, outside any lock, for each screen view.
    public init(post: @escaping @Sendable (ScreenView) -> Void) {
        self.post = post
    }

    /// The shared appearances the SwiftUI modifier and the UIKit helper use.
    public static let shared = ScreenAppearances()

    /// A screen appeared; posts `view` unless the same screen is still visible.
    ///
    /// - Parameters:
    ///   - id: what tells this screen apart from other screens on display (the view
    ///     controller's `ObjectIdentifier`, a SwiftUI view's name and place).
    ///   - view: the screen view to post.
    /// - Returns: whether a screen view was posted.
    @discardableResult
    public func appeared(id: AnyHashable, view: ScreenView) -> Bool {
        let isNew = state.withLock { state -> Bool in
            guard !view.name.isEmpty else {
                state.ignoredEmptyNames += 1
                return false
            }
            return state.visible.insert(id).inserted
        }
        if isNew { post(view) }
        return isNew
    }

    /// A screen disappeared: its next appearance is a new screen view.
    ///
    /// - Parameter id: the id given to ``appeared(id:view:)``.
    public func disappeared(id: AnyHashable) {
        _ = state.withLock { $0.visible.remove(id) }
    }

    /// Appearances with an empty screen name, not posted.
    public var ignoredEmptyNames: Int { state.withLock { $0.ignoredEmptyNames } }
}
