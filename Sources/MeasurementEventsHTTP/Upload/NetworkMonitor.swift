import Foundation
import MeasurementEventsAggregator

#if canImport(Network)
    import Network
#endif

/// Tells a tracker whether the device is online: while it is not, no upload is attempted and no
/// retry is spent; when it is again, delivery resumes at once.
///
/// The app may report the condition itself with ``HTTPTracker/networkDidChange(isOnline:)``, or
/// give a monitor in `HTTPTracker.Configuration.networkMonitor`. On Apple platforms
/// `PathNetworkMonitor` (Network's `NWPathMonitor`) is one; on watchOS it always reports online,
/// since an ordinary watch app's path never is satisfied there (TN3135).
public protocol NetworkMonitor: Sendable {
    /// Starts reporting: `update` is called with the current condition, then at every change,
    /// on any thread.
    ///
    /// - Parameter update: receives `true` when the device is online.
    func start(_ update: @escaping @Sendable (_ isOnline: Bool) -> Void)
    /// Stops reporting.
    func stop()
}

/// What ``PathNetworkMonitor`` reports on the platform it was compiled for. Platform-free, so
/// that the rule for each platform is tested on Linux; the monitor itself only reads the path.
///
/// On watchOS the path is not watched. TN3135, "Low-level networking on watchOS"
/// (developer.apple.com/documentation/technotes/tn3135-low-level-networking-on-watchos), counts
/// Network framework as low-level networking, which watchOS allows only to an app streaming
/// audio, during a CallKit call, or listening for its tvOS counterpart (DeviceDiscoveryUI);
/// outside those, it says, `NWPathMonitor` stays unsatisfied. On a real Apple Watch the monitor
/// would say offline for good and no upload would ever start, whereas the uploads' `URLSession`
/// is high-level networking, which TN3135 allows every app. So on watchOS the monitor says online
/// once and lets `URLSession` decide: a request that fails for want of a network is retried with
/// the usual backoff.
///
/// A namespace rather than a type with conformances: an app links only what it calls.
package enum PathReporting {
    /// Whether a monitor compiled for `platform` follows the path (everywhere but watchOS) or
    /// reports online from the start and watches nothing (watchOS).
    ///
    /// - Parameter platform: the platform of the build (``CompiledPlatform/current``).
    package static func followsPath(on platform: CompiledPlatform) -> Bool {
        platform != .watchOS
    }

    /// Starts reporting to `update`, as a monitor compiled for `platform` does.
    ///
    /// - Parameters:
    ///   - platform: the platform of the build (``CompiledPlatform/current``).
    ///   - watchPath: starts watching the path, with a handler that takes whether the path is
    ///     satisfied; called only where the path is followed.
    ///   - update: receives `true` when the device is online.
    package static func start(
        on platform: CompiledPlatform,
        watchingPath watchPath: (_ handler: @escaping @Sendable (_ isSatisfied: Bool) -> Void) -> Void,
        update: @escaping @Sendable (_ isOnline: Bool) -> Void
    ) {
        if followsPath(on: platform) { watchPath(update) } else { update(true) }
    }
}

#if canImport(Network)
    /// `NWPathMonitor`'s view of the network: online when a path is `.satisfied`. Kept thin (it
    /// only forwards the path's status): what the tracker does with it is tested on every
    /// platform through ``HTTPTracker/networkDidChange(isOnline:)``.
    ///
    /// On watchOS it reports online and watches nothing: there `NWPathMonitor` never reports a
    /// satisfied path to an ordinary app (TN3135, "Low-level networking on watchOS"), so
    /// `URLSession` decides (see `PathReporting`).
    public final class PathNetworkMonitor: NetworkMonitor, @unchecked Sendable {
        // @unchecked: NWPathMonitor is thread-safe; it is not marked Sendable in every SDK.
        // nil where the path is not watched (watchOS): no monitor is made there at all.
        private let monitor = PathReporting.followsPath(on: .current) ? NWPathMonitor() : nil
        private let queue = DispatchQueue(label: "MeasurementEventsHTTP.PathNetworkMonitor")

        /// A monitor of every interface.
        public init() {}

        /// Starts the path monitor (on watchOS: reports online once).
        ///
        /// - Parameter update: receives `true` when the path is satisfied.
        public func start(_ update: @escaping @Sendable (_ isOnline: Bool) -> Void) {
            PathReporting.start(
                on: .current,
                watchingPath: { isSatisfied in
                    guard let monitor else { return }
                    monitor.pathUpdateHandler = { path in isSatisfied(path.status == .satisfied) }
                    monitor.start(queue: queue)
                }, update: update)
        }

        /// Cancels the path monitor.
        public func stop() { monitor?.cancel() }
    }
#endif
