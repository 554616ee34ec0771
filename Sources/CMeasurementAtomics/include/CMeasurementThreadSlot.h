// One pointer per thread for MeasurementEvents' posting path: the thread's PostingThread.
// A C11 thread-local: reading it is a few instructions, where pthread_getspecific, and the
// lazily made key it needs, cost about 30 instructions per read, twice per post.
#ifndef C_MEASUREMENT_THREAD_SLOT_H
#define C_MEASUREMENT_THREAD_SLOT_H

extern _Thread_local void *me_posting_thread;

static inline void *me_posting_thread_get(void) {
    return me_posting_thread;
}

static inline void me_posting_thread_set(void *thread) {
    me_posting_thread = thread;
}

#endif
