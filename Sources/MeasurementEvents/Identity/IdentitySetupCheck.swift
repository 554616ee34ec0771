import Foundation

/// The identity setup that loses data in silence, said once in debug builds (issue 30): identity
/// kept in memory in an app on an Apple platform makes every launch a new user.
enum IdentitySetupCheck {
    /// Whether to report ``EventAggregator/Problem/identityInMemory`` for `store`: a debug build
    /// on an Apple platform, an ``InMemoryIdentityStore``, outside XCTest, Swift Testing and
    /// SwiftUI previews (where it is the right choice), once per process.
    static func warnsOfMemoryStore(_ store: any IdentityStore) -> Bool {
        #if DEBUG && canImport(Darwin)
            guard store is InMemoryIdentityStore, !isTestOrPreview(ProcessInfo.processInfo.environment) else {
                return false
            }
            return warned.withLock { warned in
                defer { warned = true }
                return !warned
            }
        #else
            return false
        #endif
    }

    /// Whether `environment` is a test run or a SwiftUI preview's.
    static func isTestOrPreview(_ environment: [String: String]) -> Bool {
        environment["XCTestConfigurationFilePath"] != nil || environment["XCTestSessionIdentifier"] != nil
            || environment["XCTestBundlePath"] != nil || environment["SWIFT_TESTING_ENABLED"] != nil
            || environment["XCODE_RUNNING_FOR_PREVIEWS"] == "1"
    }

    private static let warned = LockedValue(false)
}
