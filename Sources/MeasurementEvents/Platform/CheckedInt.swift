/// The range of `Int` on the platform a conversion is for.
///
/// `Int` is 32 bits on Apple Watch (arm64_32) and 64 bits elsewhere. Conversions of values
/// from outside take the range as a parameter, so that a test on a 64-bit machine runs the
/// very code a watch runs, with ``int32`` limits.
package struct IntRange: Sendable, Equatable {
    package let min: Int64
    package let max: Int64

    /// The range of `Int` where this code runs.
    package static let native = IntRange(min: Int64(Int.min), max: Int64(Int.max))
    /// The range of `Int` on Apple Watch.
    package static let int32 = IntRange(min: Int64(Int32.min), max: Int64(Int32.max))

    // Only the two-complement ranges above: `checkedInt(_: Double)` relies on max == -min - 1.
    private init(min: Int64, max: Int64) {
        self.min = min
        self.max = max
    }
}

/// `value` as an `Int`, or nil when it falls outside `limit` (never traps).
///
/// ```swift
/// checkedInt(Int64(3_000_000_000))                  // 3000000000 on 64 bits, nil on a watch
/// checkedInt(Int64(3_000_000_000), limit: .int32)   // nil
/// ```
package func checkedInt<Source: BinaryInteger>(_ value: Source, limit: IntRange = .native) -> Int? {
    // Comparisons between integer types are exact whatever their widths.
    guard value >= limit.min, value <= limit.max else { return nil }
    return Int(exactly: value)
}

/// `value` as an `Int` when it is a whole number within `limit`; nil for fractions, NaN,
/// infinities and out-of-range values (never traps). Round first to accept fractions.
package func checkedInt(_ value: Double, limit: IntRange = .native) -> Int? {
    // -Double(limit.min) is 2^31 or 2^63, exact in a Double, unlike Double(limit.max).
    guard value.isFinite, value >= Double(limit.min), value < -Double(limit.min) else { return nil }
    return Int(exactly: value)
}
