#if canImport(SwiftUI)
    import Foundation  // UUID; not left to SwiftUI's re-exports
    import SwiftUI
    import MeasurementEvents
    import MeasurementEventsStandard

    extension View {
        /// Posts a screen view named `name` when this view appears (once per appearance:
        /// redraws while it stays visible post nothing; see `ScreenAppearances`).
        ///
        /// ```swift
        /// FeedView().measurementScreen("Feed")
        /// ```
        ///
        /// - Parameters:
        ///   - name: the screen's name.
        ///   - screenClass: the screen's class (the view's type name, for instance), if it helps.
        ///   - properties: properties of the screen.
        /// - Returns: the view, reporting its appearances.
        // On the main actor, where views are built: SwiftUI declares `View` `@MainActor
        // @preconcurrency`, and the modifier made here is main-actor isolated, its initialiser
        // too. Said outright rather than left to inference from the extended protocol.
        @MainActor
        public func measurementScreen(
            _ name: String, screenClass: String? = nil, properties: EventArgs = [:]
        ) -> some View {
            modifier(
                MeasurementScreenModifier(view: ScreenView(name, screenClass: screenClass, properties: properties)))
        }
    }

    /// Reports the appearances of the view it modifies to `ScreenAppearances.shared`.
    ///
    /// Main-actor isolated, as `ViewModifier` is (`@MainActor @preconcurrency` in the SDK, and
    /// its `body(content:)` with it): `id` is read on the main actor only, in `body` and in the
    /// `onAppear` and `onDisappear` actions, non-`Sendable` closures made there and run by SwiftUI
    /// on the main thread. What they call is `Sendable` (`ScreenView`, `ScreenAppearances`, which
    /// keeps its state behind its own lock and posts outside it), so nothing crosses an actor.
    @MainActor
    private struct MeasurementScreenModifier: ViewModifier {
        let view: ScreenView
        /// Tells this appearance of the screen apart from others of the same name on display.
        @State private var id = UUID()

        func body(content: Content) -> some View {
            content
                .onAppear { _ = ScreenAppearances.shared.appeared(id: id, view: view) }
                .onDisappear { ScreenAppearances.shared.disappeared(id: id) }
        }
    }
#endif
