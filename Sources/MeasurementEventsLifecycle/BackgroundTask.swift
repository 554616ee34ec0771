import Dispatch
import MeasurementEvents
import MeasurementEventsAggregator

/// The app's way of asking the system for time to finish the background flush, as a pair of
/// closures, so that this library imports no UIKit. In an iOS app, one line:
///
/// ```swift
/// let backgroundTask = BackgroundTask(
///     begin: { expired in
///         MainActor.assumeIsolated { UIApplication.shared.beginBackgroundTask(expirationHandler: expired).rawValue }
///     },
///     end: { id in
///         DispatchQueue.main.async { UIApplication.shared.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: id)) }
///     })
/// ```
///
/// An app extension cannot call `UIApplication.shared`: there each task is one of ProcessInfo's
/// expiring activities (`performExpiringActivity(withReason:using:)`), whose block waits until
/// `end` and calls `expiration` when the system says the time is up. <doc:AppLifecycle> shows
/// that form whole, and how an extension reports its host app's moves.
///
/// `begin` is called on the thread that posts the lifecycle notification (the main thread);
/// `end` on any thread, exactly once per `begin`: when the flush is done, or when the system's
/// time runs out (the expiration handler), whichever comes first.
public struct BackgroundTask: Sendable {
    let begin: @Sendable (_ expiration: @escaping @Sendable () -> Void) -> Int
    let end: @Sendable (_ identifier: Int) -> Void

    /// A background task made of the app's two calls.
    ///
    /// - Parameters:
    ///   - begin: starts a task; calls its argument when the system's time runs out; returns
    ///     the task's identifier.
    ///   - end: ends the task with that identifier.
    public init(
        begin: @escaping @Sendable (_ expiration: @escaping @Sendable () -> Void) -> Int,
        end: @escaping @Sendable (_ identifier: Int) -> Void
    ) {
        self.begin = begin
        self.end = end
    }

    /// Begins a task, runs `work` on a global queue, and ends the task when `work` returns or the
    /// task expires, whichever is first: never twice, never leaked.
    func run(_ work: @escaping @Sendable () -> Void) {
        let ending = BackgroundTaskEnding(end: end)
        ending.started(begin { ending.finish() })
        DispatchQueue.global(qos: .utility).async {
            work()
            ending.finish()
        }
    }
}

/// Ends one background task once, whether the work or the expiration comes first, and even
/// when the expiration comes before `begin` returned the identifier.
final class BackgroundTaskEnding: Sendable {
    private let end: @Sendable (Int) -> Void
    private let state = LockedValue<(identifier: Int?, finished: Bool, ended: Bool)>((nil, false, false))

    init(end: @escaping @Sendable (Int) -> Void) {
        self.end = end
    }

    /// `begin` returned `identifier`.
    func started(_ identifier: Int) {
        let endsNow = state.withLock { state -> Bool in
            state.identifier = identifier
            guard state.finished, !state.ended else { return false }
            state.ended = true
            return true
        }
        // Called outside the lock: it is the app's code.
        if endsNow { end(identifier) }
    }

    /// The work is done or the time ran out.
    func finish() {
        let identifier = state.withLock { state -> Int? in
            state.finished = true
            guard let identifier = state.identifier, !state.ended else { return nil }
            state.ended = true
            return identifier
        }
        if let identifier { end(identifier) }
    }
}
