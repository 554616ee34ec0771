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

/// Appends each event to a file as one JSON object per line (JSON Lines).
///
/// Every line reaches the operating system with a single `write` before ``track(_:)``
/// returns, so a crash of the process loses at most the line being written. ``flush()``
/// also asks the system to put the file on disk (`fsync`; `F_FULLFSYNC` on Apple platforms).
///
/// ```swift
/// let tracker = try JSONLinesFileTracker(url: URL(fileURLWithPath: "/tmp/events.jsonl"))
/// ```
public final class JSONLinesFileTracker: EventTracker, @unchecked Sendable {
    // @unchecked: the descriptor and encoder are only used inside `lock`.
    /// The file events are appended to.
    public let url: URL
    private let lock = NSLock()
    private var descriptor: Int32
    private let encoder: JSONEncoder

    /// The file could not be opened.
    public struct OpenError: Error, CustomStringConvertible {
        /// The file's path.
        public let path: String
        /// The system's error number.
        public let code: Int32
        /// The path and the system's error message.
        public var description: String { "cannot open \(path) for appending: \(String(cString: strerror(code)))" }
    }

    /// An event could not be written.
    public struct WriteError: Error, CustomStringConvertible {
        /// The file's path.
        public let path: String
        /// The system's error number.
        public let code: Int32
        /// The path and the system's error message.
        public var description: String { "cannot write to \(path): \(String(cString: strerror(code)))" }
    }

    /// Opens (or creates, with its folder) the file for appending.
    ///
    /// - Parameter url: the file; its folder is created when missing.
    /// - Throws: ``OpenError`` when the file cannot be opened.
    public init(url: URL) throws {
        self.url = url
        // The file is owner-only (0600): events may carry personal data. Its folder is the app's.
        try? PrivateFiles.createAppDirectory(at: url.deletingLastPathComponent())
        let descriptor = PrivateFiles.openFile(url.path, flags: O_WRONLY | O_APPEND)
        let code = errno
        guard descriptor >= 0 else { throw OpenError(path: url.path, code: code) }
        self.descriptor = descriptor
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    deinit {
        close(descriptor)
    }

    /// Appends `event` as one JSON line, in a single write.
    ///
    /// - Parameter event: the event.
    /// - Throws: ``WriteError`` when the write fails.
    public func track(_ event: MeasurementEvent) throws {
        lock.lock()
        defer { lock.unlock() }
        var line = try encoder.encode(event)
        line.append(UInt8(ascii: "\n"))
        let end = lseek(descriptor, 0, SEEK_END)
        if let code = writeAll(line, to: descriptor) {
            // Cut a partly written line off, or the next line would be glued to it.
            if end >= 0 { _ = ftruncate(descriptor, end) }
            throw WriteError(path: url.path, code: code)
        }
    }

    public func flush() throws {
        lock.lock()
        defer { lock.unlock() }
        if let code = synchronizeToStorage(descriptor) { throw WriteError(path: url.path, code: code) }
    }
}
