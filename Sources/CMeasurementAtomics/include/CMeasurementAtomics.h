// C11 atomics for MeasurementEvents: the posting path's counters and flags, without a lock.
// SwiftPM builds this on every platform; it is part of this package, not a dependency.
#ifndef C_MEASUREMENT_ATOMICS_H
#define C_MEASUREMENT_ATOMICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct me_atomic_int64 { _Atomic(int64_t) value; } me_atomic_int64;

/// A new atomic on the heap (Swift cannot allocate a C11 atomic itself); never NULL.
me_atomic_int64 *me_atomic_int64_create(int64_t value);
void me_atomic_int64_destroy(me_atomic_int64 *atomic);

static inline int64_t me_atomic_int64_load(me_atomic_int64 *atomic) {
    return atomic_load_explicit(&atomic->value, memory_order_acquire);
}

static inline void me_atomic_int64_store(me_atomic_int64 *atomic, int64_t value) {
    atomic_store_explicit(&atomic->value, value, memory_order_release);
}

/// Adds `delta`; returns the value before. Relaxed: counters order nothing.
static inline int64_t me_atomic_int64_add(me_atomic_int64 *atomic, int64_t delta) {
    return atomic_fetch_add_explicit(&atomic->value, delta, memory_order_relaxed);
}

/// Stores `value` and returns the value before, with acquire-release ordering.
static inline int64_t me_atomic_int64_exchange(me_atomic_int64 *atomic, int64_t value) {
    return atomic_exchange_explicit(&atomic->value, value, memory_order_acq_rel);
}

/// Observer hand-off: bumped (release) just before an observer is added to a notification
/// center, read (acquire) first thing in that observer. Whatever the adding thread wrote before
/// adding the observer is then visible to the posting thread that runs it, through an edge a
/// thread sanitizer sees (the center's own lock is invisible to it on Linux). Every bump is a
/// read-modify-write, so a read synchronizes with every bump before it.
extern _Atomic(int64_t) me_observer_handoff;

static inline void me_observer_handoff_publish(void) {
    atomic_fetch_add_explicit(&me_observer_handoff, 1, memory_order_acq_rel);
}

static inline void me_observer_handoff_receive(void) {
    (void)atomic_load_explicit(&me_observer_handoff, memory_order_acquire);
}

#endif
