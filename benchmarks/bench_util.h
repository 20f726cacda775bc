/* The clock and the median of the small benchmark programs of benchmarks/ (block_cost,
 * log_append). */
#ifndef HCOMP_BENCH_UTIL_H
#define HCOMP_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t) n, sizeof(*v), bench_cmp_double);
    return v[n / 2];
}

#endif
