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

/// The durable queue of one tracker: append-only segment files in one directory.
///
/// - Events are appended to `<sequence>.open` with one `write(2)` each, so an event is in the
///   operating system's hands (and survives the process being killed) when ``append(_:)``
///   returns. ``sync()`` also forces it to storage.
/// - A segment is sealed by renaming it to `<sequence>-<count>.batch`; sealed files never
///   change and are deleted once every event in them was sent or dropped.
/// - The queue is one line of events, oldest first, whose front the uploader and the cap move:
///   the uploader past the events a server accepted (or refused), the cap past the oldest
///   events when there are more than ``Limits/maximumEvents`` (see ``enforceCap``). Where the
///   front is inside the oldest batch, the small file `front` says so (`QueueFiles.frontName`),
///   so that a restart sends neither what was sent nor what the cap dropped.
/// - On start, `.open` files left by a previous process join the sealed batches as they are,
///   counted from their frame headers; they are checked when read for sending, where a torn
///   last record is skipped (one whose start is no frame is repaired and sealed at start).
///   Damaged records are skipped, counted and logged when read; the records after them are
///   still read.
/// - Nothing in a file name is trusted: a count in a name is used for the cap only when the
///   file's size makes it possible, and is replaced by the real count when the file is read.
///   A file that cannot be read (or is no regular file) is counted, logged and left on disk
///   for the next start; an empty one is removed and counted.
/// - Only a small index (one entry per sealed file) stays in memory.
/// - A directory that may not be opened yet (`PrivateFiles.isNotPermittedYet`: before the
///   device's first unlock on iOS, or modes that forbid it) is not an error: events wait in
///   memory, in order (at most ``maximumEventsInMemory``, the oldest dropped and counted), and
///   every append, flush and seal tries to open it again: it is claimed, what a previous run
///   left is recovered, and what waited is written first.
/// - At the cap, an append either drops the oldest events (the default) or, for a tracker
///   whose configuration says so (`HTTPTracker.QueueFullBehavior.wait(atMostSeconds:)`), is
///   refused (``Appended/full``) so that its caller waits for room (``waitForRoom(frameBytes:seconds:)``)
///   and appends again: the uploader makes room as requests are accepted. A wait that runs out
///   starts an episode of shedding (the oldest dropped at each append, as by default) that ends
///   when a request is accepted; ``stopWaiting()`` (shutdown) ends every wait and writes what
///   comes over the cap rather than dropping it.
/// - The log handler is never called while the queue's lock is held.
final class DiskQueue: @unchecked Sendable {
    // @unchecked: all mutable state is in `state`, behind its lock.

    struct Limits: Sendable {
        var eventsPerBatch: Int
        var bytesPerBatch: Int
        var maximumEvents: Int
        var maximumBytes: Int
    }

    struct Batch: Sendable, Equatable {
        let sequence: UInt64
        /// Events in the file: from its name when plausible, else counted from its content;
        /// corrected when it is read.
        var count: Int
        let bytes: Int
        let url: URL
        /// Events at the start of the file that are done with (sent, or dropped at the cap): the
        /// front of the queue is at this record while the batch is the oldest.
        var skip = 0

        /// The events of the batch still queued.
        var remaining: Int { max(0, count - skip) }
        /// The position just after its last event.
        var end: Position { Position(sequence: sequence, record: count) }
    }

    /// An event's place in the queue: its batch and its record in that batch's file (counting
    /// the good records, as ``read(_:)`` returns them).
    struct Position: Sendable, Equatable, Comparable {
        let sequence: UInt64
        let record: Int

        static func < (lhs: Position, rhs: Position) -> Bool {
            (lhs.sequence, lhs.record) < (rhs.sequence, rhs.record)
        }
    }

    struct Counters: Sendable, Equatable {
        /// Dropped to keep to the cap on disk, or to ``DiskQueue/maximumEventsInMemory`` while the
        /// directory could not be opened yet.
        var droppedAtCap = 0
        var discarded = 0
        var corruptRecords = 0
        var damagedBytes = 0
        var tornRecordsRepaired = 0
        var unreadableFiles = 0
        var emptyFilesRemoved = 0
        var unrecognizedFiles = 0
        /// Appends that found the queue at its cap and waited for room.
        var waitedForRoom = 0
        /// Waits for room that ran out: each began an episode of dropping the oldest.
        var waitsTimedOut = 0
        /// Events written over the cap after ``DiskQueue/stopWaiting()`` (at shutdown) instead
        /// of waiting or dropping.
        var writtenOverCap = 0
    }

    /// What ``DiskQueue/append(_:waitsForRoom:)`` did.
    enum Appended: Equatable {
        /// Written (or held in memory while the directory cannot be opened yet): how many events
        /// are in the open segment afterwards, and whether a segment was sealed.
        case written(openCount: Int, sealed: Bool)
        /// Not written: the queue is at its cap and the caller waits for room; the event's
        /// record takes `frameBytes`.
        case full(frameBytes: Int)
    }

    struct WriteError: Error, CustomStringConvertible {
        let path: String
        let code: Int32
        var description: String { "cannot write the event queue at \(path): \(String(cString: strerror(code)))" }
    }

    struct EventTooLarge: Error, CustomStringConvertible {
        let bytes: Int
        var description: String {
            "the event takes \(bytes) bytes; the queue takes at most \(RecordFraming.maximumPayloadSize)"
        }
    }

    /// The most events held in memory while the directory cannot be opened yet.
    static let maximumEventsInMemory = 10_000

    let directory: URL
    let limits: Limits
    private let log: @Sendable (String) -> Void
    /// Claims what the queue needs before it is opened (the tracker's directory and its lock),
    /// under the queue's lock; throws to say the queue cannot be opened (now).
    private let claim: @Sendable () throws -> Void
    private let state: LockedValue<State>
    /// Signalled (broadcast) whenever room may have appeared: events consumed or dropped, the
    /// queue discarded, waiting stopped. Taken before `state` by a waiter, never while `state`
    /// is held by a signaller.
    private let room = NSCondition()

    private struct State {
        /// Whether the directory was opened: claimed, created, what a previous run left recovered.
        var isOpen = false
        /// Events appended while it could not be opened, in order.
        var waiting: [QueuedEvent] = []
        /// ``DiskQueue/discardAll()`` was called before it could be opened: what a previous run
        /// left is deleted when it is.
        var discardsOnOpen = false
        /// What the last failed opening said, so that an episode is logged once.
        var openingProblem: String?
        var descriptor: Int32 = -1
        var openSequence: UInt64 = 0
        var openCount = 0
        var openBytes = 0
        var sealed: [Batch] = []
        var sealedEvents = 0
        var sealedBytes = 0
        var nextSequence: UInt64 = 1
        /// Requests of the front's events on the wire: the cap waits until every one is answered.
        var requestsSending = 0
        /// The cap dropped events since the last time events were sent: logged once.
        var overflowing = false
        /// Whether the front file says the front is inside the oldest batch.
        var frontWritten = false
        /// A wait for room ran out and no request was accepted since: appends that would wait
        /// drop the oldest instead (the collector is down or too slow).
        var shedding = false
        /// ``DiskQueue/stopWaiting()`` was called: appends that would wait are written over the
        /// cap, and the cap drops nothing any more.
        var stoppedWaiting = false
        var counters = Counters()
        var payload: [UInt8] = []
        var frame: [UInt8] = []
        /// The context of the last event encoded, and its bytes.
        let contextCache = EventRecordCodec.ContextCache()
    }

    /// A queue in `directory`, opened now when it can be.
    ///
    /// - Throws: what opening it threw, except that it may not be opened *yet*.
    init(
        directory: URL, limits: Limits, log: @escaping @Sendable (String) -> Void,
        claim: @escaping @Sendable () throws -> Void = {}
    ) throws {
        self.directory = directory
        self.limits = limits
        self.log = log
        self.claim = claim
        state = LockedValue(State())
        try withState { state, notes in
            switch open(&state, notes: &notes) {
            case .opened: break
            case .notYet(let reason): notes.append(Self.waitingNote(reason))
            case .failed(let error): throw error
            }
        }
    }

    enum Opening {
        case opened
        /// It may not be opened yet: in words.
        case notYet(String)
        case failed(any Error)
    }

    /// Opens the queue when it is not open: claims it, creates its directory, recovers what a
    /// previous run left (deleted at once after a ``discardAll()`` made meanwhile) and writes
    /// what waited in memory.
    private func open(_ state: inout State, notes: inout [String]) -> Opening {
        if state.isOpen { return .opened }
        do {
            try claim()
            try PrivateFiles.createDirectory(at: directory)
        } catch {
            if let code = Self.errorNumber(of: error), PrivateFiles.isNotPermittedYet(code) {
                return .notYet("\(error)")
            }
            return .failed(error)
        }
        PrivateFiles.narrow(directory.path)  // the queue's own folder, 0755 if an older version made it
        // Queued events belong to this device: restored onto another, they would be sent twice.
        PrivateFiles.excludeFromBackup(directory)
        // The recovery's notes are logged with the others, after the lock is released.
        let recoveryNotes = LockedValue<[String]>([])
        let recovered = QueueRecovery(
            directory: directory, limits: limits, log: { note in recoveryNotes.withLock { $0.append(note) } }
        ).run()
        notes += recoveryNotes.withLock { $0 }
        state.isOpen = true
        // A batch the previous run was done with (the front at its end) but had not deleted yet
        // goes now; one that only seems empty is read, and its damage counted, when sent.
        let done = { (batch: Batch) in batch.skip > 0 && batch.remaining == 0 }
        for batch in recovered.sealed where done(batch) { unlink(batch.url.path) }
        state.sealed = recovered.sealed.filter { !done($0) }
        state.sealedEvents = state.sealed.reduce(0) { $0 + $1.remaining }
        state.sealedBytes = state.sealed.reduce(0) { $0 + $1.bytes }
        state.frontWritten = true  // whatever a previous run left is made right by the next move
        writeFront(&state)
        state.nextSequence = recovered.nextSequence
        state.counters.add(recovered.counters)
        if state.openingProblem != nil {
            notes.append("\(directory.path) can be opened now; \(state.waiting.count) events waited in memory")
            state.openingProblem = nil
        }
        if state.discardsOnOpen {
            state.discardsOnOpen = false
            discardOnDisk(&state)
        }
        return .opened
    }

    /// The system's error number behind a failure to open: a folder or a lock that could not
    /// be made.
    private static func errorNumber(of error: any Error) -> Int32? {
        switch error {
        case let error as PrivateFiles.DirectoryError: return error.code
        case let error as DirectoryLock.Failed: return error.code
        default: return nil
        }
    }

    private static func waitingNote(_ reason: String) -> String {
        "\(reason): the queue cannot be opened yet (before the device's first unlock, or its modes forbid it); "
            + "events wait in memory (at most \(maximumEventsInMemory)) and are written once it can be"
    }

    /// Opens the queue when it is not open; true when it is. A failure is logged once per episode.
    private func openIfPossible(_ state: inout State, notes: inout [String]) -> Bool {
        let problem: String
        switch open(&state, notes: &notes) {
        case .opened: return true
        case .notYet(let reason): problem = Self.waitingNote(reason)
        case .failed(let error): problem = "cannot open the queue at \(directory.path): \(error); events wait in memory"
        }
        if state.openingProblem != problem { notes.append(problem) }
        state.openingProblem = problem
        return false
    }

    deinit {
        state.withLock { state in
            if state.descriptor >= 0 { close(state.descriptor) }
        }
    }

    /// Runs `body` under the lock and logs what it noted after the lock is released: a log
    /// handler may read the tracker's diagnostics, which takes this lock again.
    private func withState<Result>(_ body: (inout State, inout [String]) throws -> Result) rethrows -> Result {
        var notes: [String] = []
        defer { notes.forEach(log) }
        return try state.withLock { try body(&$0, &notes) }
    }

    // MARK: Appending

    /// Writes one event (after those that waited in memory); returns how many events are in the
    /// open segment afterwards and whether a segment was sealed. While the queue cannot be
    /// opened, the event waits in memory. With `waitsForRoom`, an event that would take the
    /// queue past its cap is not written (``Appended/full``): the caller waits for room and
    /// appends again; unless a wait ran out since the last accepted request (then the oldest
    /// are dropped, as without it), or waiting was stopped (then it is written over the cap).
    func append(_ queued: QueuedEvent, waitsForRoom: Bool = false) throws -> Appended {
        try withState { state, notes in
            guard openIfPossible(&state, notes: &notes) else {
                try encode(queued, &state)  // an event too large is refused now, as it would be on disk
                state.waiting.append(queued)
                if state.waiting.count > Self.maximumEventsInMemory {
                    state.waiting.removeFirst()
                    state.counters.droppedAtCap += 1
                }
                return .written(openCount: 0, sealed: false)
            }
            try writeWaiting(&state, notes: &notes)
            try encode(queued, &state)
            if waitsForRoom, !hasRoom(state, frameBytes: state.frame.count) {
                if state.stoppedWaiting {
                    state.counters.writtenOverCap += 1
                } else if !state.shedding {
                    return .full(frameBytes: state.frame.count)
                }
            }
            return try writeFrame(&state, notes: &notes)
        }
    }

    /// Whether one more record of `frameBytes` keeps the queue within both caps.
    private func hasRoom(_ state: State, frameBytes: Int) -> Bool {
        state.sealedEvents + state.openCount < limits.maximumEvents
            && state.sealedBytes + state.openBytes + frameBytes <= limits.maximumBytes
    }

    /// What ``waitForRoom(frameBytes:seconds:)`` found.
    enum RoomWait: Equatable {
        /// There is room (there was at once, or the uploader made it).
        case room
        /// ``stopWaiting()`` was called: append over the cap.
        case stopped
        /// None came in time: until a request is accepted, appends drop the oldest.
        case timedOut
    }

    /// Blocks until a record of `frameBytes` fits within the caps, ``stopWaiting()`` is called, or
    /// `seconds` pass (then the queue sheds: appends drop the oldest until events are consumed).
    /// Counted in ``Counters/waitedForRoom`` and ``Counters/waitsTimedOut``; a timeout is
    /// logged once per episode.
    func waitForRoom(frameBytes: Int, seconds: TimeInterval) -> RoomWait {
        let deadline = Date().addingTimeInterval(seconds)
        let found = { () -> RoomWait? in
            self.state.withLock { state in
                if state.stoppedWaiting { return .stopped }
                if state.shedding || !state.isOpen || self.hasRoom(state, frameBytes: frameBytes) { return .room }
                return nil
            }
        }
        room.lock()
        var outcome = found()
        while outcome == nil {
            let signalled = room.wait(until: deadline)
            outcome = found() ?? (signalled ? nil : .timedOut)
        }
        room.unlock()
        let timedOut = outcome == .timedOut
        let first = withState { state, _ -> Bool in
            state.counters.waitedForRoom += 1
            guard timedOut else { return false }
            state.counters.waitsTimedOut += 1
            defer { state.shedding = true }
            return !state.shedding
        }
        if first {
            log(
                "the queue stayed at its cap (\(limits.maximumEvents) events, \(limits.maximumBytes) bytes) for "
                    + "\(String(format: "%.0f", seconds)) s: the server does not take events as fast as they come, or "
                    + "cannot be reached. The oldest are dropped as new ones come (counted in droppedAtCap) until a "
                    + "request is accepted; then appends wait for room again")
        }
        return outcome ?? .room
    }

    /// Ends every wait for room, now and later (the tracker is shutting down): an append that
    /// would wait is written over the cap (counted in ``Counters/writtenOverCap``), and the cap
    /// drops nothing more, so that every event handed over before the shutdown ends is on disk.
    func stopWaiting() {
        state.withLock { $0.stoppedWaiting = true }
        signalRoom()
    }

    /// Wakes the appends waiting for room, to look again. Never called with `state` held.
    private func signalRoom() {
        room.lock()
        room.broadcast()
        room.unlock()
    }

    /// Writes what waited in memory, in order; on a failure, what is left waits on.
    private func writeWaiting(_ state: inout State, notes: inout [String]) throws {
        while let queued = state.waiting.first {
            do {
                _ = try write(queued, &state, notes: &notes)
            } catch is EventTooLarge {
                // Checked when it was held; a newer codec could only make it smaller.
            }
            state.waiting.removeFirst()
        }
    }

    /// Encodes `queued` into the state's frame; throws when it is too large for a record.
    private func encode(_ queued: QueuedEvent, _ state: inout State) throws {
        state.payload.removeAll(keepingCapacity: true)
        EventRecordCodec.encode(queued, into: &state.payload, contextCache: state.contextCache)
        guard state.payload.count <= RecordFraming.maximumPayloadSize else {
            throw EventTooLarge(bytes: state.payload.count)
        }
        state.frame.removeAll(keepingCapacity: true)
        RecordFraming.appendFrame(payload: state.payload[...], to: &state.frame)
    }

    private func write(_ queued: QueuedEvent, _ state: inout State, notes: inout [String]) throws -> Appended {
        try encode(queued, &state)
        return try writeFrame(&state, notes: &notes)
    }

    /// Writes the record `encode` left in the state's frame.
    private func writeFrame(_ state: inout State, notes: inout [String]) throws -> Appended {
        if state.descriptor < 0 { try openSegment(&state) }
        try writeAll(state.frame, state: &state)
        state.openCount += 1
        state.openBytes += state.frame.count
        var sealed = false
        if state.openCount >= limits.eventsPerBatch || state.openBytes >= limits.bytesPerBatch {
            seal(&state, durable: false, notes: &notes)
            sealed = true
        }
        enforceCap(&state, notes: &notes)
        return .written(openCount: state.openCount, sealed: sealed)
    }

    private func openSegment(_ state: inout State) throws {
        let sequence = state.nextSequence
        let path = directory.appendingPathComponent(QueueFiles.openName(sequence)).path
        let descriptor = PrivateFiles.openFile(path, flags: O_WRONLY | O_APPEND)
        guard descriptor >= 0 else { throw WriteError(path: path, code: errno) }
        state.nextSequence += 1
        state.descriptor = descriptor
        state.openSequence = sequence
        state.openCount = 0
        state.openBytes = 0
    }

    private func writeAll(_ bytes: [UInt8], state: inout State) throws {
        let descriptor = state.descriptor
        let start = state.openBytes
        if let code = MeasurementEventsAggregator.writeAll(bytes, to: descriptor) {
            // Cut a partly written record off, so the file stays a sequence of records.
            _ = ftruncate(descriptor, off_t(start))
            throw WriteError(path: directory.path, code: code)
        }
    }

    // MARK: Sealing

    /// Seals the open segment, if it has events (opening the queue first when it can be, with
    /// what waited in memory written). `durable` forces it to storage first.
    func sealOpenSegment(durable: Bool) {
        withState { state, notes in
            guard openIfPossible(&state, notes: &notes) else { return }
            do {
                try writeWaiting(&state, notes: &notes)
            } catch {
                notes.append("\(error); \(state.waiting.count) events wait in memory")
            }
            seal(&state, durable: durable, notes: &notes)
        }
    }

    private func seal(_ state: inout State, durable: Bool, notes: inout [String]) {
        guard state.descriptor >= 0 else { return }
        if durable { _ = synchronizeToStorage(state.descriptor) }
        close(state.descriptor)
        state.descriptor = -1
        let from = directory.appendingPathComponent(QueueFiles.openName(state.openSequence))
        guard state.openCount > 0 else {
            unlink(from.path)
            return
        }
        let to = directory.appendingPathComponent(QueueFiles.batchName(state.openSequence, count: state.openCount))
        if rename(from.path, to.path) != 0 {
            notes.append(
                "cannot seal \(from.lastPathComponent): \(String(cString: strerror(errno))); it is sent after a restart"
            )
            return
        }
        state.sealed.append(
            Batch(sequence: state.openSequence, count: state.openCount, bytes: state.openBytes, url: to))
        state.sealedEvents += state.openCount
        state.sealedBytes += state.openBytes
        state.openCount = 0
        state.openBytes = 0
    }

    /// Forces the open segment to storage, without sealing it.
    func sync() {
        state.withLock { state in
            if state.descriptor >= 0 { _ = synchronizeToStorage(state.descriptor) }
        }
    }

    // MARK: The cap

    /// Keeps to the caps, oldest first. Past ``Limits/maximumEvents`` the front moves past the
    /// oldest events, one by one, so that the newest `maximumEvents` stay (a batch whose events
    /// are all gone is deleted); past ``Limits/maximumBytes`` the oldest batches go whole (the
    /// bytes are their files'). Counted in `droppedAtCap`, logged once an episode. Nothing is
    /// dropped while a request of the front's events is on the wire (``beginSending(from:)``):
    /// those may be delivered, and the cap catches up when the request is answered.
    private func enforceCap(_ state: inout State, notes: inout [String]) {
        guard state.requestsSending == 0, !state.stoppedWaiting else { return }
        var dropped = 0
        while let oldest = state.sealed.first {
            let excessEvents = state.sealedEvents + state.openCount - limits.maximumEvents
            let excessBytes = state.sealedBytes + state.openBytes - limits.maximumBytes
            if excessBytes > 0 || excessEvents >= oldest.remaining {
                dropped += oldest.remaining
                removeOldest(&state)
            } else if excessEvents > 0 {
                state.sealed[0].skip += excessEvents
                state.sealedEvents -= excessEvents
                dropped += excessEvents
            } else {
                break
            }
        }
        guard dropped > 0 else { return }
        state.counters.droppedAtCap += dropped
        writeFront(&state)
        guard !state.overflowing else { return }
        state.overflowing = true
        notes.append(
            "queue full (at most \(limits.maximumEvents) events, \(limits.maximumBytes) bytes): the oldest events "
                + "are dropped as new ones come (counted in droppedAtCap; not logged again until events are sent)")
    }

    /// Deletes the oldest batch (the front moves to the next one).
    private func removeOldest(_ state: inout State) {
        let oldest = state.sealed.removeFirst()
        state.sealedEvents -= oldest.remaining
        state.sealedBytes -= oldest.bytes
        unlink(oldest.url.path)
    }

    /// Says in the front file where the front is when it is inside the oldest batch; removes the
    /// file when the front is a batch's start. Best effort: when it cannot be written, a restart
    /// sends the oldest batch whole.
    private func writeFront(_ state: inout State) {
        let path = directory.appendingPathComponent(QueueFiles.frontName).path
        guard let oldest = state.sealed.first, oldest.skip > 0 else {
            if state.frontWritten { unlink(path) }
            state.frontWritten = false
            return
        }
        let draft = directory.appendingPathComponent(QueueFiles.frontDraftName).path
        let descriptor = PrivateFiles.openFile(draft, flags: O_WRONLY | O_TRUNC)
        guard descriptor >= 0 else { return }
        let failed = MeasurementEventsAggregator.writeAll(
            QueueFiles.frontText(sequence: oldest.sequence, record: oldest.skip), to: descriptor)
        close(descriptor)
        if failed == nil, rename(draft, path) == 0 {
            state.frontWritten = true
        } else {
            unlink(draft)
        }
    }

    // MARK: Uploading

    /// The oldest sealed batch after `sequence` (the oldest of all when `nil`), sealing the open
    /// segment first when there is none and it holds at least `minimumOpenCount` events.
    func nextBatch(after sequence: UInt64? = nil, sealingOpenSegmentWithAtLeast minimumOpenCount: Int) -> Batch? {
        withState { state, notes in
            let isNext = { (batch: Batch) in sequence.map { batch.sequence > $0 } ?? true }
            if !state.sealed.contains(where: isNext), state.openCount > 0, state.openCount >= minimumOpenCount {
                seal(&state, durable: false, notes: &notes)
            }
            return state.sealed.first(where: isNext)
        }
    }

    /// Where the queue's first event is: in the oldest batch; `nil` when no batch is sealed.
    var front: Position? {
        state.withLock { state in state.sealed.first.map { Position(sequence: $0.sequence, record: $0.skip) } }
    }

    /// A request whose first event is at `start` goes on the wire: the cap waits until
    /// ``endSending()`` (one for each, when several are on the wire). False when the cap dropped
    /// that event meanwhile (the front passed it): nothing is sent.
    func beginSending(from start: Position) -> Bool {
        state.withLock { state in
            guard let oldest = state.sealed.first, Position(sequence: oldest.sequence, record: oldest.skip) <= start
            else { return false }
            state.requestsSending += 1
            return true
        }
    }

    /// The request is answered (after its events were consumed, when they were): the cap
    /// applies again.
    func endSending() {
        withState { state, notes in
            state.requestsSending = max(0, state.requestsSending - 1)
            enforceCap(&state, notes: &notes)
        }
    }

    /// Everything before `position` is done with (sent, refused or dropped): batches wholly
    /// before it are deleted, and the front moves to it.
    func consume(through position: Position) {
        state.withLock { state in
            var moved = false
            while let oldest = state.sealed.first, oldest.sequence <= position.sequence {
                if oldest.sequence < position.sequence || position.record >= oldest.count {
                    removeOldest(&state)
                    moved = true
                    continue
                }
                if position.record > oldest.skip {
                    state.sealedEvents -= position.record - oldest.skip
                    state.sealed[0].skip = position.record
                    moved = true
                }
                break
            }
            guard moved else { return }
            state.overflowing = false
            state.shedding = false
            writeFront(&state)
        }
        signalRoom()
    }

    /// The events of a sealed batch still queued: ``load(_:)`` without the record they start at.
    func read(_ batch: Batch) -> [QueuedEvent]? {
        load(batch)?.events
    }

    /// Reads a sealed batch: its events from its first one still queued (`firstRecord`; the
    /// earlier ones were sent or dropped). Damaged records are skipped, counted and logged; the
    /// records after them are read. Returns `nil` when the file cannot be read at all: it is then
    /// left on disk, out of the index, for the next start (counted and logged once). A batch
    /// the cap dropped while it was read gives no events.
    func load(_ batch: Batch) -> (events: [QueuedEvent], firstRecord: Int)? {
        let name = batch.url.lastPathComponent
        let bytes: [UInt8]
        switch QueueFiles.contents(batch.url.path, maximumBytes: limits.maximumBytes) {
        case .failure(let failure):
            let dropped = withState { state, notes -> Bool in
                guard state.sealed.contains(where: { $0.sequence == batch.sequence }) else { return true }
                forget(batch, state: &state)
                state.counters.unreadableFiles += 1
                notes.append("\(failure); left on disk and tried again at the next start")
                return false
            }
            return dropped ? ([], 0) : nil
        case .success(let value):
            bytes = value
        }
        let scan = RecordFraming.scan(bytes)
        // A server's batch of thousands is decoded on the machine's cores at once, in chunks.
        let records = scan.records
        let decoded = ConcurrentChunks.flatMap(records.count) {
            (chunk, add: (consuming QueuedEvent) -> Void) -> [String] in
            var notes: [String] = []
            let contexts = EventRecordCodec.ContextCache()
            for range in records[chunk] {
                do {
                    add(try EventRecordCodec.decode(bytes[range], contextCache: contexts))
                } catch {
                    notes.append("\(name): \(error); skipped")
                }
            }
            return notes
        }
        let events = decoded.elements
        var notes = decoded.others.flatMap { $0 }
        let undecodable = scan.records.count - events.count
        if scan.corruptRecords > 0 || scan.damagedBytes > 0 {
            notes.append(
                "\(name): \(scan.damagedBytes) damaged bytes (about \(scan.corruptRecords) records) skipped; "
                    + "\(scan.records.count) good records read")
        }
        if scan.tornTail { notes.append("\(name): a torn last record (\(scan.trailingBytes) bytes) skipped") }
        let readCount = events.count
        let firstRecord = withState { state, _ -> Int? in
            state.counters.corruptRecords += scan.corruptRecords + undecodable
            state.counters.damagedBytes += scan.damagedBytes
            if events.isEmpty, scan.damagedBytes > 0 || undecodable > 0 { state.counters.unreadableFiles += 1 }
            if scan.tornTail { state.counters.tornRecordsRepaired += 1 }
            // The index now holds the real count, so the cap and `queuedEvents` stop trusting the name.
            guard let index = state.sealed.firstIndex(where: { $0.sequence == batch.sequence }) else { return nil }
            let before = state.sealed[index].remaining
            state.sealed[index].count = readCount
            state.sealed[index].skip = min(state.sealed[index].skip, readCount)
            state.sealedEvents += state.sealed[index].remaining - before
            // Nothing left to send in it (its records all damaged, or done with): deleted now.
            guard state.sealed[index].remaining > 0 else {
                forget(batch, state: &state)
                unlink(batch.url.path)
                return nil
            }
            return state.sealed[index].skip
        }
        notes.forEach(log)
        guard let firstRecord else { return ([], 0) }
        // Not copied when whole: each copy of an event retains its strings and dictionaries.
        return (firstRecord == 0 ? events : Array(events[firstRecord...]), firstRecord)
    }

    /// Takes a batch out of the index (its file stays).
    private func forget(_ batch: Batch, state: inout State) {
        guard let index = state.sealed.firstIndex(where: { $0.sequence == batch.sequence }) else { return }
        let entry = state.sealed.remove(at: index)
        state.sealedEvents -= entry.remaining
        state.sealedBytes -= entry.bytes
        if index == 0 { writeFront(&state) }
    }

    /// Deletes everything queued, in memory too; returns how many events that was. What a
    /// previous run left in a queue not opened yet is deleted when it is opened, before anything
    /// else is written.
    @discardableResult
    func discardAll() -> Int {
        defer { signalRoom() }
        return state.withLock { state in
            let waiting = state.waiting.count
            state.waiting = []
            state.counters.discarded += waiting
            if !state.isOpen { state.discardsOnOpen = true }
            return waiting + discardOnDisk(&state)
        }
    }

    /// Deletes every file of the queue; returns how many events they held.
    @discardableResult
    private func discardOnDisk(_ state: inout State) -> Int {
        if state.descriptor >= 0 {
            close(state.descriptor)
            state.descriptor = -1
            unlink(directory.appendingPathComponent(QueueFiles.openName(state.openSequence)).path)
        }
        for batch in state.sealed { unlink(batch.url.path) }
        let count = state.sealedEvents + state.openCount
        state.counters.discarded += count
        state.sealed = []
        state.sealedEvents = 0
        state.sealedBytes = 0
        state.openCount = 0
        state.openBytes = 0
        writeFront(&state)
        return count
    }

    /// Events queued, on disk and waiting in memory.
    var queuedEvents: Int { state.withLock { $0.sealedEvents + $0.openCount + $0.waiting.count } }
    var queuedBytes: Int { state.withLock { $0.sealedBytes + $0.openBytes } }
    var counters: Counters { state.withLock { $0.counters } }
}

extension DiskQueue.Counters {
    /// Adds `other`'s counts to these.
    mutating func add(_ other: DiskQueue.Counters) {
        droppedAtCap += other.droppedAtCap
        discarded += other.discarded
        corruptRecords += other.corruptRecords
        damagedBytes += other.damagedBytes
        tornRecordsRepaired += other.tornRecordsRepaired
        unreadableFiles += other.unreadableFiles
        emptyFilesRemoved += other.emptyFilesRemoved
        unrecognizedFiles += other.unrecognizedFiles
        waitedForRoom += other.waitedForRoom
        waitsTimedOut += other.waitsTimedOut
        writtenOverCap += other.writtenOverCap
    }
}
