import Dispatch
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Sends sealed batches, oldest first, one request at a time, on its own serial queue.
///
/// Each request is filled up to the encoder's limits: as many events as fit in
/// `limits.maximumBytes` (measured before or after gzip, as `limits.measure` says), at most
/// `limits.maximumEvents` entries as the encoder counts them (`requestEntryCount(of:)`). The
/// number to try comes from the bytes per event of the previous request; a body over the limit
/// is cut in proportion and encoded again.
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

    private struct Current {
        let batch: DiskQueue.Batch
        let events: [QueuedEvent]
        /// Events still to send, in spans of one user; each request takes the start of the
        /// first span, as many events as ``RequestSizeLearner`` allows.
        var ranges: [Range<Int>]
        /// Events the server refused by name; left out when their range is sent again.
        var refused: Set<Int> = []
        /// Events whose encoding was counted: a retry, a halved range or a resend encodes
        /// them again, and the encoder's rejections and adaptations count once.
        var encoded: Set<Int> = []
        /// Requests still allowed for splitting refused requests of this batch.
        var splitsLeft: Int
        /// Where the halves of refused requests start: sending one is an extra request.
        var halfStarts: Set<Int> = []

        /// The events of `range` still to be sent.
        func positions(in range: Range<Int>) -> [Int] {
            refused.isEmpty ? Array(range) : range.filter { !refused.contains($0) }
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
    /// Checks each body beside it (GA4's validation server), when the encoder asks for it.
    private var validator: (any RequestValidator)?
    /// Whether the next events too old for the vendor start an episode (and get a report).
    private var reportsExpired = true
    /// Fills in the records of queue version 1, which kept no anonymous id.
    private let legacyAnonymousID: String
    private let log: @Sendable (String) -> Void

    private var current: Current?
    private var requestInFlight = false
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
        policy: RetryPolicy, timeout: TimeInterval, compressesBodies: Bool, legacyAnonymousID: String,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.compressesBodies = compressesBodies
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
            current = nil
            retry?.cancel()
            retry = nil
            attempt = 0
            flushRequested = false
        }
    }

    /// Nothing loaded, sending or waiting to retry.
    var isIdle: Bool { queue.sync { current == nil && !requestInFlight && retry == nil } }

    /// What the uploader is doing, for tests that drive its clock: a request on the wire, a
    /// retry waiting for the clock, or neither (idle, or waiting for consent or the network).
    var activity: (requestInFlight: Bool, waitingToRetry: Bool) { queue.sync { (requestInFlight, retry != nil) } }

    // MARK: On the queue

    private func pump() {
        guard gate.withLock({ $0.isOpen }), online, !requestInFlight, retry == nil else { return }
        while true {
            if current == nil {
                guard let batch = diskQueue.nextBatch(sealingOpenSegmentWithAtLeast: flushRequested ? 1 : Int.max)
                else {
                    flushRequested = false
                    sendingWanted = false
                    return
                }
                // `nil`: the file cannot be read; the queue left it on disk for the next start.
                guard let read = diskQueue.read(batch) else { continue }
                let events = read.map { $0.fillingLegacyIdentity(anonymousID: legacyAnonymousID) }
                current = Current(
                    batch: batch, events: events, ranges: requestRanges(events),
                    splitsLeft: refusingEverything ? 2 : RefusalIsolation.splitBudget(forBatchOf: events.count))
            }
            guard let span = current!.ranges.first else {
                diskQueue.remove(current!.batch)
                current = nil
                continue
            }
            // The next request: as many events as the server is known to take, and as the
            // previous request's bytes per event say fit in the byte limit.
            let limits = encoder.limits
            var count = min(span.count, requestSize.next, fitting(limits))
            while true {
                let range = span.lowerBound..<(span.lowerBound + count)
                let positions = current!.positions(in: range)
                guard !positions.isEmpty else {
                    advance(past: range)
                    break
                }
                let events = positions.map { current!.events[$0] }
                // The vendor's count (Amplitude's product events, GA4's campaign_details) stays
                // within its limit: fewer events, by the excess, until it fits.
                let entries = encoder.requestEntryCount(of: events)
                if entries > limits.maximumEvents, range.count > 1 {
                    count = max(1, range.count - (entries - limits.maximumEvents))
                    continue
                }
                let encoded = encoder.encode(
                    events, context: BatchContext(sentAt: clock.now()))
                if !positions.allSatisfy(current!.encoded.contains) {
                    note(encoded)
                    current!.encoded.formUnion(positions)
                }
                guard let payload = encoded.request else {
                    advance(past: range)
                    break
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
                    continue
                }
                bytesPerEvent = Double(size) / Double(positions.count)
                return send(
                    onTheWire ?? compressed(payload), range: range, positions: positions,
                    eventCount: events.count - encoded.rejected.count - encoded.expired.count)
            }
        }
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
        guard compressesBodies, encoder.acceptsGzipBodies, let body = GzipBody.compress(request.body) else {
            return request
        }
        var request = request
        request.body = body
        request.headers["Content-Encoding"] = "gzip"
        return request
    }

    /// The first range's events up to `range.upperBound` are done with (sent, refused or dropped).
    private func advance(past range: Range<Int>) {
        guard let span = current!.ranges.first else { return }
        if range.upperBound >= span.upperBound {
            current!.ranges.removeFirst()
        } else {
            current!.ranges[0] = range.upperBound..<span.upperBound
        }
    }

    /// Spans of at most the encoder's maximum that never mix events the encoder keeps apart (GA4: one user).
    private func requestRanges(_ events: [QueuedEvent]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        let keys = events.map(encoder.requestKey(for:))
        for index in Array(events.indices.dropFirst()) + [events.count] {
            if index == events.count || keys[index] != keys[start]
                || index - start >= encoder.limits.maximumEvents
            {
                if index > start { ranges.append(start..<index) }
                start = index
            }
        }
        return ranges
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
        requestInFlight = true
        let isHalf = current!.halfStarts.remove(range.lowerBound) != nil
        counters.withLock {
            $0.requests += 1
            if isHalf { $0.splitRequests += 1 }
        }
        let sent = Sent(
            range: range, positions: positions, eventCount: eventCount, generation: generation,
            encoderVersion: encoderVersion, isHalf: isHalf)
        requestsOnTheWire.enter()
        transport.send(request, timeout: timeout) { result in
            self.requestsOnTheWire.leave()
            self.queue.async {
                self.requestInFlight = false
                self.handle(result, of: sent)
                self.pump()
            }
        }
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
        let range = sent.range
        guard sent.generation == generation, current?.ranges.first?.lowerBound == range.lowerBound else { return }
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
            let paced = encoder.retryDelay(after: response, of: sent.positions.map { current!.events[$0] })
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
        advance(past: range)
        counters.withLock { $0.refusedEvents += sent.eventCount }
        let event = current!.events[sent.positions[0]].event
        problem(
            "HTTP \(response.status): the server refused \(event.name) (id \(event.id.uuidString)); dropped. "
                + "Server said: \(message)")
    }

    /// A 2xx: the events are done with; those a partial success names as refused are counted
    /// as refused (and reported), the others as delivered.
    private func accepted(_ response: HTTPResponse, of sent: Sent) {
        attempt = 0
        if refusingEverything {
            refusingEverything = false
            current!.splitsLeft = max(
                current!.splitsLeft, RefusalIsolation.splitBudget(forBatchOf: current!.events.count))
        }
        let resumed = counters.withLock { counters -> String? in
            defer { counters.refusedConfiguration = nil }
            return counters.refusedConfiguration
        }
        if resumed != nil {
            log("HTTP \(response.status): the server accepts the configuration again; sending resumes")
        }
        // Isolation that works pays for itself: only splits with both halves refused spend the budget.
        if sent.isHalf { current!.splitsLeft += RefusalIsolation.refundPerAcceptedHalf }
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

    /// The start of a reply's body, as text for a report; says so when there is none.
    static func message(of response: HTTPResponse) -> String {
        let text = String(decoding: response.body.prefix(500), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "(nothing: the reply has no body)" : text
    }

    /// Sends the two halves of a refused request in its place, so that the server's refusal
    /// costs only the events it refuses; past the batch's budget, drops what is left of the batch.
    private func split(_ range: Range<Int>, positions: [Int], status: Int, message: String) {
        guard current!.splitsLeft >= 2 else { return dropRestOfBatch(status: status, message: message) }
        current!.splitsLeft -= 2
        let halves = RefusalIsolation.halves(of: range, positions: positions, span: current!.ranges[0])
        current!.halfStarts.formUnion(halves.prefix(2).map(\.lowerBound))
        current!.ranges.replaceSubrange(0..<1, with: halves)
    }

    private func dropRestOfBatch(status: Int, message: String) {
        let remaining = current!.ranges.reduce(0) { $0 + current!.positions(in: $1).count }
        current!.ranges = []
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
        let sent = positions.map { current!.events[$0] }
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
        current!.refused.formUnion(named.map { positions[$0] })
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
