import Foundation
import MeasurementEvents

/// The identity setup that loses data in silence, said once in debug builds (issue 30): identity
/// kept in memory in an app on an Apple platform makes every launch a new user.
enum IdentitySetupCheck {
    /// Whether to report ``EventAggregator/Problem/identityInMemory`` for `store`: a debug build
    /// on an Apple platform, once per process, when ``keepsAnAppsIdentityInMemory(_:environment:bundleIdentifier:)``.
    static func warnsOfMemoryStore(_ store: any IdentityStore) -> Bool {
        #if DEBUG && canImport(Darwin)
            guard
                keepsAnAppsIdentityInMemory(
                    store, environment: ProcessInfo.processInfo.environment,
                    bundleIdentifier: Bundle.main.bundleIdentifier)
            else { return false }
            return warned.withLock { warned in
                defer { warned = true }
                return !warned
            }
        #else
            return false
        #endif
    }

    /// Whether `store` keeps identity in memory in an app: an ``InMemoryIdentityStore`` in a
    /// process with a bundle identifier (an app or an app extension; a server or a command-line
    /// tool started with `swift run` has none, and keeps identity in memory on purpose, as
    /// ``EventAggregator/Configuration/server`` does), outside XCTest, Swift Testing and SwiftUI
    /// previews (where it is the right choice).
    static func keepsAnAppsIdentityInMemory(
        _ store: any IdentityStore, environment: [String: String], bundleIdentifier: String?
    ) -> Bool {
        store is InMemoryIdentityStore && bundleIdentifier != nil && !isTestOrPreview(environment)
    }

    /// The folder of `store` when it is a ``FileIdentityStore`` in an App Group container, for
    /// ``EventAggregator/Problem/identityStoreInAppGroupContainer(path:)`` (every build: the
    /// kill it leads to happens in release builds).
    static func appGroupDirectory(of store: any IdentityStore) -> String? {
        guard let store = store as? FileIdentityStore, PrivateFiles.isInAppGroupContainer(store.directory) else {
            return nil
        }
        return store.directory.path
    }

    /// Whether `environment` is a test run or a SwiftUI preview's.
    static func isTestOrPreview(_ environment: [String: String]) -> Bool {
        environment["XCTestConfigurationFilePath"] != nil || environment["XCTestSessionIdentifier"] != nil
            || environment["XCTestBundlePath"] != nil || environment["SWIFT_TESTING_ENABLED"] != nil
            || environment["XCODE_RUNNING_FOR_PREVIEWS"] == "1"
    }

    private static let warned = LockedValue(false)
}

/// Whether the app ever decided consent, for ``EventAggregator/Problem/consentNeverDecided(_:)``:
/// an aggregator whose consent starts pending and never hears ``EventAggregator/setConsent(_:)``
/// sends nothing, in silence.
final class ConsentDecisionCheck: Sendable {
    private struct State {
        var decided = false
        var reported = false
    }

    private let state = LockedValue(State())

    /// Called by ``EventAggregator/setConsent(_:)``.
    func decided() {
        state.withLock { $0.decided = true }
    }

    /// The problem to report, the first time only: a debug build, consent pending, trackers to
    /// send to, and no decision yet.
    func problem(consent: Consent, hasTrackers: Bool) -> EventAggregator.Problem? {
        #if DEBUG
            guard consent == .pendingHolding || consent == .pendingDiscarding, hasTrackers else { return nil }
            let first = state.withLock { state -> Bool in
                guard !state.decided, !state.reported else { return false }
                state.reported = true
                return true
            }
            return first ? .consentNeverDecided(consent) : nil
        #else
            return nil
        #endif
    }
}

extension EventAggregator {
    /// Reports, once, that consent is pending and was never decided (see
    /// ``ConsentDecisionCheck``). Outside every lock: the handler is user code.
    func reportIfConsentNeverDecided() {
        // Consent is pending while the identity store cannot be read yet: not the app's doing.
        let (hasTrackers, storeNotReadableYet) = state.withLock { (!$0.trackers.isEmpty, $0.storeNotReadableYet) }
        guard !storeNotReadableYet else { return }
        if let problem = consentDecision.problem(consent: consent, hasTrackers: hasTrackers) {
            configuration.problemHandler?(problem)
        }
    }
}
