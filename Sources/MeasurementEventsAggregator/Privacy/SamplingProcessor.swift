import MeasurementEvents

/// Keeps only a share of some events, chosen deterministically per anonymous id: a given
/// install either always or never sends a sampled event, so per-user funnels stay whole.
///
/// ```swift
/// let sampling = SamplingProcessor(
///     anonymousID: tracker.anonymousID,
///     rates: ["feed/item_shown": 0.1, "scroll/*": 0.01])   // 10 %, 1 %
/// ```
///
/// Names without a rate are kept. Rates are matched like filter patterns: an exact name
/// first, then the longest matching `prefix/*`. The decision hashes the anonymous id and the
/// event name with SHA-256 and keeps the event when the hash, read as a fraction of 2^64,
/// is below the rate. Discarded events are counted by the aggregator as `discarded`.
public struct SamplingProcessor: EventProcessor {
    /// The id the decisions are made for: stable per install.
    public let anonymousID: String
    /// Keep rates from 0 to 1 by event name or `prefix/*`.
    public let rates: [String: Double]
    private let decisions = LockedValue<[EventName: Bool]>([:])

    /// A processor.
    ///
    /// - Parameters:
    ///   - anonymousID: an id stable per install.
    ///   - rates: keep rates from 0 to 1 by event name or `prefix/*`.
    public init(anonymousID: String, rates: [String: Double]) {
        self.anonymousID = anonymousID
        self.rates = rates
    }

    /// Passes `event` on when this install keeps its name; otherwise discards it.
    ///
    /// - Parameter event: the kept event.
    /// - Returns: the event, or `nil`.
    public func process(_ event: MeasurementEvent) -> MeasurementEvent? {
        if let cached = decisions.withLock({ $0[event.name] }) { return cached ? event : nil }
        let keep = keeps(event.name)
        decisions.withLock { cache in
            if cache.count > 10_000 { cache.removeAll() }
            cache[event.name] = keep
        }
        return keep ? event : nil
    }

    /// Whether this install keeps events named `name`.
    ///
    /// - Parameter name: an event name.
    /// - Returns: `true` when this install keeps it.
    public func keeps(_ name: EventName) -> Bool {
        guard let rate = rate(for: name) else { return true }
        if rate >= 1 { return true }
        if rate <= 0 { return false }
        return Self.fraction(anonymousID: anonymousID, name: name) < rate
    }

    /// The rate that applies to `name`, if any.
    ///
    /// - Parameter name: an event name.
    /// - Returns: the rate, or `nil` when none applies.
    public func rate(for name: EventName) -> Double? {
        if let exact = rates[name.rawValue] { return exact }
        var best: (length: Int, rate: Double)?
        for (pattern, rate) in rates where pattern.hasSuffix("/*") {
            let prefix = pattern.dropLast(1)
            if name.rawValue.hasPrefix(prefix), prefix.count > (best?.length ?? -1) {
                best = (prefix.count, rate)
            }
        }
        if best == nil, let all = rates["*"] { return all }
        return best?.rate
    }

    /// A number in [0, 1) fixed by the anonymous id and the name.
    ///
    /// - Parameters:
    ///   - anonymousID: the install's id.
    ///   - name: the event name.
    /// - Returns: the fraction.
    public static func fraction(anonymousID: String, name: EventName) -> Double {
        let digest = SHA256.digest(of: Array(anonymousID.utf8) + [0] + Array(name.rawValue.utf8))
        var word: UInt64 = 0
        for byte in digest.prefix(8) { word = word << 8 | UInt64(byte) }
        return Double(word >> 11) / Double(UInt64(1) << 53)
    }
}
