/// Where the app is in its lifecycle, and what each platform signal makes the observer do:
/// pure, so that the double firings of the platforms are specified in one place.
///
/// - `didBecomeActive` fires after a launch, after a return from the background, and after a
///   system alert or the control centre was dismissed: only the first after a launch or a
///   return opens the app.
/// - A return from the background announces itself twice (`willEnterForeground`, then
///   `didBecomeActive`): the first one opens the app, the second does nothing.
/// - An app launched in the background (a fetch, a push) goes `willEnterForeground` when the user
///   first opens it: an open from the background.
struct AppLifecyclePhase: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        /// Launched, not yet active.
        case launched
        case foreground
        case background
    }

    /// What the observer does, in this order.
    enum Action: Sendable, Equatable {
        case enterForeground
        case postOpened(fromBackground: Bool)
        case postBackgrounded
        case enterBackground
        case flush
    }

    private(set) var phase = Phase.launched

    mutating func handle(_ signal: AppLifecycleSignal) -> [Action] {
        switch (signal, phase) {
        case (.didBecomeActive, .launched):
            phase = .foreground
            return [.postOpened(fromBackground: false)]
        case (.didBecomeActive, .background), (.willEnterForeground, .background), (.willEnterForeground, .launched):
            phase = .foreground
            return [.enterForeground, .postOpened(fromBackground: true)]
        case (.didBecomeActive, .foreground), (.willEnterForeground, .foreground), (.didEnterBackground, .background):
            return []
        case (.didEnterBackground, .foreground):
            phase = .background
            return [.postBackgrounded, .enterBackground]
        case (.didEnterBackground, .launched):
            // Never opened, so nothing to say it left; what it queued is still flushed.
            phase = .background
            return [.enterBackground]
        case (.willTerminate, _):
            return [.flush]
        }
    }
}
