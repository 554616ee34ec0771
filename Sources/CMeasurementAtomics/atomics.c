#include "CMeasurementAtomics.h"
#include <stdlib.h>

_Atomic(int64_t) me_observer_handoff = 0;

me_atomic_int64 *me_atomic_int64_create(int64_t value) {
    // A cache line of its own: counters written by posting threads and by the delivery
    // queue would otherwise share lines and slow each other down.
    me_atomic_int64 *atomic = aligned_alloc(64, 64);
    if (atomic == NULL) abort();
    atomic_init(&atomic->value, value);
    return atomic;
}

void me_atomic_int64_destroy(me_atomic_int64 *atomic) {
    free(atomic);
}
