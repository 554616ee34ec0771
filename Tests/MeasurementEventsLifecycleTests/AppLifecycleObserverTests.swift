import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsLifecycle
import MeasurementEventsTesting
import XCTest

/// The observer driven by the platforms' notification names, posted by hand on a test center.
final class AppLifecycleObserverTests: XCTestCase {
    private var center: NotificationCenter!
    private var observers: [AppLifecycleObserver] = []

    override func setUp() {
        center = NotificationCenter()
    }

    override func tearDown() {
        for observer in observers { observer.stop() }
        observers = []
    }

    // MARK: Install and update

    func testFirstLaunchPostsInstalledWithVersionAndBuild() {
        let (aggregator, tracker) = makeAggregator(store: InMemoryIdentityStore())
        start(aggregator, version: "1.0", build: "7")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["app/installed"])
        XCTAssertEqual(
            tracker.events.first.flatMap(MeasurementEventsLifecycleEvents.AppInstalled.init),
            MeasurementEventsLifecycleEvents.AppInstalled(version: "1.0", build: "7"))
    }

    func testLaunchWithAnotherVersionPostsUpdatedWithThePreviousOne() {
        let store = InMemoryIdentityStore()
        let (first, _) = makeAggregator(store: store)
        start(first, version: "1.0", build: "7")
        first.waitUntilDelivered()

        let (second, tracker) = makeAggregator(store: store)
        start(second, version: "1.1", build: "8")
        second.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["app/updated"])
        XCTAssertEqual(
            tracker.events.first.flatMap(MeasurementEventsLifecycleEvents.AppUpdated.init),
            MeasurementEventsLifecycleEvents.AppUpdated(
                version: "1.1", build: "8", previousVersion: "1.0", previousBuild: "7"))
    }

    func testRelaunchOfTheSameVersionFromAFileStorePostsNeitherInstalledNorUpdated() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("AppLifecycleObserverTests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileIdentityStore(directory: directory)
        let (first, firstTracker) = makeAggregator(store: store)
        start(first, version: "2.0", build: "20")
        first.waitUntilDelivered()
        XCTAssertEqual(firstTracker.names, ["app/installed"])

        let (second, tracker) = makeAggregator(store: store)
        let observer = start(second, version: "2.0", build: "20")
        second.waitUntilDelivered()
        XCTAssertEqual(observer.release, .unchanged)
        XCTAssertEqual(tracker.names, [])
    }

    /// A launch before the device's first unlock: the store cannot be read yet, so the launch
    /// is neither an install nor unchanged until it can; then the update is posted, once.
    func testAnUpdateLaunchedBeforeTheFirstUnlockIsPostedOnceTheStoreIsRead() {
        let store = UnlockableStore(
            IdentityStoreContents(identity: EventIdentity(anonymousID: "anon-1"), appVersion: "1.0", appBuild: "7"))
        let (aggregator, tracker) = makeAggregator(store: store)
        let observer = start(aggregator, version: "1.1", build: "8")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, [], "no install, no update: not known yet")
        XCTAssertEqual(observer.release, .unchanged)

        store.unlock()
        center.post(name: Notification.Name("UIApplicationProtectedDataDidBecomeAvailable"), object: nil)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["app/updated"])
        XCTAssertEqual(observer.release, .updated(previousVersion: "1.0", previousBuild: "7"))
        XCTAssertEqual(tracker.events.first?.attribution?.identity.anonymousID, "anon-1")
    }

    // MARK: Open and background

    func testBecomingActiveAfterLaunchPostsOneOpenedNotFromBackground() {
        let (aggregator, tracker) = launchedApp()
        post("UIApplicationDidFinishLaunchingNotification")
        post("UIApplicationDidBecomeActiveNotification")
        // A system alert dismissed: active again, not opened again.
        post("UIApplicationDidBecomeActiveNotification")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["app/opened"])
        XCTAssertEqual(tracker.events.first?.args["from_background"], .bool(false))
    }

    func testReturnFromBackgroundPostsBackgroundedThenOneOpenedFromBackground() {
        let (aggregator, tracker) = launchedApp()
        post("UIApplicationDidBecomeActiveNotification")
        post("UIApplicationDidEnterBackgroundNotification")
        post("UIApplicationWillEnterForegroundNotification")
        post("UIApplicationDidBecomeActiveNotification")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["app/opened", "app/backgrounded", "app/opened"])
        XCTAssertEqual(tracker.events.map { $0.args["from_background"] }, [.bool(false), nil, .bool(true)])
    }

    func testAppKitHideAndUnhideAreBackgroundAndForeground() {
        let (aggregator, tracker) = launchedApp()
        post("NSApplicationDidFinishLaunchingNotification")
        post("NSApplicationDidBecomeActiveNotification")
        post("NSApplicationDidHideNotification")
        post("NSApplicationDidUnhideNotification")
        post("NSApplicationDidBecomeActiveNotification")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["app/opened", "app/backgrounded", "app/opened"])
        XCTAssertEqual(tracker.events.last?.args["from_background"], .bool(true))
    }

    func testWatchKitNamesOpenAndBackground() {
        let (aggregator, tracker) = launchedApp()
        post("WKApplicationDidBecomeActiveNotification")
        post("WKApplicationDidEnterBackgroundNotification")
        post("WKApplicationWillEnterForegroundNotification")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["app/opened", "app/backgrounded", "app/opened"])
    }

    func testEnteringTheBackgroundTwiceBackgroundsOnce() {
        let (aggregator, tracker) = launchedApp()
        post("UIApplicationDidBecomeActiveNotification")
        post("UIApplicationDidEnterBackgroundNotification")
        post("UIApplicationDidEnterBackgroundNotification")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["app/opened", "app/backgrounded"])
    }

    func testBackgroundedIsPostedBeforeTheTrackersAreFlushed() {
        let (aggregator, tracker) = launchedApp()
        post("UIApplicationDidBecomeActiveNotification")
        post("UIApplicationDidEnterBackgroundNotification")
        aggregator.flush()
        XCTAssertEqual(tracker.names.last, "app/backgrounded")
        XCTAssertEqual(tracker.eventCountAtFirstFlush, 2)
    }

    func testAThirtyOneMinuteBackgroundStartsANewSession() {
        let clock = ManualEventClock()
        let (aggregator, tracker) = makeAggregator(store: InMemoryIdentityStore(), clock: clock)
        start(aggregator, version: "1.0", build: "1")
        post("UIApplicationDidBecomeActiveNotification")
        post("UIApplicationDidEnterBackgroundNotification")
        aggregator.waitUntilDelivered()
        clock.advance(by: 31 * 60)
        post("UIApplicationWillEnterForegroundNotification")
        aggregator.waitUntilDelivered()
        let sessions = tracker.events.map(\.sessionID)
        XCTAssertEqual(tracker.names, ["app/installed", "app/opened", "app/backgrounded", "app/opened"])
        XCTAssertEqual(sessions[0], sessions[2])
        XCTAssertNotEqual(sessions[3], sessions[2])
    }

    func testTerminationDeliversAndFlushesBeforeReturning() {
        let (_, tracker) = launchedApp()
        MeasurementEvent.post("app/opened", args: ["from_background": false], to: center)
        post("UIApplicationWillTerminateNotification")
        // No wait: the observer waited.
        XCTAssertEqual(tracker.names, ["app/opened"])
        XCTAssertEqual(tracker.flushCount, 1)
    }

    func testStoppedObserverIgnoresLifecycleNotifications() {
        let (aggregator, tracker) = launchedApp()
        observers.last?.stop()
        post("UIApplicationDidBecomeActiveNotification")
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, [])
    }

    func testMovesReportedByHandAreHandledLikeNotifications() {
        let (aggregator, tracker) = launchedApp()
        let observer = observers.last
        observer?.handle(.didBecomeActive)
        observer?.handle(.didEnterBackground)
        observer?.handle(.willEnterForeground)
        aggregator.waitUntilDelivered()
        XCTAssertEqual(tracker.names, ["app/opened", "app/backgrounded", "app/opened"])
    }

    // MARK: Helpers

    private func post(_ name: String) {
        center.post(name: Notification.Name(name), object: nil)
    }

    /// An aggregator that already recorded version 1.0 (1), so that starting posts nothing.
    private func launchedApp() -> (EventAggregator, FlushCountingTracker) {
        let store = InMemoryIdentityStore()
        let (previous, _) = makeAggregator(store: store)
        _ = previous.recordAppRelease(version: "1.0", build: "1")
        let (aggregator, tracker) = makeAggregator(store: store)
        start(aggregator, version: "1.0", build: "1")
        return (aggregator, tracker)
    }

    private func makeAggregator(store: any IdentityStore, clock: ManualEventClock? = nil) -> (
        EventAggregator, FlushCountingTracker
    ) {
        let tracker = FlushCountingTracker()
        var configuration = EventAggregator.Configuration.testing
        configuration.identityStore = store
        configuration.clock = clock
        let aggregator = EventAggregator(
            center: center,
            filter: EventFilter(allow: MeasurementEventsLifecycleEvents.allNames.map(EventPattern.init)),
            trackers: [tracker],
            configuration: configuration)
        aggregator.start()
        return (aggregator, tracker)
    }

    @discardableResult
    private func start(_ aggregator: EventAggregator, version: String, build: String) -> AppLifecycleObserver {
        let observer = AppLifecycleObserver.start(
            aggregator: aggregator, center: center,
            bundleInfo: ["CFBundleShortVersionString": version, "CFBundleVersion": build])
        observers.append(observer)
        return observer
    }
}

/// A store that cannot be read until `unlock()`, as before a device's first unlock.
final class UnlockableStore: IdentityStore, @unchecked Sendable {
    // @unchecked: all state is behind its lock.
    private let state: LockedValue<(locked: Bool, contents: IdentityStoreContents?)>

    init(_ contents: IdentityStoreContents?) { state = LockedValue((true, contents)) }

    func unlock() { state.withLock { $0.locked = false } }

    func load() throws -> IdentityStoreContents? {
        try state.withLock { state in
            guard !state.locked else {
                throw IdentityStoreError(path: "/locked", problem: "cannot be read yet", isNotReadableYet: true)
            }
            return state.contents
        }
    }

    func save(_ contents: IdentityStoreContents) throws {
        state.withLock { $0.contents = contents }
    }
}

/// A recording tracker that also remembers how many events it had when first flushed.
final class FlushCountingTracker: EventTracker, @unchecked Sendable {
    // @unchecked: all state is behind its lock.
    private let recording = RecordingTracker()
    private let firstFlush = LockedValue<Int?>(nil)

    func track(_ event: MeasurementEvent) throws { try recording.track(event) }

    func flush() throws {
        let count = recording.events.count
        firstFlush.withLock { if $0 == nil { $0 = count } }
        try recording.flush()
    }

    var events: [MeasurementEvent] { recording.events }
    var names: [EventName] { recording.names }
    var flushCount: Int { recording.flushCount }
    var eventCountAtFirstFlush: Int? { firstFlush.withLock { $0 } }
}
