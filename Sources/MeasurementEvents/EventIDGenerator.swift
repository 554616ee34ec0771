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
        let high = nextWord()
        let low = nextWord()
        func byte(_ word: UInt64, _ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * index)) }
        return UUID(
            uuid: (
                byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3),
                byte(high, 4), byte(high, 5), (byte(high, 6) & 0x0F) | 0x40, byte(high, 7),
                (byte(low, 0) & 0x3F) | 0x80, byte(low, 1), byte(low, 2), byte(low, 3),
                byte(low, 4), byte(low, 5), byte(low, 6), byte(low, 7)
            ))
    }

    private static let shared = LockedValue(EventIDGenerator())

    /// A new id from a process-wide generator.
    @usableFromInline package static func makeID() -> UUID {
        shared.withLock { $0.next() }
    }
}
