import Foundation

/// Makes random (version 4) UUIDs quickly.
///
/// Foundation's `UUID()` reads the system's random source on every call, which costs about
/// 3 µs on Linux: more than a whole notification post. This generator seeds a xoshiro256**
/// state once from the system source and then needs a few nanoseconds per id. Ids only need
/// to be unique, not unpredictable.
@usableFromInline package struct EventIDGenerator: Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    /// A generator seeded from the system's random source.
    package init() {
        var system = SystemRandomNumberGenerator()
        state = (system.next(), system.next(), system.next(), system.next())
        if state == (0, 0, 0, 0) { state.0 = 0x9E37_79B9_7F4A_7C15 }
    }

    /// A generator with a fixed seed, for reproducible tests.
    ///
    /// - Parameter seed: the seed; the same seed gives the same ids.
    package init(seed: UInt64) {
        var splitmix = seed
        func next() -> UInt64 {
            splitmix &+= 0x9E37_79B9_7F4A_7C15
            var z = splitmix
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (next(), next(), next(), next())
    }

    private mutating func nextWord() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let t = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= t
        state.3 = rotate(state.3, 45)
        return result
    }

    private func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// The next random (version 4) UUID.
    package mutating func next() -> UUID {
        // The 16 bytes are the two words, most significant byte first, with the version (4) in
        // the high nibble of byte 6 and the variant (10) in the top bits of byte 8: stored as
        // two big-endian words, not assembled byte by byte (about 40 instructions an id).
        let high = (nextWord() & ~0xF000) | 0x4000
        let low = (nextWord() & ~(0xC0 << 56)) | (0x80 << 56)
        let words = (high.bigEndian, low.bigEndian)
        return UUID(uuid: withUnsafeBytes(of: words) { $0.load(as: uuid_t.self) })
    }

    private static let shared = LockedValue(EventIDGenerator())

    /// A new id from a process-wide generator.
    @usableFromInline package static func makeID() -> UUID {
        shared.withLock { $0.next() }
    }
}
