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

/// Files and folders that may hold personal data: the owner's alone. Every file the package
/// writes is created with mode 0600 and every folder it creates with 0700, set with `fchmod` and
/// `chmod` after creation so that no umask widens (or narrows) them; a file the package opens
/// again is narrowed to 0600 (a file an older version made 0644 included).
///
/// On iOS, tvOS, watchOS and visionOS they also get the data-protection class
/// `completeUntilFirstUserAuthentication`: unreadable from the first boot until the user unlocks
/// the device once, then readable while the app runs in the background, which background
/// uploads of the HTTP queue need (the stricter `complete` would make them fail while locked).
package enum PrivateFiles {
    /// Read and write for the owner only.
    package static let fileMode: mode_t = 0o600
    /// Read, write and search for the owner only.
    package static let directoryMode: mode_t = 0o700

    /// A folder that could not be created.
    package struct DirectoryError: Error, CustomStringConvertible {
        /// The folder's path.
        package let path: String
        /// The system's error number.
        package let code: Int32

        package var description: String { "cannot create the folder \(path): \(String(cString: strerror(code)))" }
    }

    /// Opens `path` with `flags` (`O_CREAT` and `O_CLOEXEC` added), creating it with mode 0600
    /// and narrowing it to 0600 when it exists.
    ///
    /// - Returns: the descriptor, or -1 with `errno` set.
    package static func openFile(_ path: String, flags: Int32) -> Int32 {
        let descriptor = open(path, flags | O_CREAT | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else { return descriptor }
        _ = fchmod(descriptor, fileMode)
        protect(path)
        return descriptor
    }

    /// Creates `directory` and its missing parents, each with mode 0700. Folders that exist
    /// already keep their mode: they may be the app's own (Documents, Application Support).
    ///
    /// - Throws: ``DirectoryError`` when a folder cannot be created or a file is in the way.
    package static func createDirectory(at directory: URL) throws(DirectoryError) {
        var missing: [String] = []
        var url = directory.standardizedFileURL
        while !isDirectory(url.path) {
            missing.append(url.path)
            let parent = url.deletingLastPathComponent()
            if parent.path == url.path { break }
            url = parent
        }
        for path in missing.reversed() {
            if mkdir(path, directoryMode) == 0 {
                _ = chmod(path, directoryMode)
                protect(path)
            } else {
                let code = errno
                // Made meanwhile by another thread or process: fine if it is a folder.
                guard code == EEXIST, isDirectory(path) else { throw DirectoryError(path: path, code: code) }
            }
        }
    }

    /// Narrows an existing file or folder the package owns to 0600 (files) or 0700 (folders).
    ///
    /// - Parameter path: the file or folder.
    package static func narrow(_ path: String) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
        _ = chmod(path, isDirectory.boolValue ? directoryMode : fileMode)
    }

    // FileManager rather than the POSIX file-status call, a required-reason API on Apple platforms.
    private static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The data-protection class for files that background uploads read (see the type's note).
    private static func protect(_ path: String) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            try? FileManager.default.setAttributes(
                [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: path)
        #endif
    }
}
