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
/// writes is created with mode 0600 and every folder of its own with 0700, set with `fchmod` and
/// `chmod` after creation so that no umask widens (or narrows) them; a file the package opens
/// again is narrowed to 0600 (a file an older version made 0644 included). Missing parents of a
/// folder of its own are the app's: created with the default mode, and nothing else.
///
/// On iOS, tvOS, watchOS and visionOS the files and the package's own folders also get the
/// data-protection class `completeUntilFirstUserAuthentication`: unreadable from the first boot until the user unlocks
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

    /// Creates `directory`, a folder of the package's own (a tracker's, its queue's, the
    /// identity store's), when missing: mode 0700 and the data-protection class. Its missing
    /// parents are the app's (its `Application Support`, its bundle identifier's folder): they are
    /// made as `mkdir -p` would, with the default mode (0777 less the umask) and no class. Folders
    /// that exist already keep their mode.
    ///
    /// - Throws: ``DirectoryError`` when a folder cannot be created or a file is in the way.
    package static func createDirectory(at directory: URL) throws(DirectoryError) {
        try create(directory, isOwn: true)
    }

    /// Creates `directory`, a folder the app named for a file of the package's
    /// (`JSONLinesFileTracker`'s), and its missing parents as `mkdir -p` would: the default mode
    /// and no class. The file itself is private.
    ///
    /// - Throws: ``DirectoryError`` when a folder cannot be created or a file is in the way.
    package static func createAppDirectory(at directory: URL) throws(DirectoryError) {
        try create(directory, isOwn: false)
    }

    private static func create(_ directory: URL, isOwn: Bool) throws(DirectoryError) {
        var missing: [String] = []
        var url = directory.standardizedFileURL
        while !isDirectory(url.path) {
            missing.append(url.path)
            let parent = url.deletingLastPathComponent()
            if parent.path == url.path { break }
            url = parent
        }
        for (index, path) in missing.enumerated().reversed() {
            let isPrivate = isOwn && index == 0
            if mkdir(path, isPrivate ? directoryMode : 0o777) == 0 {
                if isPrivate {
                    _ = chmod(path, directoryMode)
                    protect(path)
                }
            } else {
                let code = errno
                // Made meanwhile by another thread or process: fine if it is a folder.
                guard code == EEXIST, isDirectory(path) else { throw DirectoryError(path: path, code: code) }
            }
        }
    }

    /// Keeps `directory` out of the device's backups (Apple platforms; nothing elsewhere): an
    /// install's anonymous id and its queued events belong to this device, and a backup
    /// restored onto another would make two devices one user and send the queued events twice.
    /// `isExcludedFromBackup` (`NSURLIsExcludedFromBackupKey`) is Foundation's resource value for
    /// it, available on every Apple platform the package supports.
    ///
    /// - Parameter directory: a folder of the package's own.
    package static func excludeFromBackup(_ directory: URL) {
        #if canImport(Darwin)
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            var url = directory
            try? url.setResourceValues(values)
        #endif
    }

    /// Whether `code` says a file or folder may not be used *now* rather than that it is
    /// damaged: `EACCES` or `EPERM`. On iOS, tvOS, watchOS and visionOS a file of the
    /// protection class `completeUntilFirstUserAuthentication` cannot be opened from a reboot
    /// until the user first unlocks the device, and `open(2)` fails with `EPERM` then (an app
    /// launched in the background by a push, a background task or location); elsewhere a file
    /// or folder whose mode forbids it. Either way what is there is kept as it is and opened
    /// again later: the identity store's anonymous id stays the install's, and a tracker's
    /// queue is not replaced.
    ///
    /// - Parameter code: an `errno` value.
    package static func isNotPermittedYet(_ code: Int32) -> Bool { code == EACCES || code == EPERM }

    /// Whether `directory` is in an App Group container (`…/Shared/AppGroup/<id>/…` on iOS):
    /// iOS kills a suspended app that holds a file lock there (`0xdead10cc`), and the identity
    /// store and each `HTTPTracker` hold one on their folder for as long as they live.
    ///
    /// - Parameter directory: a folder of the package's own.
    package static func isInAppGroupContainer(_ directory: URL) -> Bool {
        directory.standardizedFileURL.path.contains("/Shared/AppGroup/")
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
