import Foundation
import MeasurementEvents

/// Where an aggregator remembers identity, consent and the current session across launches.
///
/// Two ship: ``FileIdentityStore`` (a JSON file; ``FileIdentityStore/standard``, in a per-user,
/// per-app directory, is the default) and ``InMemoryIdentityStore`` (`.inMemory`: for tests and
/// previews, a new anonymous id every launch).
///
/// ```swift
/// var configuration = EventAggregator.Configuration()  // identityStore: .standard
/// configuration.identityStore = .inMemory  // a test or a preview
/// ```
///
/// The aggregator calls a store from its delivery queue only, one call at a time.
public protocol IdentityStore: Sendable {
    /// What was saved last, or `nil` when nothing was ever saved. Throws when something is
    /// there but cannot be read; the aggregator reports it and starts afresh.
    func load() throws -> IdentityStoreContents?
    /// Replaces what is saved, atomically.
    ///
    /// - Parameter contents: what to remember.
    /// - Throws: any error; the aggregator reports it and keeps going.
    func save(_ contents: IdentityStoreContents) throws
}

/// Everything an ``IdentityStore`` keeps.
public struct IdentityStoreContents: Sendable, Equatable, Codable {
    /// The anonymous id, user id, traits and group.
    public var identity: EventIdentity
    /// The consent the app gave last; `nil` when it never said.
    public var consent: Consent?
    /// The session in progress when the app last saved.
    public var session: Session?
    /// The app version and build of the previous launch, for telling an install from an update.
    public var appVersion: String?
    /// The app build of the previous launch.
    public var appBuild: String?
    /// The salt of the personal-data hashes of this install (32 random bytes in hexadecimal),
    /// made with the anonymous id and replaced with it by ``EventAggregator/forgetUser()``;
    /// unused when ``EventAggregator/Configuration/personalDataSalt`` is set. Never sent, never
    /// logged. `nil` in a store written before 3.0.0: a salt is made at the next launch.
    public var personalDataSalt: String?
    /// The purposes that have a consent of their own (``EventAggregator/setConsent(_:for:)``),
    /// by the purpose's name; `nil` when none has.
    public var purposeConsents: [String: Consent]?

    /// The contents of a store.
    ///
    /// - Parameters:
    ///   - identity: the anonymous id, user id, traits and group.
    ///   - consent: the consent the app gave last.
    ///   - session: the session in progress.
    ///   - appVersion: the app version of the previous launch.
    ///   - appBuild: the app build of the previous launch.
    ///   - personalDataSalt: the salt of this install's personal-data hashes.
    public init(
        identity: EventIdentity, consent: Consent? = nil, session: Session? = nil,
        appVersion: String? = nil, appBuild: String? = nil, personalDataSalt: String? = nil
    ) {
        self.identity = identity
        self.consent = consent
        self.session = session
        self.appVersion = appVersion
        self.appBuild = appBuild
        self.personalDataSalt = personalDataSalt
    }
}

/// Keeps the contents in memory: for tests, and for apps that want nothing on disk.
public final class InMemoryIdentityStore: IdentityStore, @unchecked Sendable {
    // @unchecked: the contents sit behind their lock.
    private let contents: LockedValue<IdentityStoreContents?>

    /// A store holding `contents`; empty by default.
    ///
    /// - Parameter contents: what the store starts with.
    public init(_ contents: IdentityStoreContents? = nil) {
        self.contents = LockedValue(contents)
    }

    public func load() throws -> IdentityStoreContents? { contents.withLock { $0 } }

    /// Keeps `contents` in memory.
    ///
    /// - Parameter contents: what to remember.
    public func save(_ contents: IdentityStoreContents) throws {
        self.contents.withLock { $0 = contents }
    }
}

extension IdentityStore where Self == InMemoryIdentityStore {
    /// An empty ``InMemoryIdentityStore``: for tests and previews (a new anonymous id, and a new
    /// salt for personal data, every time an aggregator is made).
    public static var inMemory: InMemoryIdentityStore { InMemoryIdentityStore() }
}

extension IdentityStore where Self == FileIdentityStore {
    /// ``FileIdentityStore/standard``: the default, in a per-user, per-app directory.
    public static var standard: FileIdentityStore { FileIdentityStore.standard }
}
