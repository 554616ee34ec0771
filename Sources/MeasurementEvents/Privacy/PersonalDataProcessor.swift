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
    ///   - personalArgs: args treated as personal in every event.
    ///   - personalArgsByEvent: args treated as personal in some events only.
    ///   - treatment: remove (the default) or hash.
    public init(
        personalArgs: Set<String>,
        personalArgsByEvent: [EventName: Set<String>] = [:],
        treatment: Treatment = .remove
    ) {
        self.personalArgs = personalArgs
        self.personalArgsByEvent = personalArgsByEvent
        self.treatment = treatment
    }

    /// Removes or hashes the personal args of `event`.
    ///
    /// - Parameter event: the kept event.
    /// - Returns: the event without readable personal data.
    public func process(_ event: MeasurementEvent) -> MeasurementEvent? {
        let extra = personalArgsByEvent[event.name]
        guard event.args.keys.contains(where: { personalArgs.contains($0) || extra?.contains($0) == true }) else {
            return event
        }
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
