import Foundation

#if canImport(Network)
    import Network
#endif

/// Tells a tracker whether the device is online: while it is not, no upload is attempted and no
/// retry is spent; when it is again, delivery resumes at once.
///
/// The app may report the condition itself with ``HTTPTracker/networkDidChange(isOnline:)``, or
/// give a monitor in `HTTPTracker.Configuration.networkMonitor`. On Apple platforms
/// `PathNetworkMonitor` (Network's `NWPathMonitor`) is one.
public protocol NetworkMonitor: Sendable {
    /// Starts reporting: `update` is called with the current condition, then at every change,
    /// on any thread.
    ///
    /// - Parameter update: receives `true` when the device is online.
    func start(_ update: @escaping @Sendable (_ isOnline: Bool) -> Void)
    /// Stops reporting.
    func stop()
}

#if canImport(Network)
    /// `NWPathMonitor`'s view of the network: online when a path is `.satisfied`. Kept thin (it
    /// only forwards the path's status): what the tracker does with it is tested on every
    /// platform through ``HTTPTracker/networkDidChange(isOnline:)``.
    @available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
    public final class PathNetworkMonitor: NetworkMonitor, @unchecked Sendable {
        // @unchecked: NWPathMonitor is thread-safe; it is not marked Sendable in every SDK.
        private let monitor = NWPathMonitor()
        private let queue = DispatchQueue(label: "MeasurementEventsHTTP.PathNetworkMonitor")

        /// A monitor of every interface.
        public init() {}

        /// Starts the path monitor.
        ///
        /// - Parameter update: receives `true` when the path is satisfied.
        public func start(_ update: @escaping @Sendable (_ isOnline: Bool) -> Void) {
            monitor.pathUpdateHandler = { path in update(path.status == .satisfied) }
            monitor.start(queue: queue)
        }

        /// Cancels the path monitor.
        public func stop() { monitor.cancel() }
    }
#endif
