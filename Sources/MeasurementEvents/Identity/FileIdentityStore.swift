import Foundation

/// Keeps identity, consent and session in `identity.json` inside a directory the app names
/// (created when missing), written atomically (a new file renamed over the old one).
///
/// A file that cannot be read back (damaged, hand-edited, from a future version) is moved aside
/// to `identity.json.corrupt` and reported; the aggregator then starts with a new identity.
public struct FileIdentityStore: IdentityStore {
    /// The directory the store's file is in.
    public let directory: URL
    /// The store's file, `identity.json` in ``directory``.
    public var fileURL: URL { directory.appendingPathComponent("identity.json") }

    /// The largest file read back: a real one is under 100 KB even with 1,000 traits.
    public static let maximumFileBytes = 4 * 1024 * 1024

    /// A store in `directory`, which is created at the first save.
    ///
    /// - Parameter directory: a directory in the app's own container.
    public init(directory: URL) {
        self.directory = directory
    }

    public func load() throws -> IdentityStoreContents? {
        let url = fileURL
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw IdentityStoreError(path: url.path, problem: "cannot be read (\(error.localizedDescription))")
        }
        do {
            guard data.count <= Self.maximumFileBytes else {
                throw IdentityStoreError(
                    path: url.path, problem: "has \(data.count) bytes, expected at most \(Self.maximumFileBytes)")
            }
            let contents: IdentityStoreContents
            do {
                contents = try JSONDecoder().decode(IdentityStoreContents.self, from: data)
            } catch {
                throw IdentityStoreError(
                    path: url.path, problem: "is not a valid identity file (\(Self.describe(error)))")
            }
            try Self.check(contents, path: url.path)
            return contents
        } catch let error as IdentityStoreError {
            moveAside(url)
            throw error
        }
    }

    /// Writes `contents` to ``fileURL`` atomically, creating the directory when missing.
    ///
    /// - Parameter contents: what to remember.
    /// - Throws: ``IdentityStoreError`` when the directory or the file cannot be written.
    public func save(_ contents: IdentityStoreContents) throws {
        do {
            try PrivateFiles.createDirectory(at: directory)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try encoder.encode(contents).write(to: fileURL, options: .atomic)
        } catch {
            throw IdentityStoreError(path: fileURL.path, problem: "cannot be written (\(error.localizedDescription))")
        }
    }

    private func moveAside(_ url: URL) {
        let aside = url.appendingPathExtension("corrupt")
        try? FileManager.default.removeItem(at: aside)
        if (try? FileManager.default.moveItem(at: url, to: aside)) == nil {
            try? FileManager.default.removeItem(at: url)
        }
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

    /// An error.
    ///
    /// - Parameters:
    ///   - path: the file or directory concerned.
    ///   - problem: what went wrong.
    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    /// The store's path and what went wrong.
    public var description: String { "identity store \(path) \(problem)" }
}
