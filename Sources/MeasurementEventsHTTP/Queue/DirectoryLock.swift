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

/// An exclusive `flock` on `<directory>/tracker.lock`, held while the tracker lives: two
/// trackers appending to one queue would interleave records and send each batch twice. The
/// operating system releases the lock when the process dies, so a crash never leaves it held.
final class DirectoryLock: Sendable {
    private let descriptor: Int32

    /// Another tracker, in this process or another, holds the directory.
    struct InUse: Error {
        let path: String
    }

    struct Failed: Error, CustomStringConvertible {
        let path: String
        let code: Int32

        var description: String { "cannot lock \(path): \(String(cString: strerror(code)))" }
    }

    init(directory: URL) throws {
        let path = directory.appendingPathComponent("tracker.lock").path
        let descriptor = PrivateFiles.openFile(path, flags: O_RDWR)
        guard descriptor >= 0 else { throw Failed(path: path, code: errno) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK { throw InUse(path: directory.path) }
            throw Failed(path: path, code: code)
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }
}
