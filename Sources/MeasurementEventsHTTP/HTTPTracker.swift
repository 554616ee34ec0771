import Foundation
import MeasurementEvents

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Delivers events to a vendor's HTTP API in batches, through a durable queue on disk.
///
/// ```swift
/// let segment = try HTTPTracker(
///     encoder: SegmentEncoder(writeKey: "YOUR_WRITE_KEY"),
///     directory: applicationSupport.appendingPathComponent("analytics/segment"))
/// let aggregator = EventAggregator(filter: filter, trackers: [segment])
/// aggregator.start()
/// ```
///
/// - ``track(_:)`` writes the event to the tracker's directory before it returns (one
///   `write(2)`: the event survives the process being killed; ``flush()`` and
///   ``didEnterBackground()`` also force it to storage). It never waits for the network.
/// - Uploads start when ``Configuration/flushAt`` events are queued, every
///   ``Configuration/flushInterval`` seconds, on ``flush()`` and on ``didEnterBackground()``;
///   they run on the tracker's own queue, oldest batch first, and a batch is deleted only
///   after the server accepted it.
/// - Failed uploads are retried with backoff (see ``RetryPolicy``); refused ones are dropped,
///   counted in ``diagnostics`` and logged.
/// - ``discardPending()`` (called by the aggregator when consent is revoked) deletes everything
///   queued.
/// - Nothing is uploaded, not even what a previous run left, until consent is known:
///   ``consentDidChange(to:)`` with `.granted` (an aggregator announces it at `start()`), or the
///   first ``track(_:)`` when the tracker is used without an aggregator (tracking implies
///   consent).
/// - Identity travels with each event (``MeasurementEvent/attribution``, set by the
///   aggregator); ``identify(_:)`` queues identify and group calls in order with the events.
///   A reset sends nothing: vendors have no reset call, and the events after it carry the new
///   anonymous id and no user id.
///
/// Use one tracker per directory at a time.
public final class HTTPTracker: EventTracker, @unchecked Sendable {
    // @unchecked: the mutable state is in `state` (a lock); the queue and uploader are
    // thread-safe, the other properties immutable.

    public static let libraryName = "MeasurementEventsHTTP"
    public static let libraryVersion = "1.0.0"

    public struct Configuration: Sendable {
        /// Upload when this many events are queued. 20, as Segment's mobile libraries.
        public var flushAt = 20
        /// Upload this often (seconds) whatever is queued; `nil` for never. 30, as Segment's.
        public var flushInterval: TimeInterval? = 30
        /// The most events kept on disk; beyond it the oldest batch is dropped and counted.
        public var maximumQueuedEvents = 100_000
        /// The most bytes kept on disk (about 150 to 300 bytes per event); same policy.
        public var maximumQueuedBytes = 64 * 1024 * 1024
        /// How long one request may take before it is retried.
        public var requestTimeout: TimeInterval = 30
        public var retryPolicy = RetryPolicy()
        public var clock: any DeliveryClock = SystemDeliveryClock()
        /// `nil` sends with ``URLSessionTransport``.
        public var transport: (any HTTPTransport)?
        /// Receives one line per problem or adaptation; the default writes to standard error.
        public var logHandler: @Sendable (String) -> Void = { message in
            FileHandle.standardError.write(Data("[\(HTTPTracker.libraryName)] \(message)\n".utf8))
        }

        public init() {}
    }

    /// What the tracker has done since it was made (plus what recovery found on disk).
    public struct Diagnostics: Sendable, Equatable {
        /// Events (``track(_:)``) and identify and group calls (``identify(_:)``) written to the queue.
        public var accepted = 0
        /// Events the server accepted.
        public var delivered = 0
        /// Events on disk now.
        public var queued = 0
        /// Events dropped because the queue was at its cap.
        public var droppedAtCap = 0
        /// Events deleted by ``discardPending()``.
        public var discarded = 0
        /// Events the encoder could not send (a name GA4 refuses, an oversized event).
        public var rejectedByEncoder = 0
        /// Changes an encoder made for the vendor (a renamed event, a cut value).
        public var adaptedByEncoder = 0
        /// Events in batches the server refused with a 4xx other than 408/429.
        public var rejectedByServer = 0
        /// Records on disk that failed their checksum or could not be decoded.
        public var corruptRecords = 0
        /// Files whose torn last record was cut off.
        public var tornRecordsRepaired = 0
        /// Queue files with nothing readable in them.
        public var unreadableFiles = 0
        public var requests = 0
        public var retries = 0
        /// The latest rejections and refusals, newest last (up to 20).
        public var recentProblems: [String] = []
    }

    /// Why a tracker could not be made.
    public enum SetupError: Error, CustomStringConvertible {
        case insecureEndpoint(URL)
        /// Another live tracker uses the directory; each tracker needs its own.
        case directoryInUse(path: String)
        case directoryNotLockable(path: String, underlying: String)

        public var description: String {
            switch self {
            case .insecureEndpoint(let url):
                return "refusing to send events over plain http to \(url.absoluteString): use https "
                    + "(plain http is allowed for loopback addresses only)"
            case .directoryInUse(let path):
                return "another HTTPTracker is using \(path); give each tracker its own directory"
            case .directoryNotLockable(let path, let underlying):
                return "cannot lock \(path): \(underlying)"
            }
        }
    }

    public let encoder: any BatchEncoder
    public let directory: URL
    private let directoryLock: DirectoryLock
    public let configuration: Configuration
    /// For events tracked without an aggregator (they carry no identity): the anonymous id a
    /// tracker before queue version 2 kept in ``directory``, else one made for this tracker.
    private let standaloneIdentity: EventAttribution

    private let queue: DiskQueue
    private let uploader: BatchUploader
    private let state: LockedValue<State>

    private struct State {
        var accepted = 0
        /// The consent an aggregator announced last; `nil` until one did.
        var consent: EventAggregator.Consent?
        /// Whether a `track` without announced consent opened the uploads (once is enough).
        var openedByTracking = false
        var timer: (any ScheduledWork)?
        var closed = false
    }

    /// Makes a tracker that keeps its queue and identity in `directory`, and sends what a
    /// previous process left there.
    public init(encoder: any BatchEncoder, directory: URL, configuration: Configuration = Configuration()) throws {
        guard Self.isAllowedEndpoint(encoder.endpoint) else { throw SetupError.insecureEndpoint(encoder.endpoint) }
        self.encoder = encoder
        self.directory = directory
        self.configuration = configuration
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            directoryLock = try DirectoryLock(directory: directory)
        } catch let error as DirectoryLock.InUse {
            throw SetupError.directoryInUse(path: error.path)
        } catch let error as DirectoryLock.Failed {
            throw SetupError.directoryNotLockable(path: error.path, underlying: String(cString: strerror(error.code)))
        }
        let legacyAnonymousID = LegacyIdentityFile.anonymousID(in: directory)
        standaloneIdentity = EventAttribution(
            identity: EventIdentity(anonymousID: legacyAnonymousID ?? UUID().uuidString.lowercased()))
        let log = configuration.logHandler
        queue = try DiskQueue(
            directory: directory.appendingPathComponent("queue"),
            limits: DiskQueue.Limits(
                eventsPerBatch: encoder.limits.maximumEvents,
                bytesPerBatch: encoder.limits.maximumBytes,
                maximumEvents: max(configuration.maximumQueuedEvents, encoder.limits.maximumEvents),
                maximumBytes: max(configuration.maximumQueuedBytes, encoder.limits.maximumBytes)),
            log: log)
        uploader = BatchUploader(
            diskQueue: queue, encoder: encoder,
            transport: configuration.transport ?? URLSessionTransport(requestTimeout: configuration.requestTimeout),
            clock: configuration.clock, policy: configuration.retryPolicy, timeout: configuration.requestTimeout,
            flushAt: max(1, configuration.flushAt),
            legacyAnonymousID: standaloneIdentity.identity.anonymousID, log: log)
        state = LockedValue(State())
        scheduleTimer()
        uploader.trigger(flush: false)
    }

    deinit {
        state.withLock { $0.timer?.cancel() }
    }

    /// Whether events may be sent to `url`: https anywhere, plain http only to loopback.
    public static func isAllowedEndpoint(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http":
            guard let host = url.host?.lowercased() else { return false }
            return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
        default: return false
        }
    }

    // MARK: EventTracker

    public func track(_ event: MeasurementEvent) throws {
        var event = event
        if event.attribution == nil { event.attribution = standaloneIdentity }
        let opens = state.withLock { state -> Bool in
            state.accepted += 1
            guard state.consent == nil, !state.openedByTracking else { return false }
            state.openedByTracking = true
            return true
        }
        // Without an aggregator nobody announces consent: tracking implies it.
        if opens { uploader.allowUploads(true) }
        try enqueue(QueuedEvent(event: event))
    }

    /// Queues an identify or group call, in order with the events around it. A reset queues
    /// nothing (no vendor has a reset call).
    public func identify(_ event: IdentityEvent) throws {
        guard let queued = QueuedEvent(event) else { return }
        state.withLock { $0.accepted += 1 }
        try enqueue(queued)
    }

    private func enqueue(_ queued: QueuedEvent) throws {
        let (openCount, sealed) = try queue.append(queued)
        if sealed || openCount == configuration.flushAt { uploader.trigger(flush: false) }
    }

    /// Uploads start at `.granted`, stop otherwise; a denial is followed by
    /// ``discardPending()``, which deletes the queue.
    public func consentDidChange(to consent: EventAggregator.Consent) throws {
        state.withLock { $0.consent = consent }
        uploader.allowUploads(consent == .granted)
    }

    /// Forces what is queued to storage and starts uploading all of it.
    public func flush() throws {
        queue.sealOpenSegment(durable: true)
        uploader.trigger(flush: true)
    }

    /// Deletes every queued event and forgets any upload in progress (a request already on
    /// the wire cannot be called back).
    public func discardPending() throws {
        queue.discardAll()
        uploader.discard()
    }

    /// Call when the app goes to the background: forces the queue to storage and starts an
    /// upload. On iOS, wrap it in a background task (see the README).
    public func didEnterBackground() {
        try? flush()
    }

    // MARK: Observing

    public var diagnostics: Diagnostics {
        let queueCounters = queue.counters
        let uploadCounters = uploader.counters.withLock { $0 }
        return Diagnostics(
            accepted: state.withLock { $0.accepted },
            delivered: uploadCounters.delivered,
            queued: queue.queuedEvents,
            droppedAtCap: queueCounters.droppedAtCap,
            discarded: queueCounters.discarded,
            rejectedByEncoder: uploadCounters.rejectedByEncoder,
            adaptedByEncoder: uploadCounters.adaptedByEncoder,
            rejectedByServer: uploadCounters.rejectedByServer,
            corruptRecords: queueCounters.corruptRecords,
            tornRecordsRepaired: queueCounters.tornRecordsRepaired,
            unreadableFiles: queueCounters.unreadableFiles,
            requests: uploadCounters.requests,
            retries: uploadCounters.retries,
            recentProblems: uploadCounters.recentProblems)
    }

    /// Flushes, then blocks until the queue is empty and nothing is being sent, or until
    /// `timeout` seconds of real time have passed. For tests, command-line tools and shutdown;
    /// not for the main thread of an app. Returns whether everything was sent.
    @discardableResult
    public func waitUntilDelivered(timeout: TimeInterval) -> Bool {
        try? flush()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if queue.queuedEvents == 0 && uploader.isIdle { return true }
            usleep(2_000)
        }
        return queue.queuedEvents == 0 && uploader.isIdle
    }

    // MARK: Timer

    private func scheduleTimer() {
        guard let interval = configuration.flushInterval, interval > 0 else { return }
        let work = configuration.clock.schedule(after: interval) { [weak self] in
            guard let self else { return }
            self.uploader.trigger(flush: true)
            self.scheduleTimer()
        }
        state.withLock { $0.timer = work }
    }
}
