#include "CMeasurementThreadSlot.h"

_Thread_local void *me_posting_thread = 0;
