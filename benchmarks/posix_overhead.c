/* posix_overhead: what the POSIX read adapter costs a program on files that are NOT hcomp
 * files. Times, per call, on a plain file: open+close for reading (the adapter looks at the
 * file's first bytes), stat (it looks at regular, non-empty files), a 4 KiB pread (a table
 * load), and a 4 KiB pread of an hcomp file for scale when one is given. Run it once
 * plainly and once under `hcomp run` (scripts/bench-posix does both, interleaved).
 *
 * usage: posix_overhead PLAIN [HCOMP] [--iters N]
 * prints: "open_close_ns=.. stat_ns=.. pread4k_ns=.. [hcomp_pread4k_ns=..]", each the
 * median of 7 rounds of N calls (default 20000). */
#include "bench_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROUNDS 7

static double round_ns(int what, const char *path, int iters)
{
    char buf[4096];
    struct stat st;
    int fd = what >= 2 ? open(path, O_RDONLY) : -1;
    off_t size = 0;
    if (fd >= 0) {
        fstat(fd, &st);
        size = st.st_size > 4096 ? st.st_size - 4096 : 1;
    }
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        if (what == 0) {
            int f = open(path, O_RDONLY);
            if (f < 0 || close(f) != 0)
                exit(1);
        } else if (what == 1) {
            if (stat(path, &st) != 0)
                exit(1);
        } else if (pread(fd, buf, sizeof(buf), (off_t) ((unsigned) i * 7919u * 4096u % (unsigned long) size)) < 0)
            exit(1);
    }
    double ns = (bench_now() - t0) * 1e9 / iters;
    if (fd >= 0)
        close(fd);
    return ns;
}

static double median_ns(int what, const char *path, int iters)
{
    double v[ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        v[r] = round_ns(what, path, iters);
    return bench_median(v, ROUNDS);
}

int main(int argc, char **argv)
{
    const char *plain = NULL, *hc = NULL;
    int iters = 20000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!plain)
            plain = argv[i];
        else
            hc = argv[i];
    }
    if (plain == NULL || iters <= 0) {
        fprintf(stderr, "usage: posix_overhead PLAIN [HCOMP] [--iters N]\n");
        return 2;
    }
    printf("open_close_ns=%.0f stat_ns=%.0f pread4k_ns=%.0f", median_ns(0, plain, iters),
           median_ns(1, plain, iters), median_ns(2, plain, iters));
    if (hc)
        printf(" hcomp_pread4k_ns=%.0f", median_ns(2, hc, iters / 10));
    printf("\n");
    return 0;
}
