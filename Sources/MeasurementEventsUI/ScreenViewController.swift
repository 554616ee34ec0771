#if canImport(UIKit) && !os(watchOS)
    import UIKit
    import MeasurementEvents
    import MeasurementEventsStandard

    // Main-actor isolated, as UIKit declares UIViewController (`@MainActor`, NS_SWIFT_UI_ACTOR):
    // called from its appearance callbacks on the main thread. What they call is `Sendable`.
    // UIViewController is unavailable on watchOS, whose UIKit has no view controllers.
    extension UIViewController {
        /// Reports this controller's appearance: call from `viewDidAppear(_:)`. Posts a screen
        /// view unless the controller is still visible (see `ScreenAppearances`).
        ///
        /// ```swift
        /// override func viewDidAppear(_ animated: Bool) {
        ///     super.viewDidAppear(animated)
        ///     reportMeasurementScreen("Feed")
        /// }
        /// ```
        ///
        /// - Parameters:
        ///   - name: the screen's name.
        ///   - properties: properties of the screen.
        public func reportMeasurementScreen(_ name: String, properties: EventArgs = [:]) {
            ScreenAppearances.shared.appeared(
                id: ObjectIdentifier(self),
                view: ScreenView(name, screenClass: String(describing: type(of: self)), properties: properties))
        }

        /// Reports this controller's disappearance: call from `viewDidDisappear(_:)`, so that
        /// its next appearance is a new screen view.
        public func reportMeasurementScreenDisappeared() {
            ScreenAppearances.shared.disappeared(id: ObjectIdentifier(self))
        }
    }
#endif
