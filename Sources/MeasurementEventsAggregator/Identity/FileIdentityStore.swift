import Foundation
import MeasurementEvents

/// Keeps identity, consent and session in `identity.json` inside a directory the app names
/// (created when missing, mode 0700), written atomically (a new file of mode 0600, forced to
/// storage, renamed over the old one).
///
/// The store heals:
/// - Something at `identity.json` that cannot be read back (a directory in its place, a file the
///   process may not read, garbage, a file from a future version) is moved aside to
///   `identity.json.corrupt`, once, and reported once, saying what was found and what was done.
///   What can be recovered from it is kept: the anonymous id (and the consent) of a damaged file
///   whose text still holds them, so that one install keeps one anonymous id. Only when nothing
///   is recoverable does the aggregator start with a new anonymous id, and the report says so.
///   The next save writes a new file in its place.
/// - A store that cannot be written is reported at the first failed save of a launch; the
///   identity stays in memory, and later failures are not reported again until a save works.
/// - A store that may not be opened *yet* is not damage: on iOS, tvOS, watchOS and visionOS an
///   app launched in the background before the user first unlocks the device after a reboot
///   (a push, a background task, location) cannot open files of the protection class
///   `completeUntilFirstUserAuthentication` (`EPERM`); elsewhere the files' modes may forbid it
///   (`EACCES`). ``load()`` then throws an error whose ``IdentityStoreError/isNotReadableYet`` is
///   true, and nothing is moved aside, made or written: the aggregator holds events in memory
///   and loads the store again later (see "Identity and sessions").
///
/// One process owns a directory at a time: its first store to load holds a lock on
/// `identity.lock` beside the file for as long as a store of the process holds the directory
/// (see ``load()``). The other stores of the process on the directory share it: each reads what
/// any of them saved last, and they write in turns, so that the aggregators of one process share
/// the install's anonymous id and salt (see "Identity and sessions"). A store in another process
/// reports once that the directory is in use, writes nothing there, and its aggregator keeps
/// identity in memory.
///
/// ``standard`` (the default of ``EventAggregator/Configuration/identityStore``) is a store in
/// a per-user, per-app directory: see ``standardDirectory``.
///
/// - Important: Keep the directory in the app's own container, never in an App Group
///   container: the store holds a file lock there for as long as it lives, and iOS kills a
///   suspended app that holds one in a shared container (`0xdead10cc`). An aggregator made
///   with such a store reports ``EventAggregator/Problem/identityStoreInAppGroupContainer(path:)``.
///   The article "Identity and sessions" shows how an app extension can use the app's
///   anonymous id.
public struct FileIdentityStore: IdentityStore {
    /// The directory the store's file is in.
    public let directory: URL
    /// The store's file, `identity.json` in ``directory``.
    public var fileURL: URL { directory.appendingPathComponent("identity.json") }

    /// The largest file read back: a real one is under 100 KB even with 1,000 traits.
    public static let maximumFileBytes = 4 * 1024 * 1024

    /// Whether the last save failed: a failing store is reported once per episode, not per save.
    private let saveFailing = LockedValue(false)
    /// Whether this store holds ``directory``.
    private let ownership: IdentityStoreOwnership
    /// Whether ``directory`` is excluded from backups (``standard``'s is).
    private let excludedFromBackup: Bool

    /// A store in `directory`, which is created (mode 0700) at the first load or save.
    ///
    /// - Parameter directory: a directory in the app's own container.
    public init(directory: URL) {
        self.init(directory: directory, excludedFromBackup: false)
    }

    init(directory: URL, excludedFromBackup: Bool) {
        self.directory = directory
        self.excludedFromBackup = excludedFromBackup
        self.ownership = IdentityStoreOwnership(directory: directory, excludedFromBackup: excludedFromBackup)
    }

    /// A store on the same directory with a hold of its own: an aggregator's, which its `stop()`
    /// releases without touching the app's store value or another aggregator's.
    func withOwnHold() -> FileIdentityStore {
        FileIdentityStore(directory: directory, excludedFromBackup: excludedFromBackup)
    }

    /// What the stores of this process on ``directory`` saved or read last; `nil` when this store
    /// does not hold it or it is not known.
    var stored: IdentityStoreContents? {
        guard case .held(let shared) = ownership.claim() else { return nil }
        return shared.file.withLock { $0.isKnown ? $0.contents : nil }
    }

    /// Lets ``directory`` go (an aggregator's `stop()`): the process's lock on it is released
    /// once no other store of the process holds it. A later load or save holds it again.
    func release() {
        ownership.release()
    }

    /// What the file holds; `nil` when there is none. Anything else is moved aside and thrown as
    /// an ``IdentityStoreError`` whose ``IdentityStoreError/recovered`` holds what could be saved.
    ///
    /// The first load (or save) claims ``directory``: it creates it and locks `identity.lock`
    /// in it, unless another store of this process holds it already; then this one returns what
    /// the stores of the process saved last. When the directory cannot be used (a file in its
    /// place, a read-only or full volume) or another process holds it, the error names the path
    /// and says so; this store then writes nothing, and the aggregator keeps identity, consent
    /// and session in memory.
    public func load() throws -> IdentityStoreContents? {
        let shared: SharedIdentityDirectory
        switch ownership.claim() {
        case .held(let directory):
            shared = directory
        case .inUse(let problem):
            throw IdentityStoreError(
                path: directory.path,
                problem: problem
                    + "; identity, consent and session are kept in memory by this aggregator (a new anonymous "
                    + "id, and a new salt for personal data) and nothing is written there")
        case .notYetAvailable(let problem):
            throw Self.notReadableYet(directory.path, problem)
        case .unusable(let problem):
            // Reported here: the saves that fail after it are not reported again until one works.
            saveFailing.withLock { $0 = true }
            throw IdentityStoreError(
                path: directory.path,
                problem: problem
                    + "; identity, consent and session are kept in memory for now (a new anonymous id, and a "
                    + "new salt for personal data), and written there once it can be")
        }
        // Read each time (a load is rare: an aggregator's start, or a store not readable before),
        // so that what the file holds is what the stores of the process go on from.
        return try shared.file.withLock { file in
            do {
                let contents = try read()
                file = SharedIdentityDirectory.File(isKnown: true, contents: contents)
                return contents
            } catch {
                file = SharedIdentityDirectory.File()
                throw error
            }
        }
    }

    /// What ``fileURL`` holds, read (with the directory held, under its file lock); damage is
    /// moved aside and thrown.
    private func read() throws -> IdentityStoreContents? {
        let path = fileURL.path
        let found: String
        var recovered: IdentityStoreContents?
        switch IdentityStoreFile.contents(of: path, maximumBytes: Self.maximumFileBytes) {
        case .missing:
            return nil
        case .notReadableYet(let problem):
            throw Self.notReadableYet(path, problem)
        case .unreadable(let problem):
            found = problem
        case .bytes(let bytes):
            do {
                let contents: IdentityStoreContents
                do {
                    contents = try JSONDecoder().decode(IdentityStoreContents.self, from: Data(bytes))
                } catch {
                    throw IdentityStoreError(
                        path: path, problem: "is not a valid identity file (\(Self.describe(error)))")
                }
                try Self.check(contents, path: path)
                return contents
            } catch let error as IdentityStoreError {
                found = error.problem
                recovered = IdentityStoreSalvage.contents(in: bytes)
            }
        }
        var problem = found
        switch IdentityStoreFile.moveAside(path) {
        case .moved(let aside): problem += "; moved it aside to \(URL(fileURLWithPath: aside).lastPathComponent)"
        case .failed(let reason): problem += "; could not move it aside (\(reason))"
        }
        if let recovered {
            problem += "; kept the anonymous id it held (\(recovered.identity.anonymousID))"
            if let consent = recovered.consent { problem += " and its consent (\(consent.rawValue))" }
            if recovered.personalDataSalt != nil { problem += " and its salt for personal data" }
            problem += "; the user id, traits and session are lost"
            if recovered.personalDataSalt == nil {
                problem += "; its salt for personal data is lost: a new one is made, and hashes of personal data "
                problem += "change from now on"
            }
        } else {
            problem += "; nothing in it could be recovered, so this launch starts with a new anonymous id and a new "
            problem += "salt for personal data (hashes of personal data change from now on)"
        }
        throw IdentityStoreError(path: path, problem: problem, recovered: recovered)
    }

    /// Writes `contents` to ``fileURL`` atomically, creating the directory when missing.
    ///
    /// - Parameter contents: what to remember.
    /// - Throws: ``IdentityStoreError`` at the first failure of a launch (and again only after a
    ///   save worked); the aggregator keeps the identity in memory.
    public func save(_ contents: IdentityStoreContents) throws {
        _ = try save { _ in contents }
    }

    /// Saves what `merge` makes of what the store holds now (`nil` when nothing, or not known:
    /// never read, or damaged), in one turn with the other stores of this process on the
    /// directory, so that no save of theirs comes between; returns what was saved (`merge`'s
    /// result even when nothing could be written).
    ///
    /// - Throws: as ``save(_:)``.
    func save(
        merging merge: (IdentityStoreContents?) -> IdentityStoreContents
    ) throws -> IdentityStoreContents {
        let problem: String?
        let saved: IdentityStoreContents
        switch ownership.claim() {
        case .inUse:
            // Another process holds the directory (reported by load): nothing is written.
            return merge(nil)
        case .unusable(let reason), .notYetAvailable(let reason):
            problem = reason
            saved = merge(nil)
        case .held(let shared):
            (saved, problem) = shared.file.withLock { file in
                let current = file.isKnown ? file.contents : nil
                let contents = merge(current)
                let problem = write(contents)
                guard problem == nil else { return (contents, problem) }
                if current?.identity != contents.identity || current?.personalDataSalt != contents.personalDataSalt {
                    SharedIdentityDirectory.identityChanges.add(1)
                }
                file = SharedIdentityDirectory.File(isKnown: true, contents: contents)
                return (contents, nil)
            }
        }
        try reportFailure(problem)
        return saved
    }

    /// Writes `contents` to ``fileURL`` (the directory held); what went wrong, in words, or `nil`.
    private func write(_ contents: IdentityStoreContents) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return IdentityStoreFile.replace(
                fileURL.path, with: [UInt8](try encoder.encode(contents)), directory: directory)
        } catch {
            return "cannot be encoded (\(error))"
        }
    }

    /// Throws `problem` when it starts an episode of failing saves; notes whether saves fail.
    private func reportFailure(_ problem: String?) throws {
        let isFirstFailure = saveFailing.withLock { failing -> Bool in
            defer { failing = problem != nil }
            return problem != nil && !failing
        }
        guard let problem, isFirstFailure else { return }
        throw IdentityStoreError(
            path: fileURL.path,
            problem: problem
                + "; identity, consent and session are kept in memory for now, and later saves that fail "
                + "are not reported again until one works")
    }

    /// The store in ``standardDirectory``: the default of
    /// ``EventAggregator/Configuration/identityStore``.
    ///
    /// ```swift
    /// configuration.identityStore = .standard
    /// ```
    public static var standard: FileIdentityStore {
        FileIdentityStore(directory: standardDirectory, excludedFromBackup: true)
    }

    /// Where ``standard`` keeps `identity.json`, per user and per app:
    ///
    /// - Apple platforms: `Application Support/<bundle identifier>/MeasurementEvents` in the
    ///   app's container (the process name stands in for a missing bundle identifier), excluded
    ///   from backups (the anonymous id is the install's: a backup restored on another device
    ///   must not make two devices one user), with the data-protection class
    ///   `completeUntilFirstUserAuthentication` on iOS, tvOS, watchOS and visionOS;
    /// - Linux and other systems: `$XDG_STATE_HOME/<process name>/MeasurementEvents`, and
    ///   `~/.local/state/<process name>/MeasurementEvents` when `XDG_STATE_HOME` is not set to an
    ///   absolute path (the XDG Base Directory Specification's state directory).
    public static var standardDirectory: URL {
        let app = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        #if canImport(Darwin)
            let base =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent("Library/Application Support")
        #else
            let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"] ?? ""
            let base =
                state.hasPrefix("/")
                ? URL(fileURLWithPath: state)
                : URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".local/state")
        #endif
        return base.appendingPathComponent(app).appendingPathComponent("MeasurementEvents")
    }

    /// Deletes what a damaged store left beside it (`identity.json.corrupt`): it holds a user's
    /// identity too, and forgetting the user deletes it.
    func removeSetAside() {
        try? FileManager.default.removeItem(atPath: fileURL.path + ".corrupt")
    }

    /// The error of a store that may not be opened yet: nothing of it was touched.
    private static func notReadableYet(_ path: String, _ problem: String) -> IdentityStoreError {
        IdentityStoreError(
            path: path,
            problem: problem
                + " (before the device's first unlock, or the files' modes forbid it); it is kept as it is, events "
                + "wait in memory, and it is read again at the next delivery, return to the foreground or "
                + "protectedDataDidBecomeAvailable()",
            isNotReadableYet: true)
    }

    /// The ids read back obey the same rules as ids posted.
    private static func check(_ contents: IdentityStoreContents, path: String) throws {
        let identity = contents.identity
        let anonymousBytes = identity.anonymousID.utf8.count
        guard anonymousBytes > 0, anonymousBytes <= IdentityChange.maximumIDBytes else {
            throw IdentityStoreError(
                path: path,
                problem:
                    "has an anonymous id of \(anonymousBytes) bytes, expected 1 to \(IdentityChange.maximumIDBytes)")
        }
        do {
            _ = try IdentityChange.identify(userID: identity.userID, traits: identity.traits).validated()
            if let groupID = identity.groupID {
                _ = try IdentityChange.group(groupID: groupID, traits: identity.groupTraits).validated()
            }
        } catch {
            throw IdentityStoreError(path: path, problem: "holds an identity that is not valid: \(error.description)")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
            .valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "at \(path): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }
}

/// A store that could not be read or written.
public struct IdentityStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or directory concerned.
    public let path: String
    /// What went wrong.
    public let problem: String
    /// What could be recovered from a store that could not be read back whole (a damaged file
    /// whose anonymous id survived); the aggregator starts from it instead of a new identity.
    public let recovered: IdentityStoreContents?
    /// Whether the store may not be read *yet* rather than being damaged: its files are there
    /// but may not be opened now (before the device's first unlock after a reboot, or modes that
    /// forbid it). An aggregator keeps no identity of its own meanwhile: it holds events in
    /// memory and loads the store again later, so that the stored anonymous id stays the
    /// install's. A store of the app's own throws it for the same reason.
    public let isNotReadableYet: Bool

    /// An error.
    ///
    /// - Parameters:
    ///   - path: the file or directory concerned.
    ///   - problem: what went wrong.
    ///   - recovered: what could be recovered from the store, if anything.
    public init(path: String, problem: String, recovered: IdentityStoreContents? = nil) {
        self.init(path: path, problem: problem, recovered: recovered, isNotReadableYet: false)
    }

    /// An error that says whether the store may only be read later.
    ///
    /// ```swift
    /// throw IdentityStoreError(path: path, problem: "cannot be read yet", isNotReadableYet: true)
    /// ```
    ///
    /// - Parameters:
    ///   - path: the file or directory concerned.
    ///   - problem: what went wrong.
    ///   - recovered: what could be recovered from the store, if anything.
    ///   - isNotReadableYet: whether the store may only be read later (see ``isNotReadableYet``).
    public init(path: String, problem: String, recovered: IdentityStoreContents? = nil, isNotReadableYet: Bool) {
        self.path = path
        self.problem = problem
        self.recovered = recovered
        self.isNotReadableYet = isNotReadableYet
    }

    /// The store's path and what went wrong.
    public var description: String { "identity store \(path) \(problem)" }
}
