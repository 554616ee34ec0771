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

/// Writes every byte of `bytes` to `descriptor`, retrying short writes and `EINTR`.
///
/// Returns `nil` on success, or the `errno` of the failed `write`; callers turn it into their
/// own error (and may undo a partial write first).
package func writeAll(_ bytes: some ContiguousBytes, to descriptor: Int32) -> Int32? {
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }
}

/// Forces what was written to `descriptor` to storage; returns `nil` on success or the `errno`.
///
/// On Apple platforms `fsync` only hands the data to the drive, which may keep it in its cache
/// across a power loss; `F_FULLFSYNC` asks the drive to write it out. Some file systems (network
/// volumes, FAT) refuse `F_FULLFSYNC`, so `fsync` is the fallback there.
package func synchronizeToStorage(_ descriptor: Int32) -> Int32? {
    #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) != -1 { return nil }
    #endif
    return fsync(descriptor) == 0 ? nil : errno
}
