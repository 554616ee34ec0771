#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// A value behind a lock: the lock of every piece of shared state in the core and the aggregator.
///
/// The core's other synchronisation is listed, with the order in which locks are taken, in the
/// concurrency map at the head of `MeasurementEventsAggregator/Inbox.swift`: C11 atomics for the posting path's
/// counters and flags, the aggregator's delivery queue, and the recursive lock that stands for
/// that queue under synchronous delivery. Deliberately small and non-recursive. `os_unfair_lock` on Apple platforms, a pthread mutex
/// elsewhere; `Synchronization.Mutex` would need iOS 18 / macOS 15.
@usableFromInline package final class LockedValue<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written between lock() and unlock().
    // Exclusivity unchecked: the dynamic check cost 117 instructions a lock (on a kept post,
    // 1%). Invariant: `value` is accessed only inside `withLock`, whose body must not take the
    // same lock again (it would deadlock first), so two accesses never overlap.
    @exclusivity(unchecked) @usableFromInline var value: Value
    #if canImport(Darwin)
        @usableFromInline let lockPointer: UnsafeMutablePointer<os_unfair_lock>
    #else
        @usableFromInline let lockPointer: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    /// A lock around `value`.
    ///
    /// - Parameter value: the initial value.
    package init(_ value: Value) {
        self.value = value
        #if canImport(Darwin)
            lockPointer = .allocate(capacity: 1)
            lockPointer.initialize(to: os_unfair_lock())
        #else
            lockPointer = .allocate(capacity: 1)
            lockPointer.initialize(to: pthread_mutex_t())
            pthread_mutex_init(lockPointer, nil)
        #endif
    }

    deinit {
        #if !canImport(Darwin)
            pthread_mutex_destroy(lockPointer)
        #endif
        lockPointer.deinitialize(count: 1)
        lockPointer.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Do not call back into the same lock.
    ///
    /// - Parameter body: reads or changes the value; must not call user code or this lock again.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if canImport(Darwin)
            os_unfair_lock_lock(lockPointer)
            defer { os_unfair_lock_unlock(lockPointer) }
        #else
            pthread_mutex_lock(lockPointer)
            defer { pthread_mutex_unlock(lockPointer) }
        #endif
        return try body(&value)
    }
}
