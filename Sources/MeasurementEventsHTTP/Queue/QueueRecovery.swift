import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// What a queue directory holds when a queue starts, found without trusting any name: `.open`
/// segments left by a previous process are counted from their frame headers (and checked when
/// read for sending; one whose start is no frame is repaired and sealed now), batch counts are checked
/// against the files, empty files are removed, and files that cannot be read are counted,
/// logged and left for the next start. Runs before the queue is shared, so it logs freely.
struct QueueRecovery {
    let directory: URL
    let limits: DiskQueue.Limits
    let log: @Sendable (String) -> Void

    /// What the directory holds: the sealed batches, oldest first, the next free sequence, and
    /// what was found wrong on the way.
    func run() -> (sealed: [DiskQueue.Batch], nextSequence: UInt64, counters: DiskQueue.Counters) {
        let names = QueueFiles.names(in: directory.path)
        var sealed: [DiskQueue.Batch] = []
        var highest: UInt64 = 0
        var counters = DiskQueue.Counters()
        var front: (sequence: UInt64, record: Int)?
        for name in names.sorted() {
            let url = directory.appendingPathComponent(name)
            guard let parsed = QueueFiles.parse(name) else {
                counters.unrecognizedFiles += 1
                log("\(name) in the queue directory is not a queue file; left alone")
                continue
            }
            let sequence: UInt64
            switch parsed {
            case .open(let value), .batch(let value, _):
                sequence = value
            case .front:
                front = readFront(url)
                continue
            case .frontDraft:
                unlink(url.path)  // a replacement the previous run did not finish
                continue
            }
            highest = max(highest, sequence)
            let bytes: Int
            switch QueueFiles.kind(url.path) {
            case .other(let reason):
                counters.unreadableFiles += 1
                log("cannot read \(name): \(reason); left on disk and tried again at the next start")
                continue
            case .regular(let size):
                bytes = size
            }
            if bytes == 0 {
                unlink(url.path)
                counters.emptyFilesRemoved += 1
                log("\(name) is empty; removed")
                continue
            }
            switch parsed {
            case .front, .frontDraft:
                continue
            case .open:
                // Counted from its frame headers and left as it is: it is read, checked and its
                // torn tail skipped when it is sent (`DiskQueue.read`), like a sealed batch, not
                // during the app's launch (issue 34: checking 1,000 records took 1.8 M
                // instructions). Nothing appends to it again: new segments take new sequences.
                if let count = countFrames(url), count > 0 {
                    sealed.append(DiskQueue.Batch(sequence: sequence, count: count, bytes: bytes, url: url))
                } else if let batch = repairAndSeal(url, sequence: sequence, counters: &counters) {
                    sealed.append(batch)
                }
            case .batch(_, let claimed):
                guard let count = plausibleCount(claimed, bytes: bytes) ?? countRecords(url) else {
                    counters.unreadableFiles += 1
                    continue
                }
                sealed.append(DiskQueue.Batch(sequence: sequence, count: count, bytes: bytes, url: url))
            }
        }
        sealed.sort { $0.sequence < $1.sequence }
        // What the previous run was done with in the oldest batch (sent, or dropped at the cap).
        if let front, let index = sealed.firstIndex(where: { $0.sequence == front.sequence }) {
            sealed[index].skip = min(max(front.record, 0), sealed[index].count)
        }
        // `highest` is at most `QueueFiles.maximumSequence`: no overflow.
        return (sealed, highest + 1, counters)
    }

    /// The position a front file holds; `nil` (logged) when it holds none.
    private func readFront(_ url: URL) -> (sequence: UInt64, record: Int)? {
        guard case .success(let bytes) = QueueFiles.contents(url.path, maximumBytes: 64),
            let front = QueueFiles.parseFront(bytes)
        else {
            log("\(url.lastPathComponent) holds no queue position; ignored, the oldest batch is sent whole")
            return nil
        }
        return front
    }

    /// The count a batch name claims, when a file of `bytes` bytes can hold that many records
    /// and a batch of this queue can: `nil` sends the caller to the file's content.
    private func plausibleCount(_ claimed: Int?, bytes: Int) -> Int? {
        guard let claimed, claimed >= 1, claimed <= limits.eventsPerBatch,
            claimed <= bytes / (RecordFraming.headerSize + 1)
        else { return nil }
        return claimed
    }

    /// The good records in a file; `nil` (logged) when it cannot be read.
    private func countRecords(_ url: URL) -> Int? {
        switch QueueFiles.contents(url.path, maximumBytes: limits.maximumBytes) {
        case .failure(let failure):
            log("\(failure); left on disk and tried again at the next start")
            return nil
        case .success(let bytes):
            return RecordFraming.scan(bytes).records.count
        }
    }

    /// The frames an open segment holds, by walking their headers (magic and length) without
    /// checking a payload: an estimate, corrected when the file is read (as a count in a batch
    /// name is). `nil` when the file cannot be read; 0 when its start is no frame (the caller
    /// then repairs it at once).
    private func countFrames(_ url: URL) -> Int? {
        guard case .success(let bytes) = QueueFiles.contents(url.path, maximumBytes: limits.maximumBytes) else {
            return nil
        }
        return RecordFraming.countFrames(bytes)
    }

    /// Seals a segment left open by a previous process, after cutting off what follows its
    /// last good record (a torn write, or damage). Damage before that stays in the file and is
    /// counted when the batch is read, so no good record is ever cut off.
    private func repairAndSeal(_ url: URL, sequence: UInt64, counters: inout DiskQueue.Counters) -> DiskQueue.Batch? {
        let name = url.lastPathComponent
        let bytes: [UInt8]
        switch QueueFiles.contents(url.path, maximumBytes: limits.maximumBytes) {
        case .failure(let failure):
            counters.unreadableFiles += 1
            log("\(failure); left on disk and tried again at the next start")
            return nil
        case .success(let value):
            bytes = value
        }
        let scan = RecordFraming.scan(bytes)
        if scan.trailingBytes > 0 {
            if scan.tornTail {
                counters.tornRecordsRepaired += 1
                log("\(name): a torn last record (\(scan.trailingBytes) bytes) removed")
            } else {
                // Only the removed tail is counted here: damage before it is counted when the
                // sealed batch is read.
                counters.corruptRecords += scan.trailingCorruptRecords
                counters.damagedBytes += scan.trailingBytes
                log("\(name): \(scan.trailingBytes) damaged bytes after the last good record removed")
            }
            truncate(url.path, off_t(scan.validLength))
        }
        guard !scan.records.isEmpty else {
            if scan.validLength == 0, !scan.tornTail { counters.unreadableFiles += 1 }
            unlink(url.path)
            return nil
        }
        let sealedURL = directory.appendingPathComponent(QueueFiles.batchName(sequence, count: scan.records.count))
        guard rename(url.path, sealedURL.path) == 0 else {
            log("cannot seal \(name): \(String(cString: strerror(errno)))")
            return nil
        }
        return DiskQueue.Batch(sequence: sequence, count: scan.records.count, bytes: scan.validLength, url: sealedURL)
    }
}
