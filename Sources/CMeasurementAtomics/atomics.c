#include "CMeasurementAtomics.h"
#include <stdlib.h>

me_atomic_int64 *me_atomic_int64_create(int64_t value) {
    me_atomic_int64 *atomic = malloc(sizeof(me_atomic_int64));
    if (atomic == NULL) abort();
    atomic_init(&atomic->value, value);
    return atomic;
}

void me_atomic_int64_destroy(me_atomic_int64 *atomic) {
    free(atomic);
}
