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

/// Who holds a ``FileIdentityStore``'s directory: one process at a time, and in that process
/// every store on it, together.
///
/// The process holds an exclusive `flock` on `identity.lock` in the directory (mode 0600, empty;
/// the directory is created with mode 0700, and both get the data-protection class of
/// `PrivateFiles` on iOS, tvOS, watchOS and visionOS) for as long as one of its stores holds the
/// directory. `flock` locks belong to an open file description, and the process opens the lock
/// once per directory (`SharedIdentityDirectory`, found in a registry of the process by the
/// directory's real path): a store in another process is refused, and the lock goes with the
/// process when it dies, so no stale lock survives a crash. The stores of this process on one
/// directory (one per aggregator) share it: they read what was saved last, by any of them, and
/// write in turns (see `SharedIdentityDirectory.file`). A store refused writes nothing to the
/// directory (nothing is corrupted by two writers); its aggregator keeps identity in memory and
/// reports it once.
///
/// One object per store value: ``release()`` lets the directory go (an aggregator's `stop()`),
/// and so does the object's end.
final class IdentityStoreOwnership: Sendable {
    enum Claim {
        /// Held, with the other stores of this process on the directory.
        case held(SharedIdentityDirectory)
        /// Another process holds the directory: final for this store (taking it over later
        /// would overwrite the other process's identity with this one's), in words naming the
        /// path.
        case inUse(String)
        /// The directory cannot be used now (a file in its place, a read-only or full volume):
        /// tried again at the next save, in words naming the path.
        case unusable(String)
        /// The directory or its lock may not be opened yet (`EPERM`, `EACCES`: before the first
        /// unlock on iOS, see `PrivateFiles.isNotPermittedYet`): nothing is made or
        /// replaced, and the claim is tried again at the next load or save.
        case notYetAvailable(String)
    }

    private enum Held {
        case directory(SharedIdentityDirectory)
        case inUse(String)
    }

    private let directory: URL
    private let excludedFromBackup: Bool
    /// What this store holds; `nil` before its first claim and after ``release()``.
    private let held = LockedValue<Held?>(nil)

    init(directory: URL, excludedFromBackup: Bool) {
        self.directory = directory
        self.excludedFromBackup = excludedFromBackup
    }

    deinit {
        release()
    }

    /// Holds the directory (creating it, mode 0700) until it is held or found in use by another
    /// process, and answers the same after, until ``release()``.
    func claim() -> Claim {
        held.withLock { held in
            switch held {
            case .directory(let shared): return .held(shared)
            case .inUse(let problem): return .inUse(problem)
            case nil: break
            }
            let claim = SharedIdentityDirectory.hold(directory, excludedFromBackup: excludedFromBackup)
            switch claim {
            case .held(let shared): held = .directory(shared)
            case .inUse(let problem): held = .inUse(problem)
            case .unusable, .notYetAvailable: break
            }
            return claim
        }
    }

    /// Lets the directory go: the process's lock on it is released once no other store of the
    /// process holds it. A later load or save claims it again.
    func release() {
        let released = held.withLock { held -> SharedIdentityDirectory? in
            defer { held = nil }
            if case .directory(let shared) = held { return shared }
            return nil
        }
        released?.release()
    }
}

/// A directory of identity stores as this process holds it: the lock on `identity.lock`, once,
/// and what `identity.json` holds as the process last read or wrote it. One per directory while
/// any ``FileIdentityStore`` of the process holds it (counted in the registry).
final class SharedIdentityDirectory: Sendable {
    /// What the file holds as this process last read or wrote it, behind the lock every read
    /// and write of the file is made under (so the stores of two aggregators take turns).
    struct File {
        /// Whether ``contents`` was read or written (it is unknown before the first load, and
        /// after a load that found damage or could not read, until the next save).
        var isKnown = false
        var contents: IdentityStoreContents?
    }

    /// Taken with no other lock held, around the file's reads and writes (delivery context
    /// only, or an app's own call of `load()` or `save(_:)`).
    let file = LockedValue(File())

    /// Bumped whenever a save changes the identity or salt a store of this process holds: an
    /// aggregator that saw another value looks at its store's (one load a round, see
    /// `AttributionState.takeSharedIdentity()`).
    static let identityChanges = AtomicCounter()

    private let path: String
    private let descriptor: Int32

    private struct Entry {
        let directory: SharedIdentityDirectory
        var holders: Int
    }

    /// The directories held by this process, by real path. Taken alone: claiming and releasing
    /// make only the directory's, the lock file's and the `flock`'s system calls under it.
    private static let registry = LockedValue<[String: Entry]>([:])

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Holds `directory` for one more store: the process's, when it holds it already; else
    /// claimed now (created, mode 0700; its lock file opened and locked).
    static func hold(_ directory: URL, excludedFromBackup: Bool) -> IdentityStoreOwnership.Claim {
        do {
            try PrivateFiles.createDirectory(at: directory)
        } catch {
            if PrivateFiles.isNotPermittedYet(error.code) {
                return .notYetAvailable("cannot be read yet: \(error)")
            }
            if error.code == EEXIST || error.code == ENOTDIR {
                return .unusable("cannot be written: \(error.path) is not a directory (a file is in its place)")
            }
            return .unusable("cannot be written: \(error)")
        }
        let path = realPath(directory.path)
        return registry.withLock { entries -> IdentityStoreOwnership.Claim in
            if var entry = entries[path] {
                entry.holders += 1
                entries[path] = entry
                return .held(entry.directory)
            }
            let lockPath = path + "/identity.lock"
            let opened = PrivateFiles.openFile(lockPath, flags: O_RDWR)
            guard opened >= 0 else {
                let code = errno
                if PrivateFiles.isNotPermittedYet(code) {
                    return .notYetAvailable(
                        "cannot be read yet: cannot open \(lockPath): \(IdentityStoreFile.words(code))")
                }
                return .unusable("cannot be written: cannot open \(lockPath): \(IdentityStoreFile.words(code))")
            }
            guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                close(opened)
                if code == EWOULDBLOCK {
                    return .inUse("is in use by another process (\(lockPath) is locked)")
                }
                return .unusable("cannot be locked: \(IdentityStoreFile.words(code)) (\(lockPath))")
            }
            if excludedFromBackup { PrivateFiles.excludeFromBackup(directory) }
            let shared = SharedIdentityDirectory(path: path, descriptor: opened)
            entries[path] = Entry(directory: shared, holders: 1)
            return .held(shared)
        }
    }

    /// One store fewer holds the directory; the last one closes the lock (and with it the
    /// `flock`), so that another process may claim it.
    func release() {
        Self.registry.withLock { entries in
            guard var entry = entries[path], entry.directory === self else { return }
            entry.holders -= 1
            if entry.holders > 0 {
                entries[path] = entry
            } else {
                entries[path] = nil
                close(descriptor)
            }
        }
    }

    /// `path` with symbolic links, `.` and `..` resolved, so that two spellings of a directory
    /// are one entry; as it is when it cannot be resolved.
    private static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
