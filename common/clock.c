/* The monotonic clock of common/clock.h. */
#include "clock.h"

#include <time.h>

double hcomp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}
