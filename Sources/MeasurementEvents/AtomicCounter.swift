package import CMeasurementAtomics

/// A 64-bit integer that threads change without a lock (C11 atomics from our own C target).
/// Counters use relaxed increments: they order nothing, they only count.
///
/// A non-copyable struct rather than a class: stored in a class, it is used in place, with no
/// reference counting on the posting path.
package struct AtomicCounter: ~Copyable, @unchecked Sendable {
    // @unchecked: every access goes through the C11 atomic operations.
    // Invariant: `storage` is the C atomic this counter made, alive until its deinit; only the
    // C11 atomic operations touch it. (A C11 `_Atomic` cannot be a Swift stored property.)
    @usableFromInline let storage: UnsafeMutablePointer<me_atomic_int64>

    package init(_ value: Int64 = 0) {
        storage = me_atomic_int64_create(value)
    }

    deinit {
        me_atomic_int64_destroy(storage)
    }

    @inlinable
    package var value: Int64 { me_atomic_int64_load(storage) }

    @inlinable
    package func store(_ value: Int64) { me_atomic_int64_store(storage, value) }

    /// Adds `delta`; returns the value before.
    @inlinable @discardableResult
    package func add(_ delta: Int64) -> Int64 { me_atomic_int64_add(storage, delta) }

    /// Stores `value` with acquire-release ordering; returns the value before.
    @inlinable @discardableResult
    package func exchange(_ value: Int64) -> Int64 { me_atomic_int64_exchange(storage, value) }
}
