import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

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
