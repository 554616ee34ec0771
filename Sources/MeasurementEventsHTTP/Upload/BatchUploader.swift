import Dispatch
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Sends the queue's events, oldest first, from its own serial queue: one request at a time,
/// or up to `maximumRequestsInFlight` (a server's tracker: 2). While a request is on the wire,
/// the next one is encoded (``Prepared``): it goes as soon as the first is accepted, or at once
/// when more than one may be on the wire, so that the server's time and the encoding overlap.
/// Replies are handled in the order the requests went: a reply that is not a 2xx leaves the
/// requests sent after it ignored (``handle(_:of:)`` finds their events no longer at the
/// front), and their events are sent again after it.
///
/// Each request is filled up to the encoder's limits: as many events as fit in
/// `limits.maximumBytes` (measured before or after gzip, as `limits.measure` says), at most
/// `limits.maximumEvents` entries as the encoder counts them (`requestEntryCount(of:)`). The
/// number to try comes from the bytes per event of the previous request; a body over the limit
/// is cut in proportion and encoded again. A request takes its events from as many of the
/// queue's files as it needs (the `Window`: the rest of one file and the next one), so that
/// neither the files' size nor entries the vendor adds (GA4's `campaign_details`) leave a
/// request short; what a request took is consumed from the queue once it is answered
/// (`DiskQueue.consume(through:)`), so a restart does not send it again.
///
/// Per request: 2xx deletes the events (those a partial success names as refused are counted
/// as refused, not delivered); a reply that refuses the configuration (401, 403, 404, a
/// vendor's invalid-key reply: ``BatchEncoder/refusesConfiguration(_:)``) stops sending and
/// keeps every event, reports once, and resumes with a new encoder (``replaceEncoder(_:)``) or
/// after ``RetryPolicy/configurationRetryDelay``; the replies the encoder retries (by default
/// 408, 429, 5xx) and network errors retry after a backoff (or `Retry-After`); 413 makes
/// requests smaller, down to single events, and the size the server took is kept for later
/// batches (see ``RequestSizeLearner``; a single event refused with 413 is dropped); any other
/// refusal drops only the events the server named when the encoder can read them from the
/// reply (Amplitude), sending the rest again, and otherwise splits the request in halves,
/// recursively, until the refused events are alone in their requests and only those are
/// dropped (see ``RefusalIsolation``; an accepted half gives its split back to the batch's
/// budget). Every drop is counted and logged.
final class BatchUploader: @unchecked Sendable {
    // @unchecked: the mutable properties below are only touched on `queue`; `counters` has
    // its own lock.

    struct Counters: Sendable, Equatable {
        var delivered = 0
        var requests = 0
        var retries = 0
        var rejectedByEncoder = 0
        var adaptedByEncoder = 0
        var rejectedByServer = 0
        var refusedEvents = 0
        var splitRequests = 0
        var expiredBeforeSending = 0
        var recentProblems: [String] = []
        /// The report of the configuration refusal in force; `nil` while sending.
        var refusedConfiguration: String?
    }

    /// The events loaded for sending: from the queue's front on, across as many of its batches
    /// as a request needs, so that requests are filled whatever the batches' sizes (the last
    /// events of a batch go with the first ones of the next). A position counts the events this
    /// uploader loaded: it only grows (until ``discard()``); `events[0]` is at `base`.
    private struct Window {
        /// A batch whose events are in the window: its records from `firstRecord` on (the
        /// earlier ones were done with), `count` of them, the first at position `start`.
        struct Loaded {
            let sequence: UInt64
            let start: Int
            let firstRecord: Int
            let count: Int
        }

        private(set) var loaded: [Loaded] = []
        private(set) var base = 0
        private(set) var events: [QueuedEvent] = []
        /// Events still to send, in spans of one request key (GA4: one user); each request
        /// takes the start of the first span, as many events as the limits allow.
        var ranges: [Range<Int>] = []
        /// Events the server refused by name; left out when their range is sent again.
        var refused: Set<Int> = []
        /// Events whose encoding was counted: a retry, a halved range or a resend encodes
        /// them again, and the encoder's rejections and adaptations count once.
        var encoded: Set<Int> = []
        /// Requests still allowed for splitting refused requests of the loaded batches.
        var splitsLeft = 0
        /// Where the halves of refused requests start: sending one is an extra request.
        var halfStarts: Set<Int> = []

        /// The position after the last event loaded.
        var end: Int { base + events.count }
        /// The first event still to send: everything before it is done with.
        var doneEnd: Int { ranges.first?.lowerBound ?? end }
        var isEmpty: Bool { ranges.isEmpty && loaded.isEmpty }
        /// The last batch loaded.
        var lastSequence: UInt64? { loaded.last?.sequence }

        subscript(position: Int) -> QueuedEvent { events[position - base] }

        /// The events of `range` still to be sent.
        func positions(in range: Range<Int>) -> [Int] {
            refused.isEmpty ? Array(range) : range.filter { !refused.contains($0) }
        }

        /// Appends a batch's events, from its record `firstRecord`, in spans of one `key`; the
        /// first span joins the last one when that reaches the end and has the same key.
        mutating func append(
            sequence: UInt64, firstRecord: Int, events new: [QueuedEvent], key: (QueuedEvent) -> String?
        ) {
            let start = end
            loaded.append(Loaded(sequence: sequence, start: start, firstRecord: firstRecord, count: new.count))
            guard !new.isEmpty else { return }
            var spanStart = start
            var spanKey = key(new[0])
            if let last = ranges.last, last.upperBound == start, !halfStarts.contains(last.lowerBound),
                key(self[start - 1]) == spanKey
            {
                spanStart = last.lowerBound
                ranges.removeLast()
            }
            if events.isEmpty { events = new } else { events.append(contentsOf: new) }
            for index in 1...new.count {
                let nextKey = index < new.count ? key(new[index]) : nil
                if index == new.count || nextKey != spanKey {
                    ranges.append(spanStart..<(start + index))
                    spanStart = start + index
                    spanKey = nextKey
                }
            }
        }

        /// Where `position` is in the queue; `end` is just after the last batch loaded. `nil`
        /// when nothing is loaded.
        func queuePosition(of position: Int) -> DiskQueue.Position? {
            for batch in loaded where batch.count > 0 && position < batch.start + batch.count {
                guard position >= batch.start else { break }
                return DiskQueue.Position(sequence: batch.sequence, record: batch.firstRecord + position - batch.start)
            }
            guard let last = loaded.last else { return nil }
            return DiskQueue.Position(sequence: last.sequence, record: last.firstRecord + last.count)
        }

        /// The position of the queue's `front` in the window: what is before it was dropped (or
        /// done with).
        func position(of front: DiskQueue.Position?) -> Int {
            guard let front else { return end }
            var position = base
            for batch in loaded {
                if front.sequence > batch.sequence {
                    position = batch.start + batch.count
                    continue
                }
                if front.sequence == batch.sequence {
                    position = max(position, batch.start + min(max(0, front.record - batch.firstRecord), batch.count))
                }
                break
            }
            return position
        }

        /// Forgets the events before `position`: done with, or dropped at the queue's cap. The
        /// spans start there at the earliest; batches wholly before it leave the window.
        mutating func drop(before position: Int) {
            let position = min(position, end)
            guard position > base else { return }
            ranges = ranges.compactMap { range in
                range.upperBound <= position ? nil : max(range.lowerBound, position)..<range.upperBound
            }
            events.removeFirst(position - base)
            base = position
            loaded.removeAll { $0.start + $0.count <= position }
            refused = refused.filter { $0 >= position }
            encoded = encoded.filter { $0 >= position }
            halfStarts = halfStarts.filter { $0 >= position }
        }
    }

    let counters = LockedValue(Counters())
    private let queue = DispatchQueue(label: "MeasurementEventsHTTP.BatchUploader")
    private let diskQueue: DiskQueue
    /// Replaced by ``replaceEncoder(_:)``; read and written on `queue` only.
    private var encoder: any BatchEncoder
    /// Counts replacements: a refusal of a request made with an earlier encoder is not one of
    /// the encoder in use.
    private var encoderVersion = 0
    /// Bytes per event of the last request sent (as `limits.measure` counts them): how many
    /// events the next request tries first. `nil` until a request was sent.
    private var bytesPerEvent: Double?
    private let transport: any HTTPTransport
    private let clock: any DeliveryClock
    private let policy: RetryPolicy
    private let timeout: TimeInterval
    private let compressesBodies: Bool
    /// zlib's level for gzip bodies (`HTTPTracker.Configuration.gzipLevel`).
    private let gzipLevel: Int
    /// Checks each body beside it (GA4's validation server), when the encoder asks for it.
    private var validator: (any RequestValidator)?
    /// Whether the next events too old for the vendor start an episode (and get a report).
    private var reportsExpired = true
    /// Fills in the records of queue version 1, which kept no anonymous id.
    private let legacyAnonymousID: String
    private let log: @Sendable (String) -> Void
    /// Where a refused configuration is told besides the log: the aggregator's, once a
    /// destination reaches this tracker (`HTTPTracker.reportProblems(to:)`).
    let reportsTo = LockedValue<(@Sendable (String) -> Void)?>(nil)

    private var window = Window()
    /// The requests on the wire, in the order they went; each reply waits here until those
    /// before it are handled.
    private var inFlight: [InFlight] = []
    /// How many requests may be on the wire at once (at least 1).
    private let maximumInFlight: Int
    /// Numbers the requests, to match each reply to its request.
    private var nextRequestNumber = 0
    private var requestInFlight: Bool { !inFlight.isEmpty }

    /// A request on the wire, and its reply once it came.
    private struct InFlight {
        let number: Int
        let sent: Sent
        var result: Result<HTTPResponse, any Error>?
    }
    /// The next request, encoded while the one before it is on the wire.
    private var prepared: Prepared?
    /// The last reply was a 2xx: only then is the next request prepared (and the next batch
    /// loaded for it ahead of time), so that a refusal's isolation and split budget work on
    /// the batches they always did.
    private var lastReplyAccepted = false

    /// A request made while the one before it is on the wire, for the events just after it:
    /// sent as it is when that one is accepted and the window still starts where it was made
    /// for (same generation and encoder, no refusal being isolated), or at once when more than
    /// one request may be on the wire (``sendPrepared(after:)``); otherwise thrown away and
    /// the next request encoded afresh. Made only when it is a full, well-formed request
    /// (within the limits); anything unusual is left to ``pump()``.
    private struct Prepared {
        let request: HTTPRequest
        let range: Range<Int>
        let positions: [Int]
        let eventCount: Int
        /// Its size as the limits measure it.
        let size: Int
        let generation: Int
        let encoderVersion: Int
    }
    private var retry: (any ScheduledWork)?
    private var attempt = 0
    private var flushRequested = false
    /// Someone asked for sending (a trigger) and the queue has not run dry since. Opening the
    /// gate or coming back online resumes only such work: with a policy that never uploads
    /// unasked, a batch sealed meanwhile stays queued until asked for.
    private var sendingWanted = false
    private var generation = 0
    private var requestSize: RequestSizeLearner
    /// The tracker's one record of consent. Closed until consent is known: what a previous
    /// run queued waits for it.
    private let gate = LockedValue(Gate())
    /// Entered when a request is handed to the transport, left when it completes: a denial
    /// waits for it, so that no byte leaves after the denial returns.
    private let requestsOnTheWire = DispatchGroup()
    /// What the app or its network monitor said last; online until told otherwise.
    private var online = true
    /// A batch used up its split budget and no request was accepted since: the server seems to
    /// refuse everything, so the next batches get one split only, and no new problem report.
    private var refusingEverything = false

    private struct Gate {
        /// The consent an aggregator announced last; `nil` until one did.
        var consent: Consent?
        /// Whether a `track` without announced consent opened the uploads (once is enough).
        var openedByTracking = false
        var isOpen: Bool { consent == .granted || (consent == nil && openedByTracking) }
    }

    init(
        diskQueue: DiskQueue, encoder: any BatchEncoder, transport: any HTTPTransport, clock: any DeliveryClock,
        policy: RetryPolicy, timeout: TimeInterval, compressesBodies: Bool, gzipLevel: Int = 6,
        maximumRequestsInFlight: Int = 1, legacyAnonymousID: String,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.compressesBodies = compressesBodies
        self.gzipLevel = gzipLevel
        self.maximumInFlight = max(1, maximumRequestsInFlight)
        self.diskQueue = diskQueue
        self.encoder = encoder
        self.transport = transport
        self.clock = clock
        self.policy = policy
        self.timeout = timeout
        self.legacyAnonymousID = legacyAnonymousID
        self.log = log
        requestSize = RequestSizeLearner(maximum: encoder.limits.maximumEvents)
        validator = (encoder as? any ServerValidatedEncoder)?.makeRequestValidator(
            transport: transport, timeout: timeout
        ) { [weak self] in
            self?.problem($0)
        }
    }

    /// Starts sending if idle. `flush` sends the open segment too; without it only sealed
    /// batches go (what a previous run left, the rest of an upload under way).
    func trigger(flush: Bool) {
        queue.async {
            if flush { self.flushRequested = true }
            self.sendingWanted = true
            self.pump()
        }
    }

    /// Opens the gate at `.granted` (resuming sending that was asked for) and closes it
    /// otherwise. A closing returns once no request is on the wire (or the request timeout has
    /// passed): a pump that read the gate open has finished, and the request it sent has completed.
    func consentDidChange(to consent: Consent) {
        let (wasOpen, isOpen) = gate.withLock { gate in
            let wasOpen = gate.isOpen
            gate.consent = consent
            return (wasOpen, gate.isOpen)
        }
        if isOpen {
            if !wasOpen { queue.async { if self.sendingWanted { self.pump() } } }
            return
        }
        queue.sync {}
        if requestsOnTheWire.wait(timeout: .now() + timeout) == .timedOut {
            log("consent changed to \(consent.rawValue) while a request was still on the wire after \(timeout) s")
        }
    }

    /// Without an aggregator nobody announces consent: the first `track` opens the gate.
    func openUnlessConsentAnnounced() {
        let opens = gate.withLock { gate -> Bool in
            guard gate.consent == nil, !gate.openedByTracking else { return false }
            gate.openedByTracking = true
            return true
        }
        if opens { queue.async { if self.sendingWanted { self.pump() } } }
    }

    /// Offline: nothing is sent and no retry is spent. Back online: a pending backoff is cut
    /// short and delivery resumes at once.
    func setOnline(_ isOnline: Bool) {
        queue.async {
            guard self.online != isOnline else { return }
            self.online = isOnline
            guard isOnline else { return }
            // A refused configuration waits for a new encoder or its own long delay, not for the network.
            if self.counters.withLock({ $0.refusedConfiguration }) != nil { return }
            self.retry?.cancel()
            self.retry = nil
            self.attempt = 0
            if self.sendingWanted { self.pump() }
        }
    }

    /// Sends with `encoder` from the next request on (a new key, token or endpoint); resumes
    /// at once when sending was stopped for a refused configuration.
    func replaceEncoder(_ encoder: any BatchEncoder) {
        queue.async {
            self.encoder = encoder
            self.encoderVersion += 1
            self.requestSize = RequestSizeLearner(maximum: encoder.limits.maximumEvents)
            self.bytesPerEvent = nil
            guard self.counters.withLock({ $0.refusedConfiguration }) != nil else { return }
            self.counters.withLock { $0.refusedConfiguration = nil }
            self.log("a new encoder for \(encoder.endpoint.absoluteString): sending resumes")
            self.retry?.cancel()
            self.retry = nil
            self.attempt = 0
            self.pump()
        }
    }

    /// Forgets the batch being sent and any pending retry (consent was revoked).
    func discard() {
        queue.sync {
            generation += 1
            window = Window()
            prepared = nil
            retry?.cancel()
            retry = nil
            attempt = 0
            flushRequested = false
        }
    }

    /// Nothing loaded, sending or waiting to retry.
    var isIdle: Bool { queue.sync { window.isEmpty && !requestInFlight && retry == nil } }

    /// What the uploader is doing, for tests that drive its clock: a request on the wire, a
    /// retry waiting for the clock, or neither (idle, or waiting for consent or the network).
    var activity: (requestInFlight: Bool, waitingToRetry: Bool) { queue.sync { (requestInFlight, retry != nil) } }

    // MARK: On the queue

    private func pump() {
        guard gate.withLock({ $0.isOpen }), online, inFlight.count < maximumInFlight, retry == nil else { return }
        if let last = inFlight.last {
            // Another request while some are on the wire: only the one prepared for the events
            // just after the last of them.
            return sendPrepared(after: last.sent)
        }
        pumping: while true {
            followFront()
            if let ready = prepared {
                prepared = nil
                if ready.generation == generation, ready.encoderVersion == encoderVersion, window.refused.isEmpty,
                    window.halfStarts.isEmpty, let first = window.ranges.first,
                    first.lowerBound == ready.range.lowerBound, ready.range.upperBound <= first.upperBound,
                    let start = window.queuePosition(of: ready.range.lowerBound), diskQueue.beginSending(from: start)
                {
                    bytesPerEvent = Double(ready.size) / Double(ready.positions.count)
                    return send(
                        ready.request, range: ready.range, positions: ready.positions, eventCount: ready.eventCount)
                }
            }
            guard let first = window.ranges.first else {
                guard loadNextBatch() else {
                    flushRequested = false
                    sendingWanted = false
                    return
                }
                continue
            }
            // The next request: as many events as the server is known to take, and as the
            // previous request's bytes per event say fit in the byte limit.
            let limits = encoder.limits
            let wanted = min(requestSize.next, fitting(limits))
            // A last span too short for that takes the next batch's events (when they are of
            // its key): requests are filled across the queue's batches.
            if window.ranges.count == 1, first.upperBound == window.end, first.count < wanted,
                window.halfStarts.isEmpty, loadNextBatch()
            {
                continue
            }
            let span = window.ranges[0]
            var count = min(span.count, wanted)
            while true {
                let range = span.lowerBound..<(span.lowerBound + count)
                let positions = window.positions(in: range)
                guard !positions.isEmpty else {
                    advance(past: range)
                    continue pumping
                }
                let events = positions.map { window[$0] }
                // The vendor's count (Amplitude's product events, GA4's campaign_details) stays
                // within its limit: fewer events, by the excess, until it fits; the rest goes
                // with the next request.
                let entries = encoder.requestEntryCount(of: events)
                if entries > limits.maximumEvents, range.count > 1 {
                    count = max(1, range.count - (entries - limits.maximumEvents))
                    continue
                }
                // The queue's cap waits from here until the request is answered or given up: at
                // the cap, a poster drops the oldest event at each append, and a front moving
                // while the request was encoded used to leave nothing to send (encoded in vain,
                // again and again, while the posts went on). When the cap dropped the request's
                // first event before this, the window follows the front first.
                guard let start = window.queuePosition(of: range.lowerBound), diskQueue.beginSending(from: start)
                else { continue pumping }
                let encoded = encoder.encode(
                    events, context: BatchContext(sentAt: clock.now()))
                if !positions.allSatisfy(window.encoded.contains) {
                    note(encoded)
                    window.encoded.formUnion(positions)
                }
                guard let payload = encoded.request else {
                    diskQueue.endSending()
                    advance(past: range)
                    continue pumping
                }
                // Compressed before measuring only for a limit on the wire: an oversized payload
                // is not compressed in vain.
                let onTheWire = limits.measure == .wire ? compressed(payload) : nil
                let size = onTheWire?.body.count ?? payload.body.count
                if size > limits.maximumBytes, range.count > 1 {
                    // Cut in proportion, with 5 % to spare, and encode again: one or two rounds.
                    let share = Double(limits.maximumBytes) / Double(size) * 0.95
                    let cut = Int(Double(range.count) * share)  // fits: at most range.count, share < 1
                    count = min(range.count - 1, max(1, cut))
                    diskQueue.endSending()
                    continue
                }
                bytesPerEvent = Double(size) / Double(positions.count)
                return send(
                    onTheWire ?? compressed(payload), range: range, positions: positions,
                    eventCount: events.count - encoded.rejected.count - encoded.expired.count)
            }
        }
    }

    /// Sends the request prepared for the events just after `last` (on the wire), when it still
    /// is for them: the last reply handled a 2xx, same generation and encoder, no refusal being
    /// isolated, its events still to send and not dropped by the cap. Otherwise nothing goes
    /// until the replies come.
    private func sendPrepared(after last: Sent) {
        followFront()
        guard let ready = prepared else { return }
        prepared = nil
        // Not after a reply that was not a 2xx: what follows waits for the retry, the split or
        // the smaller requests of that reply.
        guard lastReplyAccepted, ready.generation == generation, ready.encoderVersion == encoderVersion,
            window.refused.isEmpty,
            window.halfStarts.isEmpty, ready.range.lowerBound == last.range.upperBound,
            window.ranges.contains(where: {
                $0.lowerBound <= ready.range.lowerBound && ready.range.upperBound <= $0.upperBound
            }),
            let start = window.queuePosition(of: ready.range.lowerBound), diskQueue.beginSending(from: start)
        else { return }
        bytesPerEvent = Double(ready.size) / Double(ready.positions.count)
        send(ready.request, range: ready.range, positions: ready.positions, eventCount: ready.eventCount)
    }

    /// Loads the queue's next batch after those in the window (sealing the open segment when a
    /// flush asked for it); false when there is none. A file that cannot be read is left on
    /// disk by the queue for the next start, and the next one is loaded.
    private func loadNextBatch() -> Bool {
        while let batch = diskQueue.nextBatch(
            after: window.lastSequence, sealingOpenSegmentWithAtLeast: flushRequested ? 1 : Int.max)
        {
            guard let (read, firstRecord) = diskQueue.load(batch) else { continue }
            if window.ranges.isEmpty { window.splitsLeft = 0 }
            window.splitsLeft += refusingEverything ? 2 : RefusalIsolation.splitBudget(forBatchOf: read.count)
            window.append(
                sequence: batch.sequence, firstRecord: firstRecord,
                events: read.contains(where: \.isLegacy)
                    ? read.map { $0.fillingLegacyIdentity(anonymousID: legacyAnonymousID) } : read,
                key: encoder.requestKey(for:))
            return true
        }
        return false
    }

    /// Leaves out of the window what the queue's cap dropped meanwhile (its front passed it).
    private func followFront() {
        guard !window.isEmpty else { return }
        window.drop(before: window.position(of: diskQueue.front))
    }

    /// Tells the queue what is done with (everything before the window's first event still to
    /// send: sent, refused or dropped), and forgets it.
    private func reportProgress() {
        let done = window.doneEnd
        guard done > window.base, let position = window.queuePosition(of: done) else { return }
        diskQueue.consume(through: position)
        window.drop(before: done)
    }

    /// How many events fit in the byte limit at the previous request's bytes per event, with
    /// 5 % to spare; unlimited before the first request.
    private func fitting(_ limits: BatchLimits) -> Int {
        guard let bytesPerEvent, bytesPerEvent > 0 else { return limits.maximumEvents }
        let fitting = Double(limits.maximumBytes) * 0.95 / bytesPerEvent
        guard fitting < Double(limits.maximumEvents) else { return limits.maximumEvents }
        return max(1, Int(fitting))  // fits: below maximumEvents, checked just above
    }

    /// `request` with its body in gzip when the vendor takes it and the app did not turn it off;
    /// as it is when zlib fails.
    private func compressed(_ request: HTTPRequest) -> HTTPRequest {
        guard compressesBodies, encoder.acceptsGzipBodies, let body = GzipBody.compress(request.body, level: gzipLevel)
        else {
            return request
        }
        var request = request
        request.body = body
        request.headers["Content-Encoding"] = "gzip"
        return request
    }

    /// The first range's events up to `range.upperBound` are done with (sent, refused or
    /// dropped); the queue is told.
    private func advance(past range: Range<Int>) {
        guard let span = window.ranges.first else { return }
        if range.upperBound >= span.upperBound {
            window.ranges.removeFirst()
        } else {
            window.ranges[0] = range.upperBound..<span.upperBound
        }
        reportProgress()
    }

    private func note(_ encoded: EncodedBatch) {
        noteExpired(encoded)
        guard !encoded.rejected.isEmpty || !encoded.adaptations.isEmpty else { return }
        for rejection in encoded.rejected { problem("rejected \(rejection)") }
        for adaptation in encoded.adaptations { log("adapted \(adaptation)") }
        counters.withLock {
            $0.rejectedByEncoder += encoded.rejected.count
            $0.adaptedByEncoder += encoded.adaptations.count
        }
    }

    /// Counts events too old for the vendor; reports the first of an episode (until a request
    /// goes out with none).
    private func noteExpired(_ encoded: EncodedBatch) {
        counters.withLock { $0.expiredBeforeSending += encoded.expired.count }
        if encoded.expired.isEmpty {
            if encoded.request != nil { reportsExpired = true }
        } else if reportsExpired {
            reportsExpired = false
            problem(
                "\(encoded.expired.count) events left out, older than the vendor takes (\(encoded.expired[0])); "
                    + "further ones are counted (diagnostics.expiredBeforeSending) without a new report until "
                    + "a request goes out without any")
        }
    }

    private func send(_ request: HTTPRequest, range: Range<Int>, positions: [Int], eventCount: Int) {
        validator?.check(request)
        let isHalf = window.halfStarts.remove(range.lowerBound) != nil
        counters.withLock {
            $0.requests += 1
            if isHalf { $0.splitRequests += 1 }
        }
        let sent = Sent(
            range: range, positions: positions, eventCount: eventCount, generation: generation,
            encoderVersion: encoderVersion, isHalf: isHalf)
        let number = nextRequestNumber
        nextRequestNumber += 1
        inFlight.append(InFlight(number: number, sent: sent))
        requestsOnTheWire.enter()
        transport.send(request, timeout: timeout) { result in
            self.queue.async {
                if let index = self.inFlight.firstIndex(where: { $0.number == number }) {
                    self.inFlight[index].result = result
                }
                self.handleReplies()
            }
        }
        // The reply is handled on this queue, after this.
        prepareNext(after: sent)
        // More may go at once: the one just prepared goes now.
        if inFlight.count < maximumInFlight, prepared != nil { pump() }
    }

    /// Handles the replies that came, in the order their requests went (a reply waits for those
    /// before it), then sends what is next.
    private func handleReplies() {
        while let first = inFlight.first, let result = first.result {
            inFlight.removeFirst()
            handle(result, of: first.sent)
            // After the events it took were consumed: the cap applies again.
            diskQueue.endSending()
            // Left once the answer is handled, not when it arrives: a denial that waited for
            // this request then discards only what the server did not keep (events it
            // accepted are counted delivered, never discarded too).
            requestsOnTheWire.leave()
        }
        pump()
    }

    /// Encodes the request that follows `sent` (``Prepared``), as ``pump()`` would once `sent`
    /// is accepted: the rest of its span, or the next span (loading the next batch when the last
    /// span is short), as many events as the limits allow. Only after an accepted request, nothing
    /// while a refusal is being isolated, and nothing unusual (too many entries, too many bytes, nothing to send): those
    /// are left to `pump`, which encodes again. The encoder's rejections and adaptations are
    /// counted here, once, as `pump` counts them.
    private func prepareNext(after sent: Sent) {
        prepared = nil
        // `sent` follows the requests on the wire before it, the first of them at the window's front.
        guard lastReplyAccepted, !refusingEverything, !sent.isHalf, window.refused.isEmpty, window.halfStarts.isEmpty,
            let front = inFlight.first, window.ranges.first?.lowerBound == front.sent.range.lowerBound
        else { return }
        let limits = encoder.limits
        let wanted = min(requestSize.next, fitting(limits))
        func nextSpan() -> Range<Int>? {
            guard let index = window.ranges.firstIndex(where: { $0.contains(sent.range.lowerBound) }) else {
                return nil
            }
            let span = window.ranges[index]
            if sent.range.upperBound < span.upperBound { return sent.range.upperBound..<span.upperBound }
            return index + 1 < window.ranges.count ? window.ranges[index + 1] : nil
        }
        var span = nextSpan()
        if span.map({ $0.upperBound == window.end && $0.count < wanted }) ?? true, loadNextBatch() {
            span = nextSpan()
        }
        guard let span, !span.isEmpty, window.halfStarts.isEmpty else { return }
        let range = span.lowerBound..<(span.lowerBound + min(span.count, wanted))
        let positions = Array(range)
        let events = positions.map { window[$0] }
        guard range.count == 1 || encoder.requestEntryCount(of: events) <= limits.maximumEvents else { return }
        let encoded = encoder.encode(events, context: BatchContext(sentAt: clock.now()))
        if !positions.allSatisfy(window.encoded.contains) {
            note(encoded)
            window.encoded.formUnion(positions)
        }
        guard let payload = encoded.request else { return }
        let onTheWire = compressed(payload)
        let size = limits.measure == .wire ? onTheWire.body.count : payload.body.count
        guard range.count == 1 || size <= limits.maximumBytes else { return }
        prepared = Prepared(
            request: onTheWire, range: range, positions: positions,
            eventCount: events.count - encoded.rejected.count - encoded.expired.count, size: size,
            generation: generation, encoderVersion: encoderVersion)
    }

    /// What a request carried, for its reply.
    private struct Sent {
        let range: Range<Int>
        let positions: [Int]
        /// The events in it (the encoder's rejections left out).
        let eventCount: Int
        let generation: Int
        let encoderVersion: Int
        /// One of the two halves of a refused request: accepted, it gives its split back.
        let isHalf: Bool
    }

    private func handle(_ result: Result<HTTPResponse, any Error>, of sent: Sent) {
        lastReplyAccepted = false
        let range = sent.range
        guard sent.generation == generation, window.ranges.first?.lowerBound == range.lowerBound else { return }
        let response: HTTPResponse
        switch result {
        case .failure(let error):
            // Offline: the request waits for the network, not for a backoff.
            guard online else { return log("network error while offline: \(error.localizedDescription); waiting") }
            return scheduleRetry(after: nil, reason: "network error: \(error.localizedDescription)")
        case .success(let value):
            response = value
        }
        if (200..<300).contains(response.status) { return accepted(response, of: sent) }
        if encoder.refusesConfiguration(response) {
            // A refusal of the encoder replaced since the request left says nothing of the new one.
            guard sent.encoderVersion == encoderVersion else { return }
            return stopForConfiguration(response)
        }
        if response.status == 413, range.count > 1 {
            requestSize.refused(range.count)
            return log(
                "HTTP 413: the server refused \(range.count) events in one request; sending \(requestSize.next) at most"
            )
        }
        if encoder.retries(response) {
            // The vendor's own pacing (Amplitude's throttled devices) wins over Retry-After: the
            // same request is never sent again before the wait its reply asks for.
            let paced = encoder.retryDelay(after: response, of: sent.positions.map { window[$0] })
            let retryAfter = paced ?? RetryPolicy.retryAfter(response.headers["retry-after"], now: clock.now())
            return scheduleRetry(
                after: retryAfter,
                reason: "HTTP \(response.status)" + (paced == nil ? "" : ": \(Self.message(of: response))"))
        }
        attempt = 0
        let message = Self.message(of: response)
        if dropNamedEvents(in: response, positions: sent.positions, message: message) { return }
        if sent.positions.count > 1 {
            return split(range, positions: sent.positions, status: response.status, message: message)
        }
        let event = window[sent.positions[0]].event
        advance(past: range)
        counters.withLock { $0.refusedEvents += sent.eventCount }
        problem(
            "HTTP \(response.status): the server refused \(event.name) (id \(event.id.uuidString)); dropped. "
                + "Server said: \(message)")
    }

    /// A 2xx: the events are done with; those a partial success names as refused are counted
    /// as refused (and reported), the others as delivered.
    private func accepted(_ response: HTTPResponse, of sent: Sent) {
        attempt = 0
        lastReplyAccepted = true
        if refusingEverything {
            refusingEverything = false
            window.splitsLeft = max(
                window.splitsLeft, RefusalIsolation.splitBudget(forBatchOf: window.events.count))
        }
        let resumed = counters.withLock { counters -> String? in
            defer { counters.refusedConfiguration = nil }
            return counters.refusedConfiguration
        }
        if resumed != nil {
            log("HTTP \(response.status): the server accepts the configuration again; sending resumes")
        }
        // Isolation that works pays for itself: only splits with both halves refused spend the budget.
        if sent.isHalf { window.splitsLeft += RefusalIsolation.refundPerAcceptedHalf }
        advance(past: sent.range)
        requestSize.accepted(sent.range.count)
        var refused = 0
        if let partial = encoder.partialRefusal(in: response, ofEventCount: sent.eventCount) {
            refused = min(max(partial.refused, 0), sent.eventCount)
            problem(
                refused == 0
                    ? "HTTP \(response.status): the server accepted all \(sent.eventCount) events of the request. "
                        + partial.message
                    : "HTTP \(response.status): the server accepted the request but refused \(refused) of its "
                        + "\(sent.eventCount) events (it does not say which); counted as refused. \(partial.message)")
        }
        counters.withLock {
            $0.delivered += sent.eventCount - refused
            $0.refusedEvents += refused
        }
    }

    /// The server refused the key, token or endpoint, not the events: nothing is dropped. Sending
    /// stops until ``replaceEncoder(_:)`` or, to ask the server again, the policy's
    /// `configurationRetryDelay`; reported once per episode, however often the server repeats it.
    private func stopForConfiguration(_ response: HTTPResponse) {
        attempt = 0
        let report =
            "HTTP \(response.status): the server refused the tracker's configuration (its key, token or "
            + "endpoint \(encoder.endpoint.absoluteString)), not the events: sending stopped, the "
            + "\(diskQueue.queuedEvents) events queued are kept (within the queue's cap). It resumes with a new "
            + "encoder (HTTPTracker.updateEncoder(_:)) or, asking again, in "
            + "\(String(format: "%.0f", policy.configurationRetryDelay)) s. Server said: \(Self.message(of: response))"
        let first = counters.withLock { counters -> Bool in
            defer { counters.refusedConfiguration = counters.refusedConfiguration ?? report }
            return counters.refusedConfiguration == nil
        }
        if first {
            problem(report)
            // Outside every lock: the aggregator's handler is the app's code.
            if let report = reportsTo.withLock({ $0 }) { report(Self.refusalSummary(response, encoder: encoder)) }
        } else {
            log("HTTP \(response.status): the server still refuses the configuration; asking again later")
        }
        retry = clock.schedule(after: policy.configurationRetryDelay) { [weak self] in
            guard let self else { return }
            self.queue.async {
                self.retry = nil
                self.pump()
            }
        }
    }

    /// A refused configuration, in a line for the aggregator's problem handler and the trail.
    static func refusalSummary(_ response: HTTPResponse, encoder: any BatchEncoder) -> String {
        "HTTP \(response.status): the server refused the tracker's key, token or endpoint "
            + "(\(encoder.endpoint.absoluteString)); sending stopped, the queue is kept. Server said: \(message(of: response))"
    }

    /// The start of a reply's body, as text for a report; says so when there is none.
    static func message(of response: HTTPResponse) -> String {
        let text = String(decoding: response.body.prefix(500), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "(nothing: the reply has no body)" : text
    }

    /// Sends the two halves of a refused request in its place, so that the server's refusal
    /// costs only the events it refuses; past the batch's budget, drops what is left of the batch.
    private func split(_ range: Range<Int>, positions: [Int], status: Int, message: String) {
        guard window.splitsLeft >= 2 else { return dropRestOfBatch(status: status, message: message) }
        window.splitsLeft -= 2
        let halves = RefusalIsolation.halves(of: range, positions: positions, span: window.ranges[0])
        window.halfStarts.formUnion(halves.prefix(2).map(\.lowerBound))
        window.ranges.replaceSubrange(0..<1, with: halves)
    }

    private func dropRestOfBatch(status: Int, message: String) {
        let remaining = window.ranges.reduce(0) { $0 + window.positions(in: $1).count }
        window.ranges = []
        reportProgress()
        counters.withLock { $0.rejectedByServer += remaining }
        guard !refusingEverything else { return }
        refusingEverything = true
        problem(
            "HTTP \(status): the server refused every part of a batch it was sent in (the split budget of "
                + "this batch is spent); dropped the \(remaining) events left in it. Until a request is "
                + "accepted, each refused batch is dropped after one split, without a new report. "
                + "Server said: \(message)")
    }

    /// When the encoder reads from the reply which of the sent events the server refused, drops
    /// those and leaves the rest to be sent again, without splitting. Positions the request did
    /// not have are reported and ignored; when the reply names none of the sent events, the
    /// request is split as if it named nothing.
    private func dropNamedEvents(in response: HTTPResponse, positions: [Int], message: String) -> Bool {
        let sent = positions.map { window[$0] }
        guard let allNamed = encoder.refusedEvents(in: response, of: sent) else { return false }
        let outside = allNamed.filter { !positions.indices.contains($0) }.sorted()
        if !outside.isEmpty {
            let shown = outside.prefix(10).map(String.init).joined(separator: ", ")
            problem(
                "HTTP \(response.status): the reply names events at positions the request did not have "
                    + "(\(shown)\(outside.count > 10 ? ", …" : ""); it had \(positions.count), from 0): ignored those "
                    + "positions, dropped nothing for them. Server said: \(message)")
        }
        let named = allNamed.filter(positions.indices.contains)
        guard !named.isEmpty else { return false }
        window.refused.formUnion(named.map { positions[$0] })
        counters.withLock { $0.refusedEvents += named.count }
        let names = Set(named.map { sent[$0].event.name.rawValue }).sorted().joined(separator: ", ")
        problem(
            "HTTP \(response.status): the server refused \(named.count) of \(positions.count) events (\(names)); "
                + "dropped those\(named.count < positions.count ? ", sending the rest again" : ""). "
                + "Server said: \(message)")
        return true
    }

    private func scheduleRetry(after retryAfter: TimeInterval?, reason: String) {
        attempt += 1
        let delay = policy.delay(forAttempt: attempt, retryAfter: retryAfter)
        counters.withLock { $0.retries += 1 }
        log("\(reason); retry \(attempt) in \(String(format: "%.1f", delay)) s")
        retry = clock.schedule(after: delay) { [weak self] in
            guard let self else { return }
            self.queue.async {
                self.retry = nil
                self.pump()
            }
        }
    }

    private func problem(_ message: String) {
        log(message)
        counters.withLock {
            $0.recentProblems.append(message)
            if $0.recentProblems.count > 20 { $0.recentProblems.removeFirst() }
        }
    }
}
