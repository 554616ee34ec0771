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

/// The file system calls of ``FileIdentityStore``, in POSIX so that every failure comes with
/// its `errno` and is told in plain words with the path ("permission denied", "is a directory,
/// not a file"), not as a Cocoa error number.
enum IdentityStoreFile {
    enum Read {
        case missing
        case bytes([UInt8])
        /// What was found, in words: "is a directory, not a file", "cannot be read: permission denied".
        case unreadable(String)
    }

    /// Reads `path` whole. Never blocks on a FIFO or a device (`O_NONBLOCK`), and calls no
    /// `stat` (a required-reason API on Apple platforms): a directory shows itself by `EISDIR`
    /// on `read`, a missing file or directory by `ENOENT` or `ENOTDIR` on `open`.
    static func contents(of path: String, maximumBytes: Int) -> Read {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            // ENOTDIR: the store's directory is a file; nothing was ever stored (a save says why it cannot).
            return errno == ENOENT || errno == ENOTDIR ? .missing : .unreadable("cannot be read: \(words(errno))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EISDIR { return .unreadable("is a directory, not a file") }
                return .unreadable("cannot be read: \(words(errno))")
            }
            if count == 0 { return .bytes(bytes) }
            bytes.append(contentsOf: chunk[..<count])
            guard bytes.count <= maximumBytes else {
                return .unreadable("has more than \(maximumBytes) bytes, expected at most that")
            }
        }
    }

    /// Writes `bytes` to `path` atomically: a new file of mode 0600 beside it, forced to
    /// storage, renamed over it. The directory is created with mode 0700 when missing.
    /// Returns what went wrong, in words, or `nil`.
    static func replace(_ path: String, with bytes: [UInt8], directory: URL) -> String? {
        if let problem = createDirectory(directory) { return problem }
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == ENOTDIR { return "cannot be written: \(directory.path) is not a directory" }
            return "cannot be written: \(words(errno)) (\(temporary))"
        }
        // The mode of a file left by an older version (Foundation wrote 0644) is narrowed too.
        _ = fchmod(descriptor, 0o600)
        var failure = writeAll(bytes, to: descriptor) ?? synchronizeToStorage(descriptor)
        close(descriptor)
        if failure == nil, rename(temporary, path) != 0 { failure = errno }
        guard let failure else { return nil }
        unlink(temporary)
        return "cannot be written: \(words(failure))"
    }

    /// Creates `directory` (mode 0700) and its parents when missing.
    private static func createDirectory(_ directory: URL) -> String? {
        let path = directory.path
        if mkdir(path, 0o700) == 0 || errno == EEXIST { return nil }
        if errno == ENOENT {
            let parent = directory.deletingLastPathComponent()
            if parent.path != path, createDirectory(parent) == nil, mkdir(path, 0o700) == 0 || errno == EEXIST {
                return nil
            }
        }
        if errno == ENOTDIR { return "cannot be written: \(path) is not a directory" }
        return "cannot be written: cannot create the directory \(path): \(words(errno))"
    }

    enum MoveAside {
        case moved(to: String)
        case failed(String)
    }

    /// Moves `path` aside to `path.corrupt` (replacing an older one).
    static func moveAside(_ path: String) -> MoveAside {
        let aside = path + ".corrupt"
        try? FileManager.default.removeItem(atPath: aside)
        guard rename(path, aside) == 0 else { return .failed(words(errno)) }
        return .moved(to: aside)
    }

    /// `strerror` in lower case: "permission denied", "no space left on device".
    static func words(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
