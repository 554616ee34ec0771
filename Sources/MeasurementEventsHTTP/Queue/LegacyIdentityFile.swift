import Foundation

/// The anonymous id that trackers before version 2 of the queue kept in their directory
/// (`anonymous-id`). Read only: it fills in the records those versions queued, and gives
/// events tracked without an aggregator the id this install had.
enum LegacyIdentityFile {
    /// The longest id read back; anything longer is not an id we wrote.
    static let maximumBytes = 1_024

    static func anonymousID(in directory: URL) -> String? {
        let path = directory.appendingPathComponent("anonymous-id").path
        // The size first (`contents` checks it before reading): a file that is not ours is not
        // read into memory. With open(2) and fstat(2), not FileManager: this runs at every start,
        // where FileManager's attributes cost 0.8 M instructions for a file that is rarely there.
        guard case .success(let bytes) = QueueFiles.contents(path, maximumBytes: maximumBytes),
            let text = String(bytes: bytes, encoding: .utf8)
        else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }
}
