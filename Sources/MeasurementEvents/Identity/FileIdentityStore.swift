import Foundation

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
public struct FileIdentityStore: IdentityStore {
    /// The directory the store's file is in.
    public let directory: URL
    /// The store's file, `identity.json` in ``directory``.
    public var fileURL: URL { directory.appendingPathComponent("identity.json") }

    /// The largest file read back: a real one is under 100 KB even with 1,000 traits.
    public static let maximumFileBytes = 4 * 1024 * 1024

    /// Whether the last save failed: a failing store is reported once per episode, not per save.
    private let saveFailing = LockedValue(false)

    /// A store in `directory`, which is created at the first save.
    ///
    /// - Parameter directory: a directory in the app's own container.
    public init(directory: URL) {
        self.directory = directory
    }

    /// What the file holds; `nil` when there is none. Anything else is moved aside and thrown as
    /// an ``IdentityStoreError`` whose ``IdentityStoreError/recovered`` holds what could be saved.
    public func load() throws -> IdentityStoreContents? {
        let path = fileURL.path
        let found: String
        var recovered: IdentityStoreContents?
        switch IdentityStoreFile.contents(of: path, maximumBytes: Self.maximumFileBytes) {
        case .missing:
            return nil
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
            problem += "; the user id, traits and session are lost"
        } else {
            problem += "; nothing in it could be recovered, so this launch starts with a new anonymous id"
        }
        throw IdentityStoreError(path: path, problem: problem, recovered: recovered)
    }

    /// Writes `contents` to ``fileURL`` atomically, creating the directory when missing.
    ///
    /// - Parameter contents: what to remember.
    /// - Throws: ``IdentityStoreError`` at the first failure of a launch (and again only after a
    ///   save worked); the aggregator keeps the identity in memory.
    public func save(_ contents: IdentityStoreContents) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let problem: String?
        do {
            problem = IdentityStoreFile.replace(
                fileURL.path, with: [UInt8](try encoder.encode(contents)), directory: directory)
        } catch {
            problem = "cannot be encoded (\(error))"
        }
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

    /// Deletes what a damaged store left beside it (`identity.json.corrupt`): it holds a user's
    /// identity too, and forgetting the user deletes it.
    func removeSetAside() {
        try? FileManager.default.removeItem(atPath: fileURL.path + ".corrupt")
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

    /// An error.
    ///
    /// - Parameters:
    ///   - path: the file or directory concerned.
    ///   - problem: what went wrong.
    ///   - recovered: what could be recovered from the store, if anything.
    public init(path: String, problem: String, recovered: IdentityStoreContents? = nil) {
        self.path = path
        self.problem = problem
        self.recovered = recovered
    }

    /// The store's path and what went wrong.
    public var description: String { "identity store \(path) \(problem)" }
}
