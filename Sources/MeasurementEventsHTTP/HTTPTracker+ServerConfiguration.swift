import Foundation
import MeasurementEventsAggregator

extension HTTPTracker.Configuration {
    /// The settings for a server's tracker sending to a collector, beside the aggregator's
    /// `EventAggregator.Configuration.server`:
    ///
    /// - A disk queue sized for a server: 1,000,000 events or 1 GB (an app keeps 100,000 or
    ///   64 MB), so that a collector down for minutes loses nothing at tens of thousands of
    ///   events a second.
    /// - Full requests: an upload every 1,000 events or every second (an app: 20 events or
    ///   30 seconds).
    /// - Gzip bodies (``compressesBodies``, also an app's default) for encoders that take them
    ///   (OTLP, Segment), at zlib's fastest level (``gzipLevel`` 1; an app: 6): the collector
    ///   is near, and the CPU is the service's.
    /// - A 10-second request timeout (an app: 30), so that a stalled collector is retried
    ///   sooner.
    /// - Two requests on the wire at once (``maximumRequestsInFlight``; an app: one): the next
    ///   request goes while the collector reads the one before.
    /// - Back-pressure at the cap instead of dropping the oldest
    ///   (``HTTPTracker/QueueFullBehavior/wait(atMostSeconds:)``, at most 60 seconds): when the
    ///   collector takes events more slowly than they are posted for longer than the queue
    ///   absorbs, `track` waits for uploads to make room, the aggregator's in-flight bound fills
    ///   and posts slow down (an `async` post suspends). A collector down for more than a minute
    ///   with the queue full: the oldest are dropped and counted until it accepts a request.
    ///
    /// ```swift
    /// let collector = try HTTPTracker(
    ///     encoder: OTLPLogsEncoder(baseURL: URL(string: "http://127.0.0.1:4318")!, encoding: .protobuf),
    ///     directory: URL(fileURLWithPath: "/var/lib/my-service/events"),
    ///     configuration: .server)
    /// ```
    public static var server: HTTPTracker.Configuration {
        var configuration = HTTPTracker.Configuration()
        configuration.maximumQueuedEvents = 1_000_000
        configuration.maximumQueuedBytes = 1_000_000_000
        configuration.flushAt = 1_000
        configuration.flushInterval = 1
        configuration.compressesBodies = true
        configuration.gzipLevel = 1
        configuration.requestTimeout = 10
        configuration.whenQueueIsFull = .wait(atMostSeconds: 60)
        configuration.maximumRequestsInFlight = 2
        return configuration
    }
}
