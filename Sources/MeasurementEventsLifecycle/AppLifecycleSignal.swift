import Foundation

/// A move of the app's lifecycle, and the platform notifications that announce it, by their
/// string names: this module imports neither UIKit, AppKit nor WatchKit, and on Linux the same
/// names can be posted by hand (which is how it is tested).
///
/// The names are the raw values of the platform constants (`UIApplication.didBecomeActiveNotification`
/// is `Notification.Name("UIApplicationDidBecomeActiveNotification")`), as listed in Apple's
/// documentation: developer.apple.com/documentation/uikit/uiapplication/didenterbackgroundnotification
/// (symbol `c:@UIApplicationDidEnterBackgroundNotification`), .../appkit/nsapplication/didhidenotification
/// (`c:@NSApplicationDidHideNotification`), and WatchKit's `WKApplicationDidEnterBackgroundNotification`
/// (`WKExtension.applicationDidEnterBackgroundNotification`, watchOS 7 and later, so every watchOS
/// this package supports).
///
/// `…DidFinishLaunchingNotification` is deliberately not used: it is also posted when the system
/// launches the app in the background (a fetch, a push), which is not an open; the launch itself
/// is recorded by ``AppLifecycleObserver/start(aggregator:center:bundleInfo:backgroundTask:backgroundWork:)``.
public enum AppLifecycleSignal: Sendable, CaseIterable, Hashable {
    /// The app became active: after a launch, a return from the background, or a system alert.
    case didBecomeActive
    /// The app is about to return to the foreground (AppKit: it was unhidden).
    case willEnterForeground
    /// The app went to the background (AppKit: it was hidden; a Mac app has no background state,
    /// and merely losing focus is not leaving it).
    case didEnterBackground
    /// The app is about to quit.
    case willTerminate

    /// The UIKit, AppKit and WatchKit notification names that announce this move.
    public var notificationNames: [Notification.Name] {
        switch self {
        case .didBecomeActive:
            return [
                Notification.Name("UIApplicationDidBecomeActiveNotification"),
                Notification.Name("NSApplicationDidBecomeActiveNotification"),
                Notification.Name("WKApplicationDidBecomeActiveNotification"),
            ]
        case .willEnterForeground:
            return [
                Notification.Name("UIApplicationWillEnterForegroundNotification"),
                Notification.Name("NSApplicationDidUnhideNotification"),
                Notification.Name("WKApplicationWillEnterForegroundNotification"),
            ]
        case .didEnterBackground:
            return [
                Notification.Name("UIApplicationDidEnterBackgroundNotification"),
                Notification.Name("NSApplicationDidHideNotification"),
                Notification.Name("WKApplicationDidEnterBackgroundNotification"),
            ]
        case .willTerminate:
            // WatchKit has no termination notification.
            return [
                Notification.Name("UIApplicationWillTerminateNotification"),
                Notification.Name("NSApplicationWillTerminateNotification"),
            ]
        }
    }
}
