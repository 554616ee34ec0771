internal import CMeasurementAtomics

/// A 64-bit integer that threads change without a lock (C11 atomics from our own C target).
/// Counters use relaxed increments: they order nothing, they only count.
///
/// A non-copyable struct rather than a class: stored in a class, it is used in place, with no
/// reference counting on the posting path.
struct AtomicCounter: ~Copyable, @unchecked Sendable {
    // @unchecked: every access goes through the C11 atomic operations.
    private let storage: OpaquePointer

    init(_ value: Int64 = 0) {
        storage = OpaquePointer(me_atomic_int64_create(value))
    }

    deinit {
        me_atomic_int64_destroy(UnsafeMutablePointer(storage))
    }

    @inline(__always)
    var value: Int64 { me_atomic_int64_load(UnsafeMutablePointer(storage)) }

    @inline(__always)
    func store(_ value: Int64) { me_atomic_int64_store(UnsafeMutablePointer(storage), value) }

    /// Adds `delta`; returns the value before.
    @inline(__always) @discardableResult
    func add(_ delta: Int64) -> Int64 { me_atomic_int64_add(UnsafeMutablePointer(storage), delta) }

    /// Adds `delta` with acquire-release ordering; returns the value before.
    @inline(__always) @discardableResult
    func addOrdered(_ delta: Int64) -> Int64 { me_atomic_int64_add_ordered(UnsafeMutablePointer(storage), delta) }

    /// Stores `value` with acquire-release ordering; returns the value before.
    @inline(__always) @discardableResult
    func exchange(_ value: Int64) -> Int64 { me_atomic_int64_exchange(UnsafeMutablePointer(storage), value) }

    @inline(__always)
    func compareExchange(expected: Int64, desired: Int64) -> Bool {
        me_atomic_int64_compare_exchange(UnsafeMutablePointer(storage), expected, desired)
    }
}
