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
