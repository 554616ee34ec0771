/// What the filter and the name rules said about a name, remembered per posting thread.
///
/// A module posts a few hundred constant names, so the same `String` (same bytes: the same
/// literal's storage, or the same small-string contents) comes back again and again. A
/// direct-mapped table indexed by a hash of the `String` value's own bytes answers in a few
/// instructions, without hashing the characters; `==` on a hit confirms it (immediate when the
/// storage is identical, and still correct when a freed string's address was reused).
/// Entries are valid for one filter generation; any filter change makes them all misses.
struct NameDecisionCache: ~Copyable {
    // Not Sendable: each instance belongs to one posting thread. Non-copyable rather than a
    // class: used in place, with no reference counting per post.
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
    private static let capacity = 1 << indexBits
    private let entries: UnsafeMutablePointer<Entry>

    init() {
        entries = .allocate(capacity: Self.capacity)
        // Generation -1 never matches: generations start at 0.
        entries.initialize(
            repeating: Entry(name: "", generation: -1, decision: Decision(allowed: false, isValid: false)),
            count: Self.capacity)
    }

    deinit {
        entries.deinitialize(count: Self.capacity)
        entries.deallocate()
    }

    /// The decision remembered for the `String` at `name`, read in place: loading the name out
    /// of the poster's frame retained and released it, twice per post.
    @inline(__always)
    func decision(for name: UnsafePointer<String>, generation: Int64) -> Decision? {
        let entry = entries + Self.slot(ofBytesAt: UnsafeRawPointer(name))
        guard entry.pointee.generation == generation else { return nil }
        // The same bytes (the same literal or storage): equal without looking further.
        let isSame = withUnsafePointer(to: &entry.pointee.name) {
            Self.isSameValue(UnsafeRawPointer($0), UnsafeRawPointer(name))
        }
        guard isSame || Self.isEqual(entry, name) else { return nil }
        return entry.pointee.decision
    }

    /// Whether two `String` values are the same bytes, word by word (a String is 16 bytes on
    /// 64-bit platforms, 12 on 32-bit watchOS).
    @inline(__always)
    private static func isSameValue(_ cached: UnsafeRawPointer, _ name: UnsafeRawPointer) -> Bool {
        let size = MemoryLayout<String>.size
        var offset = 0
        while offset + MemoryLayout<UInt>.size <= size {
            if cached.loadUnaligned(fromByteOffset: offset, as: UInt.self)
                != name.loadUnaligned(fromByteOffset: offset, as: UInt.self)
            {
                return false
            }
            offset += MemoryLayout<UInt>.size
        }
        while offset < size {
            if cached.load(fromByteOffset: offset, as: UInt8.self) != name.load(fromByteOffset: offset, as: UInt8.self)
            {
                return false
            }
            offset += 1
        }
        return true
    }

    /// `==` for names with different bytes (a name built at run time, equal to a cached one).
    @inline(never)
    private static func isEqual(_ entry: UnsafeMutablePointer<Entry>, _ name: UnsafePointer<String>) -> Bool {
        entry.pointee.name == name.pointee
    }

    func remember(_ decision: Decision, for name: String, generation: Int64) {
        let slot = withUnsafePointer(to: name) { Self.slot(ofBytesAt: UnsafeRawPointer($0)) }
        entries[slot] = Entry(name: name, generation: generation, decision: decision)
    }

    /// A hash of the `String` value's bytes at `name` (its size differs between platforms: 16
    /// bytes on 64-bit, 12 on 32-bit watchOS), not of its characters.
    @inline(__always)
    private static func slot(ofBytesAt name: UnsafeRawPointer) -> Int {
        let multiplier = UInt(truncatingIfNeeded: 0x9E37_79B9_7F4A_7C15 as UInt64)
        var hash: UInt = 0
        var offset = 0
        while offset + MemoryLayout<UInt>.size <= MemoryLayout<String>.size {
            hash = (hash ^ name.loadUnaligned(fromByteOffset: offset, as: UInt.self)) &* multiplier
            offset += MemoryLayout<UInt>.size
        }
        // The top bits are the ones every word was mixed into.
        return Int(truncatingIfNeeded: hash >> UInt(UInt.bitWidth - indexBits))
    }
}
