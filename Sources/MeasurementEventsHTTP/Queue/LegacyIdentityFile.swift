import Foundation

/// The anonymous id that trackers before version 2 of the queue kept in their directory
/// (`anonymous-id`). Read only: it fills in the records those versions queued, and gives
/// events tracked without an aggregator the id this install had.
enum LegacyIdentityFile {
    /// The longest id read back; anything longer is not an id we wrote.
    static let maximumBytes = 1_024

    static func anonymousID(in directory: URL) -> String? {
        let url = directory.appendingPathComponent("anonymous-id")
        // The size first: a file that is not ours is not read into memory.
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
        guard let size, size <= Int64(maximumBytes), let data = try? Data(contentsOf: url),
            let text = String(data: data, encoding: .utf8)
        else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }
}
