import Foundation
import MeasurementEvents

/// The ids a tracker sends: an anonymous id made once per directory (file `anonymous-id`),
/// and the user id the app set (file `user-id`), both kept across launches.
struct DeliveryIdentity {
    let anonymousID: String
    let userID: String?

    init(directory: URL) throws {
        let anonymousURL = directory.appendingPathComponent("anonymous-id")
        if let stored = try? String(contentsOf: anonymousURL, encoding: .utf8),
           !stored.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        {
            anonymousID = stored.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            let made = UUID().uuidString.lowercased()
            do {
                try Data(made.utf8).write(to: anonymousURL, options: .atomic)
            } catch {
                throw HTTPTracker.SetupError.unreadableIdentity(path: anonymousURL.path, underlying: "\(error)")
            }
            anonymousID = made
        }
        let user = try? String(contentsOf: directory.appendingPathComponent("user-id"), encoding: .utf8)
        userID = user.flatMap { $0.isEmpty ? nil : $0 }
    }

    static func storeUserID(_ userID: String?, directory: URL) throws {
        let url = directory.appendingPathComponent("user-id")
        if let userID {
            try Data(userID.utf8).write(to: url, options: .atomic)
        } else if FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.removeItem(at: url)
        }
    }
}
