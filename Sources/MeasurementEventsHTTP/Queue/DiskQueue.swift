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

/// The durable queue of one tracker: append-only segment files in one directory.
///
/// - Events are appended to `<sequence>.open` with one `write(2)` each, so an event is in the
///   operating system's hands (and survives the process being killed) when ``append(_:)``
///   returns. ``sync()`` also forces it to storage.
/// - A segment is sealed by renaming it to `<sequence>-<count>.batch`; sealed files never
///   change and are deleted only after the server accepted them.
/// - On start, `.open` files left by a previous process are cut back to their last complete
///   record and sealed; corrupt records and unreadable files are skipped and counted when read.
/// - Only a small index (one entry per sealed file) stays in memory.
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
        let count: Int
        let bytes: Int
        let url: URL
    }

    struct Counters: Sendable, Equatable {
        var droppedAtCap = 0
        var discarded = 0
        var corruptRecords = 0
        var tornRecordsRepaired = 0
        var unreadableFiles = 0
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

    let directory: URL
    let limits: Limits
    private let log: @Sendable (String) -> Void
    private let state: LockedValue<State>

    private struct State {
        var descriptor: Int32 = -1
        var openSequence: UInt64 = 0
        var openCount = 0
        var openBytes = 0
        var sealed: [Batch] = []
        var sealedEvents = 0
        var sealedBytes = 0
        var nextSequence: UInt64 = 1
        var inFlight: UInt64?
        var counters = Counters()
        var payload: [UInt8] = []
        var frame: [UInt8] = []
    }

    init(directory: URL, limits: Limits, log: @escaping @Sendable (String) -> Void) throws {
        self.directory = directory
        self.limits = limits
        self.log = log
        state = LockedValue(State())
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        recover()
    }

    deinit {
        state.withLock { state in
            if state.descriptor >= 0 { close(state.descriptor) }
        }
    }

    // MARK: Appending

    /// Writes one event; returns how many events are in the open segment afterwards and
    /// whether a segment was sealed.
    func append(_ queued: QueuedEvent) throws -> (openCount: Int, sealed: Bool) {
        try state.withLock { state in
            state.payload.removeAll(keepingCapacity: true)
            EventRecordCodec.encode(queued, into: &state.payload)
            guard state.payload.count <= RecordFraming.maximumPayloadSize else {
                throw EventTooLarge(bytes: state.payload.count)
            }
            state.frame.removeAll(keepingCapacity: true)
            RecordFraming.appendFrame(payload: state.payload[...], to: &state.frame)
            if state.descriptor < 0 { try openSegment(&state) }
            try writeAll(state.frame, state: &state)
            state.openCount += 1
            state.openBytes += state.frame.count
            var sealed = false
            if state.openCount >= limits.eventsPerBatch || state.openBytes >= limits.bytesPerBatch {
                seal(&state, durable: false)
                sealed = true
            }
            enforceCap(&state)
            return (state.openCount, sealed)
        }
    }

    private func openSegment(_ state: inout State) throws {
        let sequence = state.nextSequence
        let path = directory.appendingPathComponent(Self.openName(sequence)).path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
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
        if let code = MeasurementEvents.writeAll(bytes, to: descriptor) {
            // Cut a partly written record off, so the file stays a sequence of records.
            _ = ftruncate(descriptor, off_t(start))
            throw WriteError(path: directory.path, code: code)
        }
    }

    // MARK: Sealing

    /// Seals the open segment, if it has events. `durable` forces it to storage first.
    func sealOpenSegment(durable: Bool) {
        state.withLock { seal(&$0, durable: durable) }
    }

    private func seal(_ state: inout State, durable: Bool) {
        guard state.descriptor >= 0 else { return }
        if durable { _ = fsync(state.descriptor) }
        close(state.descriptor)
        state.descriptor = -1
        let from = directory.appendingPathComponent(Self.openName(state.openSequence))
        guard state.openCount > 0 else {
            unlink(from.path)
            return
        }
        let to = directory.appendingPathComponent(Self.batchName(state.openSequence, count: state.openCount))
        if rename(from.path, to.path) != 0 {
            log("cannot seal \(from.lastPathComponent): \(String(cString: strerror(errno))); it is sent after a restart")
            return
        }
        state.sealed.append(Batch(sequence: state.openSequence, count: state.openCount, bytes: state.openBytes, url: to))
        state.sealedEvents += state.openCount
        state.sealedBytes += state.openBytes
        state.openCount = 0
        state.openBytes = 0
    }

    /// Forces the open segment to storage (`fsync`), without sealing it.
    func sync() {
        state.withLock { state in
            if state.descriptor >= 0 { _ = fsync(state.descriptor) }
        }
    }

    // MARK: The cap

    private func enforceCap(_ state: inout State) {
        while state.sealedEvents + state.openCount > limits.maximumEvents
            || state.sealedBytes + state.openBytes > limits.maximumBytes
        {
            guard let index = state.sealed.firstIndex(where: { $0.sequence != state.inFlight }) else { return }
            let oldest = state.sealed.remove(at: index)
            state.sealedEvents -= oldest.count
            state.sealedBytes -= oldest.bytes
            state.counters.droppedAtCap += oldest.count
            unlink(oldest.url.path)
            log("queue full (at most \(limits.maximumEvents) events, \(limits.maximumBytes) bytes): "
                + "dropped the oldest \(oldest.count) events")
        }
    }

    // MARK: Uploading

    /// The oldest sealed batch, sealing the open segment first when no batch is sealed and it
    /// holds at least `minimumOpenCount` events. Marks the batch as in flight, which protects
    /// it from the cap.
    func nextBatch(sealingOpenSegmentWithAtLeast minimumOpenCount: Int) -> Batch? {
        state.withLock { state in
            if state.sealed.isEmpty, state.openCount > 0, state.openCount >= minimumOpenCount {
                seal(&state, durable: false)
            }
            state.inFlight = state.sealed.first?.sequence
            return state.sealed.first
        }
    }

    /// Reads a sealed batch. Corrupt records and a torn tail are skipped, counted and logged.
    func read(_ batch: Batch) -> [QueuedEvent] {
        guard let data = FileManager.default.contents(atPath: batch.url.path) else {
            state.withLock { $0.counters.unreadableFiles += 1 }
            log("cannot read \(batch.url.lastPathComponent); skipped")
            return []
        }
        let bytes = [UInt8](data)
        let scan = RecordFraming.scan(bytes)
        var events: [QueuedEvent] = []
        events.reserveCapacity(scan.records.count)
        var undecodable = 0
        for range in scan.records {
            do {
                events.append(try EventRecordCodec.decode(bytes[range]))
            } catch {
                undecodable += 1
                log("\(batch.url.lastPathComponent): \(error); skipped")
            }
        }
        let corrupt = scan.corruptRecords + undecodable
        let unreadableFile = events.isEmpty && (scan.garbage || corrupt > 0 || scan.trailingBytes > 0)
        state.withLock { state in
            state.counters.corruptRecords += corrupt
            if unreadableFile { state.counters.unreadableFiles += 1 } else if scan.trailingBytes > 0 {
                state.counters.tornRecordsRepaired += 1
            }
        }
        if scan.corruptRecords > 0 {
            log("\(batch.url.lastPathComponent): \(scan.corruptRecords) records failed their checksum; skipped")
        }
        if scan.trailingBytes > 0 {
            log("\(batch.url.lastPathComponent): the last \(scan.trailingBytes) bytes are "
                + (scan.garbage ? "not queue records" : "a torn record") + "; skipped")
        }
        return events
    }

    /// Deletes a batch the server accepted (or that could not be read).
    func remove(_ batch: Batch) {
        state.withLock { state in
            if state.inFlight == batch.sequence { state.inFlight = nil }
            guard let index = state.sealed.firstIndex(where: { $0.sequence == batch.sequence }) else { return }
            state.sealed.remove(at: index)
            state.sealedEvents -= batch.count
            state.sealedBytes -= batch.bytes
            unlink(batch.url.path)
        }
    }

    /// Deletes everything queued; returns how many events that was.
    @discardableResult
    func discardAll() -> Int {
        state.withLock { state in
            if state.descriptor >= 0 {
                close(state.descriptor)
                state.descriptor = -1
                unlink(directory.appendingPathComponent(Self.openName(state.openSequence)).path)
            }
            for batch in state.sealed { unlink(batch.url.path) }
            let count = state.sealedEvents + state.openCount
            state.counters.discarded += count
            state.sealed = []
            state.sealedEvents = 0
            state.sealedBytes = 0
            state.openCount = 0
            state.openBytes = 0
            state.inFlight = nil
            return count
        }
    }

    var queuedEvents: Int { state.withLock { $0.sealedEvents + $0.openCount } }
    var queuedBytes: Int { state.withLock { $0.sealedBytes + $0.openBytes } }
    var counters: Counters { state.withLock { $0.counters } }

    // MARK: Recovery

    private func recover() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var sealed: [Batch] = []
        var highest: UInt64 = 0
        var counters = Counters()
        for name in names {
            let url = directory.appendingPathComponent(name)
            if let sequence = Self.sequence(ofOpenName: name) {
                highest = max(highest, sequence)
                if let batch = repairAndSeal(url, sequence: sequence, counters: &counters) { sealed.append(batch) }
            } else if let (sequence, count) = Self.sequenceAndCount(ofBatchName: name) {
                highest = max(highest, sequence)
                let bytes = ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int) ?? 0
                sealed.append(Batch(sequence: sequence, count: count, bytes: bytes, url: url))
            } else {
                log("\(name) in the queue directory is not a queue file; left alone")
            }
        }
        sealed.sort { $0.sequence < $1.sequence }
        state.withLock { state in
            state.sealed = sealed
            state.sealedEvents = sealed.reduce(0) { $0 + $1.count }
            state.sealedBytes = sealed.reduce(0) { $0 + $1.bytes }
            state.nextSequence = highest + 1
            state.counters = counters
        }
    }

    /// Cuts a segment left open by a previous process back to its last complete record and
    /// seals it. Corrupt records inside are counted when the batch is read.
    private func repairAndSeal(_ url: URL, sequence: UInt64, counters: inout Counters) -> Batch? {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            counters.unreadableFiles += 1
            log("cannot read \(url.lastPathComponent); left alone")
            return nil
        }
        let scan = RecordFraming.scan([UInt8](data))
        if scan.trailingBytes > 0 {
            truncate(url.path, off_t(scan.validLength))
            if scan.garbage {
                counters.unreadableFiles += scan.validLength == 0 ? 1 : 0
                log("\(url.lastPathComponent): \(scan.trailingBytes) bytes that are not queue records removed")
            } else {
                counters.tornRecordsRepaired += 1
                log("\(url.lastPathComponent): a torn last record (\(scan.trailingBytes) bytes) removed")
            }
        }
        let count = scan.records.count + scan.corruptRecords
        guard count > 0 else {
            unlink(url.path)
            return nil
        }
        let sealedURL = directory.appendingPathComponent(Self.batchName(sequence, count: count))
        guard rename(url.path, sealedURL.path) == 0 else {
            log("cannot seal \(url.lastPathComponent): \(String(cString: strerror(errno)))")
            return nil
        }
        return Batch(sequence: sequence, count: count, bytes: scan.validLength, url: sealedURL)
    }

    // MARK: File names

    static func openName(_ sequence: UInt64) -> String { pad(sequence) + ".open" }
    static func batchName(_ sequence: UInt64, count: Int) -> String { pad(sequence) + "-\(count).batch" }

    private static func pad(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(0, 12 - digits.count)) + digits
    }

    // Names come from the disk: bounded so that the next sequence number and the sum of the
    // counts cannot overflow (Int is 32 bits on Apple Watch). A name beyond them is not ours.
    static let largestSequence: UInt64 = 1 << 62
    static let largestBatchCount = 1 << 24

    static func sequence(ofOpenName name: String) -> UInt64? {
        guard name.hasSuffix(".open"), let sequence = UInt64(name.dropLast(5)), sequence <= largestSequence else { return nil }
        return sequence
    }

    static func sequenceAndCount(ofBatchName name: String) -> (UInt64, Int)? {
        guard name.hasSuffix(".batch") else { return nil }
        let parts = name.dropLast(6).split(separator: "-")
        guard parts.count == 2, let sequence = UInt64(parts[0]), sequence <= largestSequence,
            let count = Int(parts[1]), (0...largestBatchCount).contains(count)  // checked: nil beyond Int, then bounded
        else {
            return nil
        }
        return (sequence, count)
    }
}
