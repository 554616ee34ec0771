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

/// Which ``FileIdentityStore`` owns a directory: one at a time, in this process or another.
///
/// The owner holds an exclusive `flock` on `identity.lock` in the directory (mode 0600, empty;
/// the directory is created with mode 0700, and both get the data-protection class of
/// `PrivateFiles` on iOS, tvOS, watchOS and visionOS)
/// for as long as it lives. `flock` locks belong to an open file description, so a second store
/// on the same directory is refused whether it is in the same process or another one, and the
/// lock goes with the process when it dies: no stale lock survives a crash. A store that is not
/// the owner writes nothing to the directory (nothing is corrupted by two writers); its
/// aggregator keeps identity in memory and reports it once.
final class IdentityStoreOwnership: Sendable {
    enum Claim: Equatable {
        case owner
        /// Another store holds the directory: final for this store (taking it over later would
        /// overwrite the owner's identity with this one's), in words naming the path.
        case inUse(String)
        /// The directory cannot be used now (a file in its place, a read-only or full volume):
        /// tried again at the next save, in words naming the path.
        case unusable(String)
        /// The directory or its lock may not be opened yet (`EPERM`, `EACCES`: before the first
        /// unlock on iOS, see `PrivateFiles.isNotPermittedYet`): nothing is made or
        /// replaced, and the claim is tried again at the next load or save.
        case notYetAvailable(String)
    }

    private struct State {
        var claim: Claim?
        var descriptor: Int32 = -1
    }

    private let directory: URL
    private let excludedFromBackup: Bool
    private let state = LockedValue(State())

    init(directory: URL, excludedFromBackup: Bool) {
        self.directory = directory
        self.excludedFromBackup = excludedFromBackup
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 { close(descriptor) }
    }

    /// Claims the directory (creating it, mode 0700) until it is owned or found in use, and
    /// answers the same after.
    func claim() -> Claim {
        state.withLock { state in
            if let claim = state.claim { return claim }
            let claim = Self.claim(directory, descriptor: &state.descriptor)
            switch claim {
            case .unusable, .notYetAvailable: return claim
            case .owner, .inUse: break
            }
            state.claim = claim
            if claim == .owner, excludedFromBackup { PrivateFiles.excludeFromBackup(directory) }
            return claim
        }
    }

    private static func claim(_ directory: URL, descriptor: inout Int32) -> Claim {
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
        let path = directory.appendingPathComponent("identity.lock").path
        let opened = PrivateFiles.openFile(path, flags: O_RDWR)
        guard opened >= 0 else {
            let code = errno
            if PrivateFiles.isNotPermittedYet(code) {
                return .notYetAvailable("cannot be read yet: cannot open \(path): \(IdentityStoreFile.words(code))")
            }
            return .unusable("cannot be written: cannot open \(path): \(IdentityStoreFile.words(code))")
        }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(opened)
            if code == EWOULDBLOCK {
                return .inUse(
                    "is in use by another aggregator (in this process or another one; \(path) is locked)")
            }
            return .unusable("cannot be locked: \(IdentityStoreFile.words(code)) (\(path))")
        }
        descriptor = opened
        return .owner
    }
}
