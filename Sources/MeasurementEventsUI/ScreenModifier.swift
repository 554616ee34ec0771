#if canImport(SwiftUI)
    import SwiftUI
    import MeasurementEvents
    import MeasurementEventsStandard

    @available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
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
        public func measurementScreen(
            _ name: String, screenClass: String? = nil, properties: EventArgs = [:]
        ) -> some View {
            modifier(
                MeasurementScreenModifier(view: ScreenView(name, screenClass: screenClass, properties: properties)))
        }
    }

    @available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
    private struct MeasurementScreenModifier: ViewModifier {
        let view: ScreenView
        @State private var id = UUID()

        func body(content: Content) -> some View {
            content
                .onAppear { _ = ScreenAppearances.shared.appeared(id: id, view: view) }
                .onDisappear { ScreenAppearances.shared.disappeared(id: id) }
        }
    }
#endif
