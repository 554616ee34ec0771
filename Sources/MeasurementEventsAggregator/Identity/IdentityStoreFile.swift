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
        /// The file is there but may not be opened yet (`PrivateFiles.isNotPermittedYet`), in words.
        case notReadableYet(String)
    }

    /// Reads `path` whole. Never blocks on a FIFO or a device (`O_NONBLOCK`), and calls no
    /// `stat` (a required-reason API on Apple platforms): a directory shows itself by `EISDIR`
    /// on `read`, a missing file or directory by `ENOENT` or `ENOTDIR` on `open`.
    static func contents(of path: String, maximumBytes: Int) -> Read {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            // ENOTDIR: the store's directory is a file; nothing was ever stored (a save says why it cannot).
            let code = errno
            if code == ENOENT || code == ENOTDIR { return .missing }
            if PrivateFiles.isNotPermittedYet(code) { return .notReadableYet("cannot be read yet: \(words(code))") }
            return .unreadable("cannot be read: \(words(code))")
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

    /// Writes `bytes` to `path` atomically: a new file beside it (`PrivateFiles`: mode 0600 and
    /// the data-protection class, like every file the package makes), forced to storage, renamed
    /// over it. The directory is the store's, claimed (created) before any save. Returns what
    /// went wrong, in words, or `nil`.
    static func replace(_ path: String, with bytes: [UInt8], directory: URL) -> String? {
        let temporary = path + ".new"
        let descriptor = PrivateFiles.openFile(temporary, flags: O_WRONLY | O_TRUNC)
        guard descriptor >= 0 else {
            if errno == ENOTDIR { return "cannot be written: \(directory.path) is not a directory" }
            if errno == ENOENT { return "cannot be written: \(directory.path) was removed while the store used it" }
            return "cannot be written: \(words(errno)) (\(temporary))"
        }
        var failure = writeAll(bytes, to: descriptor) ?? synchronizeToStorage(descriptor)
        close(descriptor)
        if failure == nil, rename(temporary, path) != 0 { failure = errno }
        guard let failure else { return nil }
        unlink(temporary)
        return "cannot be written: \(words(failure))"
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
