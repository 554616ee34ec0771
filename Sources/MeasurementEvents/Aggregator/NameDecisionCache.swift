/// What the filter and the name rules said about a name, remembered per posting thread.
///
/// A module posts a few hundred constant names, so the same names come back again and again.
/// A direct-mapped table indexed by a few of the name's UTF-8 bytes (its length, its middle and
/// last bytes: constant time for a native string) answers without hashing every character;
/// `==` on the entry confirms it, so a collision is only a miss, never a wrong answer.
/// Entries are valid for one filter generation; any filter change makes them all misses.
final class NameDecisionCache {
    // Not Sendable: each instance belongs to one posting thread.
    /// Two flags, no reference: reading one from the cache retains nothing.
    struct Decision {
        var allowed: Bool
        /// Whether the bus accepts the name (``EventName/validationFailure`` is nil); the
        /// reason is worked out again for the rare name it rejects.
        var isValid: Bool
    }

    private struct Entry {
        var name: String
        var generation: Int64
        var decision: Decision
    }

    private static let indexBits = 6
    // Generation -1 never matches: generations start at 0.
    private var entries = [Entry](
        repeating: Entry(name: "", generation: -1, decision: Decision(allowed: false, isValid: false)),
        count: 1 << indexBits)

    /// The decision remembered for `name` under the filter generation `generation`.
    @inline(__always)
    func decision(for name: String, generation: Int64) -> Decision? {
        let index = Self.index(of: name)
        guard entries[index].generation == generation, entries[index].name == name else { return nil }
        return entries[index].decision
    }

    func remember(_ decision: Decision, for name: String, generation: Int64) {
        entries[Self.index(of: name)] = Entry(name: name, generation: generation, decision: decision)
    }

    @inline(__always)
    private static func index(of name: String) -> Int {
        let utf8 = name.utf8
        let count = utf8.count
        guard count > 0 else { return 0 }
        let middle = utf8[utf8.index(utf8.startIndex, offsetBy: count / 2)]
        let last = utf8[utf8.index(before: utf8.endIndex)]
        let mixed = (UInt(truncatingIfNeeded: count) &* 31 &+ UInt(middle)) &* 31 &+ UInt(last)
        return Int(truncatingIfNeeded: mixed & UInt((1 << indexBits) - 1))
    }
}
