import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Turns the platform's lifecycle notifications into events and aggregator calls, without
/// importing UIKit, AppKit or WatchKit. Opt-in, one line at launch, after the aggregator started:
///
/// ```swift
/// aggregator.start()
/// AppLifecycleObserver.start(aggregator: aggregator)
/// ```
///
/// and allow its events with `MeasurementEventsLifecycleEvents.allNames`. It posts, on the
/// aggregator's center:
/// - at ``start(aggregator:center:bundleInfo:backgroundTask:backgroundWork:)``: `app/installed` on the first launch ever, or
///   `app/updated` when the version or build differ from the previous launch's (as remembered by
///   the aggregator's identity store, see `EventAggregator.recordAppRelease(version:build:)`);
/// - `app/opened` once per launch and once per return from the background (`from_background`);
/// - `app/backgrounded`, then calls `EventAggregator.applicationDidEnterBackground()`
///   (trackers flushed off the main thread, session inactivity counted from now);
/// - on returning, calls `EventAggregator.applicationWillEnterForeground()`
///   (context refreshed, a session too long in the background ended), then posts `app/opened`;
/// - on termination, waits for the aggregator to deliver and flush (`EventAggregator.flush()`).
///
/// Everything runs on the thread that posts the platform notification (the main thread), in
/// order with the events that thread posts. The observer keeps observing, and keeps itself and
/// the aggregator alive, until ``stop()``. Start one per aggregator.
public final class AppLifecycleObserver: @unchecked Sendable {
    // @unchecked: the mutable state is `phase` and `observers`, each behind its lock; the
    // other properties are immutable.

    /// The aggregator told about background and foreground moves; events go to its center.
    public let aggregator: EventAggregator
    /// Where the platform's lifecycle notifications are observed.
    public let center: NotificationCenter
    /// How this launch compares with the previous one: `EventAggregator.AppRelease.unchanged`
    /// until the aggregator's identity store could be read (a launch before the device's first
    /// unlock), what it is once it was.
    public var release: EventAggregator.AppRelease { recordedRelease.withLock { $0 } }
    private let recordedRelease = LockedValue(EventAggregator.AppRelease.unchanged)
    /// Wraps the background flush, when the app gave one.
    private let backgroundTask: BackgroundTask?
    private let backgroundWork: @Sendable () -> Void
    private let phase = LockedValue(AppLifecyclePhase())
    private let observers = LockedValue<[any NSObjectProtocol]>([])

    private init(
        aggregator: EventAggregator, center: NotificationCenter, backgroundTask: BackgroundTask?,
        backgroundWork: (@Sendable () -> Void)?
    ) {
        self.aggregator = aggregator
        self.center = center
        self.backgroundTask = backgroundTask
        self.backgroundWork = backgroundWork ?? { aggregator.flush() }
    }

    /// Records this launch, posts `app/installed` or `app/updated` when that is what it is, and
    /// starts observing the lifecycle notifications. Call it at launch, before the app first
    /// becomes active (in `application(_:didFinishLaunchingWithOptions:)` or the `App`'s
    /// initialiser), after `aggregator.start()`, so that the aggregator receives what is posted.
    ///
    /// Recording the launch waits for the aggregator's delivery queue and one write of its
    /// identity store. While that store cannot be read yet (an app launched in the background
    /// before the device's first unlock), the launch is recorded, and `app/installed` or
    /// `app/updated` posted, once it can: a background launch is never taken for an install.
    ///
    /// - Parameters:
    ///   - aggregator: the started aggregator to tell about lifecycle moves.
    ///   - center: where the platform posts its lifecycle notifications; `.default` in an app.
    ///   - bundleInfo: where the version (`CFBundleShortVersionString`) and build
    ///     (`CFBundleVersion`) are read; the main bundle's info unless a test injects one.
    ///   - backgroundTask: when given, each background flush runs inside a task begun with it
    ///     and ended when the flush is done or the task expires (see ``BackgroundTask``).
    ///   - backgroundWork: what runs inside the task; `aggregator.flush()` by default. Add a
    ///     tracker's wait to keep the app running until its upload is done:
    ///     `{ aggregator.flush(); _ = segment.waitUntilDelivered(timeout: 25) }`.
    @discardableResult
    public static func start(
        aggregator: EventAggregator, center: NotificationCenter = .default,
        bundleInfo: [String: Any]? = Bundle.main.infoDictionary, backgroundTask: BackgroundTask? = nil,
        backgroundWork: (@Sendable () -> Void)? = nil
    ) -> AppLifecycleObserver {
        let version = bundleInfo?["CFBundleShortVersionString"] as? String
        let build = bundleInfo?["CFBundleVersion"] as? String
        let observer = AppLifecycleObserver(
            aggregator: aggregator, center: center, backgroundTask: backgroundTask, backgroundWork: backgroundWork)
        let recorded: @Sendable (EventAggregator.AppRelease) -> Void = { release in
            observer.recordedRelease.withLock { $0 = release }
            post(release, version: version, build: build, to: aggregator.center)
        }
        if let release = aggregator.recordAppRelease(version: version, build: build, whenKnown: recorded) {
            recorded(release)
        }
        observer.observe()
        return observer
    }

    /// Posts `app/installed` or `app/updated` when that is what `release` is.
    private static func post(
        _ release: EventAggregator.AppRelease, version: String?, build: String?, to center: NotificationCenter
    ) {
        switch release {
        case .installed:
            MeasurementEventsLifecycleEvents.AppInstalled(version: version, build: build).post(to: center)
        case .updated(let previousVersion, let previousBuild):
            MeasurementEventsLifecycleEvents.AppUpdated(
                version: version, build: build, previousVersion: previousVersion, previousBuild: previousBuild
            ).post(to: center)
        case .unchanged:
            break
        }
    }

    /// Stops observing. Calling it again does nothing.
    public func stop() {
        let removed = observers.withLock { observers -> [any NSObjectProtocol] in
            defer { observers = [] }
            return observers
        }
        for observer in removed { center.removeObserver(observer) }
    }

    private func observe() {
        var added: [any NSObjectProtocol] = []
        for signal in AppLifecycleSignal.allCases {
            for name in signal.notificationNames {
                // No queue: the moves must happen before the platform suspends the app.
                added.append(
                    center.addObserverHandingOff(forName: name) { _ in
                        self.handle(signal)
                    })
            }
        }
        // The device's protected data became available (its first unlock): an identity store
        // that could not be read before is read now. UIKit's name on iOS, tvOS, visionOS and
        // Mac Catalyst (`UIApplication.protectedDataDidBecomeAvailableNotification`, iOS 4.0+),
        // AppKit's on macOS 12+ (`NSApplication.protectedDataDidBecomeAvailableNotification`);
        // watchOS has none: the next delivery or return to the foreground reads it.
        for name in Self.protectedDataDidBecomeAvailable {
            added.append(
                center.addObserverHandingOff(forName: name) { [aggregator] _ in
                    aggregator.protectedDataDidBecomeAvailable()
                })
        }
        observers.withLock { $0 = added }
    }

    /// The raw values of UIKit's and AppKit's constants (Apple's documentation:
    /// https://developer.apple.com/documentation/uikit/uiapplication/protecteddatadidbecomeavailablenotification,
    /// https://developer.apple.com/documentation/appkit/nsapplication/protecteddatadidbecomeavailablenotification).
    static let protectedDataDidBecomeAvailable = [
        Notification.Name("UIApplicationProtectedDataDidBecomeAvailable"),
        Notification.Name("NSApplicationProtectedDataDidBecomeAvailable"),
    ]

    /// Reports a lifecycle move that no notification announces, as if it had been posted: for an
    /// app extension, which hears of its host app's moves (`NSExtensionHostDidEnterBackground`
    /// and the others; see the article "App lifecycle"), or a delegate that learns of them first.
    ///
    /// ```swift
    /// func applicationDidEnterBackground() { lifecycle.handle(.didEnterBackground) }
    /// ```
    ///
    /// - Parameter signal: the lifecycle move the app reports.
    public func handle(_ signal: AppLifecycleSignal) {
        // Decides under the lock, acts outside it: posting and the aggregator run other code.
        let actions = phase.withLock { $0.handle(signal) }
        let events = aggregator.center
        for action in actions {
            switch action {
            case .enterForeground:
                aggregator.applicationWillEnterForeground()
            case .postOpened(let fromBackground):
                MeasurementEventsLifecycleEvents.AppOpened(fromBackground: fromBackground).post(to: events)
            case .postBackgrounded:
                MeasurementEventsLifecycleEvents.AppBackgrounded().post(to: events)
            case .enterBackground:
                aggregator.applicationDidEnterBackground()
                backgroundTask?.run(backgroundWork)
            case .flush:
                aggregator.flush()
            }
        }
    }
}
