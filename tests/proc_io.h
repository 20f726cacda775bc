/* What this process has read, for tests that check how much of a file an operation read
 * (the unit tests and the MPI tests include it; the benchmarks have their own). */
#ifndef HCOMP_TESTS_PROC_IO_H
#define HCOMP_TESTS_PROC_IO_H

#include <stdio.h>

/* The field of /proc/self/io whose sscanf pattern is given ("rchar: %lld"), or -1 */
static inline long long proc_io_field(const char *pattern)
{
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    long long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, pattern, &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

/* bytes this process has read with read(2), pread(2) and the like (rchar), or -1 */
static inline long long proc_bytes_read(void)
{
    return proc_io_field("rchar: %lld");
}

/* calls to read(2), pread(2) and the like this process has made (syscr), or -1 */
static inline long long proc_read_calls(void)
{
    return proc_io_field("syscr: %lld");
}

#endif
