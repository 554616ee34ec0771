import MeasurementEvents

/// Removes personal data from events, or replaces it by a salted SHA-256 hash, before any
/// tracker sees it.
///
/// ```swift
/// let privacy = PersonalDataProcessor(
///     personalArgs: ["email", "phone"],                     // in every event
///     personalArgsByEvent: ["checkout/paid": ["card_holder"]],
///     treatment: .hash(salt: appSecretSalt))
/// let aggregator = EventAggregator(filter: filter, trackers: trackers, processors: [privacy])
/// ```
///
/// The generated per-event maps fit as they are (`personalArgsByEvent: DemoFeedEvents.personalDataArgs`),
/// and ``init(catalogs:treatment:)`` takes several modules' catalogs at once. An aggregator given
/// the catalogs (``EventAggregator/Configuration/catalogs``) hashes their personal args itself:
/// this processor is for other rules, or for removing instead of hashing.
///
/// With ``Treatment/hash(salt:)`` a value becomes `"sha256:" + hex(SHA-256(salt + value))`:
/// stable, so that the vendor can still count distinct values, but not readable. Use a
/// secret salt of your own; without one, common values (emails) can be guessed back.
public struct PersonalDataProcessor: EventProcessor {
    /// What happens to a personal arg.
    public enum Treatment: Sendable, Equatable {
        /// The arg is removed.
        case remove
        /// The arg's value is replaced by `"sha256:<64 hex digits>"` of salt + value.
        case hash(salt: String)
    }

    /// Args treated as personal in every event.
    public let personalArgs: Set<String>
    /// Args treated as personal in some events only (from a catalog's `personalDataArgs`).
    public let personalArgsByEvent: [EventName: Set<String>]
    /// What happens to a personal arg.
    public let treatment: Treatment

    /// A processor.
    ///
    /// - Parameters:
    ///   - personalArgs: args treated as personal in every event; none by default.
    ///   - personalArgsByEvent: args treated as personal in some events only, as the generated
    ///     `<Module>Events.personalDataArgs` lists them.
    ///   - treatment: remove (the default) or hash.
    public init(
        personalArgs: Set<String> = [],
        personalArgsByEvent: [EventName: Set<String>] = [:],
        treatment: Treatment = .remove
    ) {
        self.personalArgs = personalArgs
        self.personalArgsByEvent = personalArgsByEvent
        self.treatment = treatment
    }

    /// A processor for a generated per-event map as it is:
    /// `PersonalDataProcessor(personalArgs: CheckoutEvents.personalDataArgs)`.
    ///
    /// - Parameters:
    ///   - personalArgs: args treated as personal, by event (a generated `<Module>Events.personalDataArgs`).
    ///   - treatment: remove (the default) or hash.
    public init(personalArgs: [EventName: Set<String>], treatment: Treatment = .remove) {
        self.init(personalArgsByEvent: personalArgs, treatment: treatment)
    }

    /// A processor for the args that `catalogs` mark `"pii": true`, each for its own event
    /// (merged as ``RegisteredCatalogs`` merges them).
    ///
    /// - Parameters:
    ///   - catalogs: the generated `<Module>Events.catalog` values.
    ///   - treatment: remove (the default) or hash.
    public init(catalogs: [EventCatalog], treatment: Treatment = .remove) {
        self.init(personalArgsByEvent: RegisteredCatalogs(catalogs).personalDataArgs, treatment: treatment)
    }

    /// Whether `event` has an arg this processor removes or hashes.
    func treatsArgs(of event: MeasurementEvent) -> Bool {
        let extra = personalArgsByEvent[event.name]
        if personalArgs.isEmpty && extra == nil { return false }
        return event.args.keys.contains { personalArgs.contains($0) || extra?.contains($0) == true }
    }

    /// Removes or hashes the personal args of `event`.
    ///
    /// - Parameter event: the kept event.
    /// - Returns: the event without readable personal data.
    public func process(_ event: MeasurementEvent) -> MeasurementEvent? {
        guard treatsArgs(of: event) else { return event }
        let extra = personalArgsByEvent[event.name]
        var event = event
        for key in Array(event.args.keys) where personalArgs.contains(key) || extra?.contains(key) == true {
            switch treatment {
            case .remove:
                event.args[key] = nil
            case .hash(let salt):
                event.args[key] = .string(Self.hashed(event.args[key]!, salt: salt))
            }
        }
        return event
    }

    /// The replacement for `value` under ``Treatment/hash(salt:)``.
    ///
    /// - Parameters:
    ///   - value: the arg's value.
    ///   - salt: the secret salt.
    /// - Returns: `"sha256:"` and 64 lowercase hexadecimal digits.
    public static func hashed(_ value: EventValue, salt: String) -> String {
        "sha256:" + SHA256.hexDigest(of: Array(salt.utf8) + Array(value.description.utf8))
    }
}
