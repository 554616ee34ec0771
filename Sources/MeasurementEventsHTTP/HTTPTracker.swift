import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

// HTTPTracker: concurrency map
//
// Who calls what from where:
//   - `track`, `identify`, `flush`, `didEnterBackground`, `consentDidChange`, `discardPending`:
//     the aggregator's delivery context (its serial queue, or the posting thread under its
//     synchronous-delivery lock), one call at a time; without an aggregator, any thread.
//   - `diagnostics`, `waitUntilDelivered(timeout:)`, `networkDidChange(isOnline:)`: any thread.
//   - Completions of the `HTTPTransport` (a `URLSession` delegate queue) and the
//     `DeliveryClock`'s scheduled work (a global utility queue): any thread; they only hop to
//     the uploader's queue or take the locks below.
//
// Queues:
//   - `BatchUploader.queue` (serial): the one place uploads run; the uploader's plain `var`s
//     (`window`, `requestInFlight`, `retry`, `attempt`, `generation`, ...) are touched only
//     there. A denial and `discardPending` wait with `queue.sync` from the caller's thread,
//     never from the queue itself; `flush` and `track` only `queue.async`.
//   - `requestsOnTheWire` (DispatchGroup): entered when a request is handed to the transport,
//     left at its completion; a denial waits on it, so that no byte leaves after it returns.
//
// Locks (`LockedValue`, non-recursive; none is held while the transport, the encoder or the
// log runs, and none is held while another is taken except 2 → 4 and 5 → 2):
//   1. `HTTPTracker.state`: accepted and failed writes, the flush-policy state, the interval
//      timer, the foreground reading of the last event tracked (`track` only).
//   2. `DiskQueue.state`: the open segment's descriptor, the sealed batches and the front
//      (where the oldest one's events still queued start; the `front` file is rewritten under
//      it), whether a request of the front's events is on the wire (`sending`: the cap waits),
//      the queue's counters; taken by `track` (one `write(2)` under it, and the cap's drops) and
//      by the uploader's queue (finding, reading and consuming batches, `beginSending` and
//      `endSending` around each request). Its log lines are written after the lock is released.
//   3. `BatchUploader.counters` and `BatchUploader.gate` (the tracker's record of consent).
//   4. `HTTPTracker.directoryLock`: the `DirectoryLock` once taken; taken only by the queue's
//      `claim`, under 2, when the queue opens (at init, or later when the directory could not
//      be opened yet), and never takes another lock.
//   5. `DiskQueue.room` (an `NSCondition`): held by a `track` waiting for room at the cap
//      (`QueueFullBehavior.wait`), which takes 2 under it to look; the uploader's queue (after
//      consuming), `discardPending` and `shutdownDidBegin` take it to broadcast, never while
//      holding 2.
//
// Files: `<directory>/tracker.lock`, an exclusive `flock` held for the tracker's life
// (`DirectoryLock`): one tracker per directory, across processes; the queue's segment files
// in `<directory>/queue` (see QueueFiles.swift; excluded from backups on Apple platforms),
// written by `track` and deleted once every event in them was sent (or dropped at the cap),
// and its `front` file, which says how much of the oldest one is done with.

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
///   ``didEnterBackground()`` also force it to storage). It never waits for the network,
///   except at the queue's cap when ``Configuration/whenQueueIsFull`` says to wait for room
///   (the server configuration).
/// - Uploads start when the ``FlushPolicy``s of `Configuration.flushPolicies` say so (by
///   default: `flushAt` events queued, `flushInterval` seconds after an event was queued, and
///   ``didEnterBackground()``) and on ``flush()``; they run on the tracker's own queue, oldest
///   batch first, and a batch is deleted only after the server accepted it. No timer runs while
///   nothing is queued.
/// - Failed uploads are retried with backoff (see ``RetryPolicy``). A reply that refuses the
///   key or the endpoint (401, 403, 404, a vendor's invalid-key reply) drops nothing: sending
///   stops, the queue is kept, one problem is reported (``Diagnostics/refusedConfiguration``),
///   and sending resumes after ``updateEncoder(_:)`` or after the policy's
///   `configurationRetryDelay`. A request the server refuses for its events (a 400, say) is split
///   in halves until the refused events are alone: only those are dropped, counted in
///   ``diagnostics`` (`refusedEvents`) and logged.
/// - Each request carries as many events as fit in the vendor's documented size limit
///   (``BatchLimits``).
/// - ``discardPending()`` (called by the aggregator when consent is revoked) deletes everything
///   queued.
/// - What a previous run left is not read at start: it goes with the first upload of this run,
///   or 5 seconds after start, whichever comes first (the app's launch pays nothing for it).
/// - Nothing is uploaded, not even what a previous run left, until consent is known:
///   ``consentDidChange(to:)`` with `.granted` (an aggregator announces it at `start()`), or the
///   first ``track(_:)`` when the tracker is used without an aggregator (tracking implies
///   consent).
/// - Identity travels with each event (`MeasurementEvent.attribution`, set by the
///   aggregator); ``identify(_:)`` queues identify and group calls in order with the events.
///   A reset sends nothing: vendors have no reset call, and the events after it carry the new
///   anonymous id and no user id.
///
/// Use one tracker per directory at a time.
///
/// - Important: Put the directory in the app's own container (Application Support), never in
///   an App Group container: the tracker holds a file lock on it for as long as it lives, and
///   iOS kills a suspended app that holds a file lock in a shared container (`0xdead10cc`).
public final class HTTPTracker: TrackerProblemReporting, @unchecked Sendable {
    // @unchecked: the mutable state is in `state` (a lock); the queue and uploader are
    // thread-safe, the other properties immutable.

    /// The library's name, as sent in Segment's `context.library` and OTLP's scope.
    public static let libraryName = "MeasurementEventsHTTP"
    /// The library's version, sent with its name: the package's one version.
    public static let libraryVersion = PackageVersion.current
    /// This library, for a payload whose events carry no context.
    package static let library = EventContext.Library(name: libraryName, version: libraryVersion)

    /// What ``track(_:)`` does when the queue is at its cap (``Configuration/maximumQueuedEvents``
    /// or ``Configuration/maximumQueuedBytes``).
    public enum QueueFullBehavior: Sendable, Equatable {
        /// The event is written and the oldest queued event is dropped, counted in
        /// ``Diagnostics/droppedAtCap``. The default: an app keeps its newest events, and
        /// `track` never waits.
        case dropOldest
        /// `track` waits (blocking its thread: the aggregator's delivery queue) until uploads
        /// make room, at most `seconds`, so that the aggregator's in-flight bound fills and posts
        /// slow down to the pace of the network instead of losing events. Each wait is counted in
        /// ``Diagnostics/waitedForRoom``. When none came in time (the server is down, or slower
        /// than the posts for longer than the queue absorbs), the event is written, the oldest
        /// dropped as with ``dropOldest``, the wait counted in ``Diagnostics/waitsForRoomTimedOut``
        /// and logged; from then on events drop the oldest without waiting until a request is
        /// accepted, then waits resume. An aggregator's `shutdown(deadline:)` ends every wait
        /// (``shutdownDidBegin(deadline:)``): what is handed over after it is written over the
        /// cap (``Diagnostics/writtenOverCapAtShutdown``), not dropped. For servers
        /// (``Configuration/server``); never an app's main thread.
        case wait(atMostSeconds: TimeInterval)
    }

    /// How a tracker batches, retries and logs.
    public struct Configuration: Sendable {
        /// Upload when this many events are queued. 20, as Segment's mobile libraries.
        /// Used when ``flushPolicies`` is `nil`.
        public var flushAt = 20
        /// Upload at most this many seconds after an event is queued; `nil` for no timer. 30, as
        /// Segment's. Used when ``flushPolicies`` is `nil`.
        public var flushInterval: TimeInterval? = 30
        /// When to upload, besides ``HTTPTracker/flush()``: an upload starts as soon as any of
        /// them says so. `nil` (the default) means ``CountFlushPolicy`` of ``flushAt``,
        /// ``IntervalFlushPolicy`` of ``flushInterval`` and ``BackgroundFlushPolicy``;
        /// `[ManualFlushPolicy()]` uploads only when asked.
        public var flushPolicies: [any FlushPolicy]?
        /// The policies in force: ``flushPolicies``, or the ones ``flushAt`` and ``flushInterval`` make.
        var effectiveFlushPolicy: CombinedFlushPolicy {
            CombinedFlushPolicy(
                policies: flushPolicies ?? [
                    CountFlushPolicy(count: flushAt), IntervalFlushPolicy(seconds: flushInterval ?? 0),
                    BackgroundFlushPolicy(),
                ])
        }
        /// The most events kept on disk (at least 1): the queue keeps the newest ones, and each
        /// event tracked past it drops the oldest one still queued, counted in
        /// ``Diagnostics/droppedAtCap``. While a request is on the wire (at most
        /// ``requestTimeout``), its events and those tracked meanwhile are kept, and the cap
        /// catches up when it is answered. A cap below the encoder's request size makes the
        /// queue's files smaller, not the requests.
        public var maximumQueuedEvents = 100_000
        /// The most bytes kept on disk (about 150 to 300 bytes per event): past it the oldest
        /// queue files go whole (at most a quarter of it each), counted the same way.
        public var maximumQueuedBytes = 64 * 1024 * 1024
        /// What ``HTTPTracker/track(_:)`` does at the cap: drop the oldest event (the default),
        /// or wait for uploads to make room (``QueueFullBehavior/wait(atMostSeconds:)``, the
        /// server configuration's).
        public var whenQueueIsFull = QueueFullBehavior.dropOldest
        /// How long one request may take before it is retried.
        ///
        /// Rounded up to what the platform's URL loading honours: whole seconds on Linux
        /// (FoundationNetworking drops the fraction, so 0.5 would expire every request at once),
        /// and at least 1 s everywhere. See ``URLSessionTransport/honouredTimeout(_:)``.
        public var requestTimeout: TimeInterval = 30
        /// Whether bodies are sent in gzip (`Content-Encoding: gzip`) to vendors whose encoder
        /// says they take it (``BatchEncoder/acceptsGzipBodies``: Segment and OTLP); on by
        /// default. About a tenth of the bytes on the wire, so less mobile data and radio time.
        public var compressesBodies = true
        /// How hard gzip works on a body (zlib's level: 1, the fastest, to 9, the smallest): 6,
        /// zlib's default, for an app, whose bytes cost mobile data and radio time; 1 in the
        /// server configuration, where the collector is near and the CPU is shared with the
        /// service (on an OTLP body of 1,600 records, 1 MB of JSON: 3.1 ms at level 1 against 7.6 ms
        /// at 6, for 22 % more bytes; issue 49). Out of range: 6.
        public var gzipLevel = 6
        /// How many requests may be on the wire at once: 1, an app's, or more for a server whose
        /// collector takes requests in parallel (2 in the server configuration). While one
        /// request waits for its reply the next, encoded meanwhile, goes too, so that the
        /// collector's time and the encoding overlap (issue 49: one request at a time kept a
        /// server at about 72,000 events a second into rotel, the uploader idle a quarter of
        /// its time). Replies are handled in order; when one is not a 2xx, the replies to the
        /// requests sent after it are ignored and their events sent again after it (a
        /// collector that kept them has them twice: OTLP's delivery is at least once). The
        /// server may read two requests in either order: keep 1 for a vendor that needs a user's
        /// calls in order (an identify before the events it names). Below 1: 1.
        public var maximumRequestsInFlight = 1
        /// How long to wait before retrying a failed upload.
        public var retryPolicy = RetryPolicy()
        /// The clock for flush timers, backoff and `sentAt`; tests pass their own.
        public var clock: any DeliveryClock = SystemDeliveryClock()
        /// `nil` sends with ``URLSessionTransport``, except `http://` endpoints on Linux, which go
        /// through the package's own HTTP/1.1 client (<doc:DeliveringToVendors#Plain-http-on-Linux>).
        public var transport: (any HTTPTransport)?
        /// Reports whether the device is online; `nil` (the default): the tracker assumes it is,
        /// unless the app says otherwise with ``HTTPTracker/networkDidChange(isOnline:)``.
        public var networkMonitor: (any NetworkMonitor)?
        /// Receives one line per problem or adaptation; the default writes to standard error.
        public var logHandler: @Sendable (String) -> Void = { message in
            FileHandle.standardError.write(Data("[\(HTTPTracker.libraryName)] \(message)\n".utf8))
        }

        /// The defaults: 20 events or 30 s per upload, 100,000 events or 64 MB on disk.
        public init() {}
    }

    /// What the tracker has done since it was made (plus what recovery found on disk).
    public struct Diagnostics: Sendable, Equatable {
        /// Events (``track(_:)``) and identify and group calls (``identify(_:)``) written to the queue.
        public var accepted = 0
        /// Events ``track(_:)`` could not write (a full disk); `track` threw for each.
        public var failedWrites = 0
        /// Events the server accepted.
        public var delivered = 0
        /// Events on disk now.
        public var queued = 0
        /// Events dropped because the queue was at its cap.
        public var droppedAtCap = 0
        /// Events and calls that found the queue at its cap and waited for room
        /// (``QueueFullBehavior/wait(atMostSeconds:)``).
        public var waitedForRoom = 0
        /// Waits for room that ran out; each began an episode of dropping the oldest (counted
        /// in ``droppedAtCap``) that lasts until a request is accepted.
        public var waitsForRoomTimedOut = 0
        /// Events written past the cap once a shutdown had begun, instead of waiting
        /// (``QueueFullBehavior/wait(atMostSeconds:)``): kept on disk for the next run.
        public var writtenOverCapAtShutdown = 0
        /// Events deleted by ``discardPending()``.
        public var discarded = 0
        /// Events the encoder could not send (a name GA4 refuses, an oversized event).
        public var rejectedByEncoder = 0
        /// Changes an encoder made for the vendor (a renamed event, a cut value).
        public var adaptedByEncoder = 0
        /// Events dropped with what was left of a batch whose refused requests could not all be
        /// taken apart within the batch's split budget (a server refusing everything); they may
        /// include events the server would have accepted.
        public var rejectedByServer = 0
        /// Events the server refused (a 4xx other than 408 and 429) in a request of their own,
        /// or named as refused in its reply (Amplitude): the bad events, isolated and dropped.
        public var refusedEvents = 0
        /// Extra requests made to isolate refused events: the halves of refused requests.
        public var splitRequests = 0
        /// Events not sent because they are older than the vendor takes (GA4 drops events
        /// more than 72 hours old while answering 2xx); reported once per episode.
        public var expiredBeforeSending = 0
        /// Records on disk lost to damage (a failed checksum, a bad frame, undecodable), as far
        /// as the damaged bytes tell.
        public var corruptRecords = 0
        /// Bytes on disk that were not part of a good record (damage, torn writes).
        public var damagedBytes = 0
        /// Files whose torn last record was cut off.
        public var tornRecordsRepaired = 0
        /// Queue files with nothing readable in them, or that cannot be read at all (those are
        /// left on disk and tried again at the next start).
        public var unreadableFiles = 0
        /// Empty queue files found at start, removed.
        public var emptyFilesRemoved = 0
        /// Files in the queue directory whose name is not one the queue writes; left alone.
        public var unrecognizedFiles = 0
        /// Requests sent, retries included.
        public var requests = 0
        /// Requests sent again after a retryable failure.
        public var retries = 0
        /// The latest rejections and refusals, newest last (up to 20).
        public var recentProblems: [String] = []
        /// While sending is stopped because the server refused the tracker's key, token or
        /// endpoint: the report (the status and the server's message); `nil` while sending.
        public var refusedConfiguration: String?
    }

    /// Why a tracker could not be made.
    public enum SetupError: Error, CustomStringConvertible {
        /// The encoder's endpoint is plain `http://` to a host that is not a loopback address.
        case insecureEndpoint(URL)
        /// Another live tracker uses the directory; each tracker needs its own.
        case directoryInUse(path: String)
        /// The directory's lock file could not be created or locked.
        case directoryNotLockable(path: String, underlying: String)

        /// What went wrong and what to do about it.
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

    /// Turns batches into the vendor's requests: the encoder given at init, or the latest given
    /// to ``updateEncoder(_:)``.
    public var encoder: any BatchEncoder { state.withLock { $0.encoder } }
    /// The purposes of consent its encoder's vendor needs (``BatchEncoder/defaultPurposes``):
    /// what a `Destination` of this tracker needs unless the app names others.
    public var defaultPurposes: Set<ConsentPurpose> { encoder.defaultPurposes }
    /// Where the queue, its lock and any legacy identity live.
    public let directory: URL
    /// The lock on ``directory`` (`DirectoryLock`), taken by the queue when it opens.
    private let directoryLock: LockedValue<DirectoryLock?>
    /// How the tracker batches, retries and logs.
    public let configuration: Configuration
    /// For events tracked without an aggregator (they carry no identity): the anonymous id a
    /// tracker before queue version 2 kept in ``directory``, else one made for this tracker.
    private let standaloneIdentity: EventAttribution

    /// Internal, not private: the shutdown (`HTTPTracker+QueuedDeliveryReporting.swift`) ends its waits.
    let queue: DiskQueue
    /// Internal, not private: tests wait on its queue (`isIdle`).
    let uploader: BatchUploader
    private let flushPolicy: CombinedFlushPolicy
    private let state: LockedValue<State>

    private struct State {
        var encoder: any BatchEncoder
        var accepted = 0
        var failedWrites = 0
        /// Failures since the last write that worked: one log line per episode, not per event.
        var failuresInARow = 0
        /// Armed while events wait and an interval policy is in force; never while idle.
        var timer: (any ScheduledWork)?
        /// What the policies said after the previous event: an upload starts when it turns true,
        /// not again for every event while an upload of the same events is under way.
        var policyWantedFlush = false
        /// Sends what a previous run left, `backlogDelay` after start; cancelled at deinit.
        var backlog: (any ScheduledWork)?
        /// The foreground clock's reading of the last event tracked that had one.
        var previousForegroundReading: ForegroundClock.Reading?
    }

    /// Seconds from the tracker's start to the upload of what a previous run left, unless an
    /// upload of this run (a policy, ``flush()``, ``didEnterBackground()``) sends it sooner: the
    /// app's launch is over by then.
    static let backlogDelay: TimeInterval = 5

    /// Makes a tracker that keeps its queue and identity in `directory`, and sends what a
    /// previous process left there (once consent is known, with the first upload of this run or
    /// 5 seconds after start, whichever comes first: not during the app's launch).
    ///
    /// - Parameters:
    ///   - encoder: the vendor's encoder; its endpoint must be https (or http to loopback).
    ///   - directory: a directory of the tracker's own, in the app's container; created if missing.
    ///   - configuration: batching, retries, caps and logging.
    /// - Throws: ``SetupError`` for an insecure endpoint or a directory in use or not lockable;
    ///   a file system error when the directory cannot be created. A directory that may not be
    ///   opened *yet* (before the device's first unlock after a reboot, when an app launched in
    ///   the background cannot open files of the protection class
    ///   `completeUntilFirstUserAuthentication`; modes that forbid it elsewhere) is no error:
    ///   events wait in memory (at most 10,000, the oldest dropped and counted in
    ///   ``Diagnostics/droppedAtCap``), and each later event or ``flush()`` opens it when it can,
    ///   writing them first.
    public init(encoder: any BatchEncoder, directory: URL, configuration: Configuration = Configuration()) throws {
        guard Self.isAllowedEndpoint(encoder.endpoint) else { throw SetupError.insecureEndpoint(encoder.endpoint) }
        self.directory = directory
        self.configuration = configuration
        flushPolicy = configuration.effectiveFlushPolicy
        // The directory and its lock are the queue's to claim: at once, or, when they may not be
        // opened yet (before the device's first unlock), at a later append or flush.
        let lock = LockedValue<DirectoryLock?>(nil)
        directoryLock = lock
        let claim: @Sendable () throws -> Void = {
            try lock.withLock { held in
                guard held == nil else { return }
                try PrivateFiles.createDirectory(at: directory)
                held = try DirectoryLock(directory: directory)
            }
        }
        let legacyAnonymousID = LegacyIdentityFile.anonymousID(in: directory)
        standaloneIdentity = EventAttribution(
            identity: EventIdentity(anonymousID: legacyAnonymousID ?? UUID().uuidString.lowercased()))
        let log = configuration.logHandler
        if PrivateFiles.isInAppGroupContainer(directory) {
            log(
                "\(directory.path) is in an App Group container: iOS kills a suspended app that holds a file "
                    + "lock there (0xdead10cc), and this tracker holds one; use a directory in the app's own container")
        }
        #if DEBUG
            // Issue 30: a queue the system may purge loses its events in silence.
            let temporary = FileManager.default.temporaryDirectory.resolvingSymlinksInPath().path + "/"
            if directory.resolvingSymlinksInPath().path.hasPrefix(temporary) {
                log(
                    "\(directory.path) is inside the temporary directory, which the system purges (iOS when storage "
                        + "runs low), and the queued events with it; use a directory in Application Support (said in "
                        + "debug builds only)")
            }
        #endif
        do {
            queue = try DiskQueue(
                directory: directory.appendingPathComponent("queue"),
                limits: Self.queueLimits(encoder.limits, configuration), log: log, claim: claim)
        } catch let error as DirectoryLock.InUse {
            throw SetupError.directoryInUse(path: error.path)
        } catch let error as DirectoryLock.Failed {
            throw SetupError.directoryNotLockable(path: error.path, underlying: String(cString: strerror(error.code)))
        }
        uploader = BatchUploader(
            diskQueue: queue, encoder: encoder,
            transport: configuration.transport
                ?? DefaultTransport(requestTimeout: configuration.requestTimeout),
            clock: configuration.clock, policy: configuration.retryPolicy,
            timeout: URLSessionTransport.honouredTimeout(configuration.requestTimeout),
            compressesBodies: configuration.compressesBodies, gzipLevel: configuration.gzipLevel,
            maximumRequestsInFlight: configuration.maximumRequestsInFlight,
            legacyAnonymousID: standaloneIdentity.identity.anonymousID, log: log)
        state = LockedValue(State(encoder: encoder))
        // What a previous run left is sent once consent is known, whatever the policies, with
        // the first upload of this run or `backlogDelay` seconds after start, whichever comes
        // first: not during the app's launch, where reading, decoding and encoding a backlog of
        // 1,000 events cost more than the rest of the start-up. Only the sealed batches: an
        // unconditional flush ran on the uploader's queue after the first events of this run had
        // been tracked and sent them, against a policy that never uploads unasked.
        if queue.queuedEvents > 0 {
            armTimer()
            let backlog = configuration.clock.schedule(after: Self.backlogDelay) { [weak self] in
                self?.uploader.trigger(flush: false)
            }
            state.withLock { $0.backlog = backlog }
        }
        configuration.networkMonitor?.start { [weak self] isOnline in self?.networkDidChange(isOnline: isOnline) }
    }

    /// The queue's caps, as configured (at least one event and one byte), and its files: one
    /// request's worth (``BatchLimits/maximumEvents`` and ``bytesPerQueueFile(_:)``), or less
    /// when the caps are smaller, so that the queue never holds more than they say: at most
    /// `maximumQueuedEvents` events (the cap drops events one by one), and files of at most a
    /// quarter of `maximumQueuedBytes` (the byte cap drops whole files). The uploader fills
    /// requests across files, so small files make no small requests.
    static func queueLimits(_ limits: BatchLimits, _ configuration: Configuration) -> DiskQueue.Limits {
        let maximumEvents = max(1, configuration.maximumQueuedEvents)
        let maximumBytes = max(1, configuration.maximumQueuedBytes)
        return DiskQueue.Limits(
            eventsPerBatch: min(limits.maximumEvents, maximumEvents),
            bytesPerBatch: min(bytesPerQueueFile(limits), max(1, maximumBytes / 4)),
            maximumEvents: maximumEvents, maximumBytes: maximumBytes)
    }

    /// The bytes on disk of one queue file, which the uploader reads whole and sends in as many
    /// requests as it takes: `maximumBytes`; for a limit on the wire 16 times it (a queue record
    /// of an event with its context takes about 16 times its share of a gzip body, measured with
    /// `RequestsPerTenThousandEventsTests`), but at most 8 MB or `maximumBytes`, whichever is
    /// more. With `maximumEvents`, it bounds what the tracker holds in memory.
    static func bytesPerQueueFile(_ limits: BatchLimits) -> Int {
        guard limits.measure == .wire else { return limits.maximumBytes }
        return max(limits.maximumBytes, min(limits.maximumBytes, 512 * 1024) * 16)
    }

    deinit {
        // Cancelled outside the lock: the clock may be the app's own.
        let (timer, backlog) = state.withLock { ($0.timer, $0.backlog) }
        timer?.cancel()
        backlog?.cancel()
        configuration.networkMonitor?.stop()
    }

    /// Whether events may be sent to `url`: https anywhere, plain http only to loopback: an
    /// IPv4 literal in 127.0.0.0/8, `::1` or `localhost` (`127.example.com` is a name, refused).
    ///
    /// - Parameter url: an encoder's endpoint.
    /// - Returns: whether events may be sent there.
    public static func isAllowedEndpoint(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http":
            guard let host = url.host?.lowercased() else { return false }
            return LoopbackHost.isLoopback(host)
        default: return false
        }
    }

    // MARK: EventTracker

    /// Writes `event` to the queue before returning (it survives the app being killed), and
    /// starts an upload when `flushAt` events are queued.
    ///
    /// - Parameter event: the event, with the identity, session and context the aggregator set.
    /// - Throws: the write's error when the event could not be written (a full disk); counted in
    ///   `failedWrites`.
    public func track(_ event: MeasurementEvent) throws {
        // One copy of the event, the queued one (a copy retains every string and dictionary in it).
        var queued = QueuedEvent(event: event)
        // The storage, not `attribution`: that would copy the attribution to compare it with nil.
        if queued.event.attributionStorage == nil { queued.event.attribution = standaloneIdentity }
        // Without an aggregator nobody announces consent: tracking implies it.
        uploader.openUnlessConsentAnnounced()
        // In tracking order, which is posting order: the foreground time since the previous
        // event this tracker got. An event routed elsewhere or dropped before it leaves its time
        // to the next event this tracker gets.
        if let reading = queued.event.foregroundReading {
            queued.foregroundMillisecondsSincePrevious = state.withLock { state in
                defer { state.previousForegroundReading = reading }
                return reading.milliseconds(since: state.previousForegroundReading)
            }
        }
        try enqueue(queued)
    }

    /// Queues an identify or group call, in order with the events around it. A reset queues
    /// nothing (no vendor has a reset call).
    ///
    /// - Parameter event: the identity change, with the identity after it.
    /// - Throws: the write's error when the call could not be written.
    public func identify(_ event: IdentityEvent) throws {
        guard let queued = QueuedEvent(event) else { return }
        try enqueue(queued)
    }

    /// Writes `queued`; counts it as accepted only once written. A failed write is counted and
    /// logged once per episode (not per event), and thrown.
    private func enqueue(_ queued: QueuedEvent) throws {
        do {
            try append(queued)
        } catch {
            let first = state.withLock { state -> Bool in
                state.failedWrites += 1
                state.failuresInARow += 1
                return state.failuresInARow == 1
            }
            if first { configuration.logHandler("\(error); events are not queued until a write works again") }
            throw error
        }
        // The policy is asked outside the lock (it may be the app's own); one lock for the rest.
        let wants = flushPolicy.shouldFlush(queuedEvents: queue.queuedEvents)
        let (recovered, starts) = state.withLock { state -> (Int, Bool) in
            state.accepted += 1
            defer {
                state.failuresInARow = 0
                state.policyWantedFlush = wants
            }
            return (state.failuresInARow, wants && !state.policyWantedFlush)
        }
        if recovered > 0 { configuration.logHandler("the queue is writable again after \(recovered) failed writes") }
        if starts { uploader.trigger(flush: true) }
        armTimer()
    }

    /// Writes `queued`; at the cap, as ``Configuration/whenQueueIsFull`` says: drops the oldest,
    /// or waits for room (the uploader, told to send, makes it) and writes it then.
    private func append(_ queued: QueuedEvent) throws {
        guard case .wait(let seconds) = configuration.whenQueueIsFull else {
            _ = try queue.append(queued)
            return
        }
        while case .full(let frameBytes) = try queue.append(queued, waitsForRoom: true) {
            // Sealed and sent even below `flushAt`: a cap smaller than a batch is all in the open segment.
            uploader.trigger(flush: true)
            _ = queue.waitForRoom(frameBytes: frameBytes, seconds: max(0, seconds))
        }
    }

    /// Uploads start at `.granted`, stop otherwise; a denial is followed by
    /// ``discardPending()``, which deletes the queue. Any other consent returns once no request
    /// is on the wire (at most the request timeout): no byte leaves after it returns.
    ///
    /// - Parameter consent: the consent the aggregator announces.
    public func consentDidChange(to consent: Consent) throws {
        uploader.consentDidChange(to: consent)
    }

    /// Sends with `encoder` from the next request on: the new write key, API key, token or
    /// endpoint after the old one was rotated or revoked. When the server had refused the
    /// configuration, sending resumes at once with everything that was kept queued. The queue's
    /// files keep the batch sizes of the first encoder.
    ///
    /// ```swift
    /// try segment.updateEncoder(SegmentEncoder(writeKey: newWriteKey))
    /// ```
    ///
    /// - Parameter encoder: the vendor's encoder; its endpoint must be https (or http to loopback).
    /// - Throws: ``SetupError/insecureEndpoint(_:)`` for an endpoint that is neither; the
    ///   encoder in use is then kept.
    public func updateEncoder(_ encoder: any BatchEncoder) throws {
        guard Self.isAllowedEndpoint(encoder.endpoint) else { throw SetupError.insecureEndpoint(encoder.endpoint) }
        // Handed over under the lock (the uploader only queues it): concurrent updates reach the
        // uploader in the order ``encoder`` shows them.
        state.withLock { state in
            state.encoder = encoder
            uploader.replaceEncoder(encoder)
        }
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

    /// Keeps `report` for a refused configuration (a key, token or endpoint the server refuses):
    /// told once per episode, besides the log handler, so that the aggregator's problem handler,
    /// trail and inspector show it. An aggregator calls this when a destination reaches the
    /// tracker.
    ///
    /// - Parameter report: where the problem goes.
    public func reportProblems(to report: @escaping @Sendable (String) -> Void) {
        uploader.reportsTo.withLock { $0 = report }
    }

    /// Tells the tracker whether the device is online. While it is not, no upload is attempted
    /// and no retry is spent (a request that fails meanwhile waits for the network, not for a
    /// backoff); when it is again, delivery resumes at once. Repeating a condition does nothing.
    ///
    /// - Parameter isOnline: whether the device can reach the network.
    public func networkDidChange(isOnline: Bool) {
        uploader.setOnline(isOnline)
    }

    /// Call when the app goes to the background: forces the queue to storage, and starts an
    /// upload when a policy says so (``BackgroundFlushPolicy``, in the defaults). On iOS, wrap it
    /// in a background task (see the article "App lifecycle" of `MeasurementEventsLifecycle`).
    public func didEnterBackground() {
        guard flushPolicy.flushesOnBackground else { return queue.sync() }
        try? flush()
    }

    // MARK: Observing

    /// What the tracker has accepted, delivered, dropped and refused so far.
    public var diagnostics: Diagnostics {
        let queueCounters = queue.counters
        let uploadCounters = uploader.counters.withLock { $0 }
        let (accepted, failedWrites) = state.withLock { ($0.accepted, $0.failedWrites) }
        return Diagnostics(
            accepted: accepted,
            failedWrites: failedWrites,
            delivered: uploadCounters.delivered,
            queued: queue.queuedEvents,
            droppedAtCap: queueCounters.droppedAtCap,
            waitedForRoom: queueCounters.waitedForRoom,
            waitsForRoomTimedOut: queueCounters.waitsTimedOut,
            writtenOverCapAtShutdown: queueCounters.writtenOverCap,
            discarded: queueCounters.discarded,
            rejectedByEncoder: uploadCounters.rejectedByEncoder,
            adaptedByEncoder: uploadCounters.adaptedByEncoder,
            rejectedByServer: uploadCounters.rejectedByServer,
            refusedEvents: uploadCounters.refusedEvents,
            splitRequests: uploadCounters.splitRequests,
            expiredBeforeSending: uploadCounters.expiredBeforeSending,
            corruptRecords: queueCounters.corruptRecords,
            damagedBytes: queueCounters.damagedBytes,
            tornRecordsRepaired: queueCounters.tornRecordsRepaired,
            unreadableFiles: queueCounters.unreadableFiles,
            emptyFilesRemoved: queueCounters.emptyFilesRemoved,
            unrecognizedFiles: queueCounters.unrecognizedFiles,
            requests: uploadCounters.requests,
            retries: uploadCounters.retries,
            recentProblems: uploadCounters.recentProblems,
            refusedConfiguration: uploadCounters.refusedConfiguration)
    }

    /// Flushes, then blocks until the queue is empty and nothing is being sent, or until
    /// `timeout` seconds of real time have passed. For tests, command-line tools and shutdown;
    /// not for the main thread of an app. Returns whether everything was sent.
    ///
    /// - Parameter timeout: the longest wait, in seconds of real time.
    /// - Returns: `true` when everything was sent; `false` when the time ran out.
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

    /// Arms the interval timer if a policy has one and none is armed: called when an event is
    /// queued, so that no timer runs while nothing waits.
    private func armTimer() {
        guard let interval = flushPolicy.interval else { return }
        let arms = state.withLock { state -> Bool in
            guard state.timer == nil else { return false }
            state.timer = NoWork()
            return true
        }
        guard arms else { return }
        // Scheduled outside the lock: the clock may be the app's own.
        let work = configuration.clock.schedule(after: interval) { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.timer = nil }
            self.uploader.trigger(flush: true)
        }
        state.withLock { state in
            if state.timer is NoWork { state.timer = work }
        }
    }

    /// Holds the timer's place while it is being scheduled.
    private struct NoWork: ScheduledWork {
        func cancel() {}
    }
}
