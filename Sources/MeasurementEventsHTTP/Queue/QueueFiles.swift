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

/// The names and reading of queue files. Nothing in a name is trusted: a name is either one we
/// write, with numbers in range, or it is not ours.
enum QueueFiles {
    /// What a name in the queue directory says.
    enum Name: Equatable {
        case open(sequence: UInt64)
        /// `count` is what the name claims, `nil` when it is not a plain number in range; the
        /// queue checks it against the file (see `DiskQueue`).
        case batch(sequence: UInt64, count: Int?)
        /// The queue's front (``QueueFiles/frontName``), or its replacement being written.
        case front
        case frontDraft
    }

    /// Where the oldest batch's first event still queued is, when that is not its first record
    /// (its earlier events were sent, or dropped at the cap): the text `<sequence> <record>`.
    /// Batch files never change; this small file, replaced atomically, says how much of the
    /// oldest one is done with.
    static let frontName = "front"
    static let frontDraftName = "front.new"

    /// Sequences stay below this (15 digits), so `sequence + 1` never overflows and a name
    /// never needs more digits than we write.
    static let maximumSequence: UInt64 = 999_999_999_999_999
    /// Counts in names are at most this many digits: larger is never one we wrote.
    private static let maximumCountDigits = 9

    static func openName(_ sequence: UInt64) -> String { pad(sequence) + ".open" }
    static func batchName(_ sequence: UInt64, count: Int) -> String { pad(sequence) + "-\(count).batch" }

    private static func pad(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(0, 12 - digits.count)) + digits
    }

    /// Parses `<sequence>.open` and `<sequence>-<count>.batch`; `nil` for anything else.
    static func parse(_ name: String) -> Name? {
        if name == frontName { return .front }
        if name == frontDraftName { return .frontDraft }
        if name.hasSuffix(".open") {
            return sequence(name.dropLast(5)).map { .open(sequence: $0) }
        }
        guard name.hasSuffix(".batch") else { return nil }
        let stem = name.dropLast(6)
        guard let dash = stem.firstIndex(of: "-"), let sequence = sequence(stem[..<dash]) else { return nil }
        let count = stem[stem.index(after: dash)...]
        guard isDigits(count), count.utf8.count <= maximumCountDigits else {
            return .batch(sequence: sequence, count: nil)
        }
        // Parsing gives nil when out of range, and a count here has at most 9 digits.
        return .batch(sequence: sequence, count: Int(count))  // fits: 9 digits
    }

    private static func sequence(_ text: Substring) -> UInt64? {
        guard isDigits(text), text.utf8.count <= 20, let value = UInt64(text), value <= maximumSequence else {
            return nil
        }
        return value
    }

    private static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The text of the front file for `position`.
    static func frontText(sequence: UInt64, record: Int) -> [UInt8] { Array("\(sequence) \(record)\n".utf8) }

    /// The position a front file's `bytes` hold; `nil` for anything else.
    static func parseFront(_ bytes: [UInt8]) -> (sequence: UInt64, record: Int)? {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = text.split(separator: " ")
        guard parts.count == 2, let sequence = sequence(parts[0]), isDigits(parts[1]),
            parts[1].utf8.count <= maximumCountDigits,
            let record = Int(parts[1])  // fits: at most 9 digits, checked just above
        else { return nil }
        return (sequence, record)
    }

    /// The names in `directory` (not `.` and `..`), in no order; none when it cannot be listed.
    /// With readdir(3), not FileManager: this runs at every start, where
    /// `contentsOfDirectory(atPath:)` took 0.29 M instructions for an empty queue (issue 34).
    static func names(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Why a queue file could not be read.
    struct ReadFailure: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "cannot read \(path): \(reason)" }
    }

    /// What kind of entry a path is, without following a symbolic link.
    enum Kind: Equatable {
        case regular(bytes: Int)
        case other(String)
    }

    static func kind(_ path: String) -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .other(String(cString: strerror(errno))) }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            // A size that does not fit an `Int` (a 32-bit watch) is no file of ours.
            guard let bytes = Int(exactly: info.st_size) else { return .other("\(info.st_size) bytes is too large") }
            return .regular(bytes: bytes)
        case S_IFDIR: return .other("a directory, not a file")
        case S_IFLNK: return .other("a symbolic link, not a file")
        default: return .other("not a regular file")
        }
    }

    /// Reads a regular file whole. Never blocks on a FIFO or device (`O_NONBLOCK`, then a check
    /// that it is a regular file), never follows a link.
    static func contents(_ path: String, maximumBytes: Int) -> Result<[UInt8], ReadFailure> {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            return .failure(ReadFailure(path: path, reason: String(cString: strerror(errno))))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            return .failure(ReadFailure(path: path, reason: String(cString: strerror(errno))))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            return .failure(ReadFailure(path: path, reason: "not a regular file"))
        }
        guard let size = Int(exactly: info.st_size), size <= maximumBytes else {
            return .failure(ReadFailure(path: path, reason: "\(info.st_size) bytes, more than \(maximumBytes)"))
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < size {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + offset, size - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(ReadFailure(path: path, reason: String(cString: strerror(errno))))
            }
            if count == 0 { break }
            offset += count
        }
        return .success(Array(bytes[..<offset]))
    }
}
