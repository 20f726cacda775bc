/* log_append: how many records per second N processes append to one shared log with
 * O_APPEND (hcomp's mapping file today: every write of every rank ends in one append), and
 * to one log per process (the layout issue 18 proposes), on this machine's file system.
 * Each process appends R records of B bytes, each with one write(2) (as hcomp's log append
 * does), then fsyncs once; the parent times from the start signal to the last child's end.
 * Prints a table of records/s per process count, shared and per writer; medians of RUNS
 * runs, the two interleaved.
 *
 *   make benchmarks/log_append && benchmarks/log_append DIR [R [B]]
 * (DIR on the file system to measure; nothing is left there.) */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench_util.h"

#define RUNS 5

/* one child: wait for the go byte on fd go, append r records of b bytes to path */
static void child(const char *path, int go, long r, size_t b, int id)
{
    char c;
    if (read(go, &c, 1) != 1)
        _exit(2);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd < 0)
        _exit(3);
    char *rec = malloc(b);
    if (rec == NULL)
        _exit(4);
    memset(rec, 'a' + id % 26, b);
    for (long i = 0; i < r; i++)
        if (write(fd, rec, b) != (ssize_t) b)
            _exit(5);
    if (fsync(fd) != 0)
        _exit(6);
    close(fd);
    _exit(0);
}

static double run(const char *dir, int n, int shared, long r, size_t b)
{
    char path[4096];
    int pipefd[2];
    if (pipe(pipefd) != 0)
        exit(1);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/log-%d", dir, shared ? 0 : i);
        pid_t p = fork();
        if (p == 0) {
            close(pipefd[1]);
            child(path, pipefd[0], r, b, i);
        }
        if (p < 0)
            exit(1);
    }
    close(pipefd[0]);
    double t0 = bench_now();
    char go[64] = {0};
    if (write(pipefd[1], go, (size_t) n) != n)
        exit(1);
    close(pipefd[1]);
    int ok = 1, st;
    for (int i = 0; i < n; i++)
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            ok = 0;
    double t = bench_now() - t0;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/log-%d", dir, i);
        unlink(path);
    }
    if (!ok) {
        fprintf(stderr, "log_append: a writer failed\n");
        exit(1);
    }
    return (double) n * (double) r / t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: log_append DIR [RECORDS_PER_PROCESS [BYTES]]\n");
        return 2;
    }
    long r = argc > 2 ? atol(argv[2]) : 20000;
    size_t b = argc > 3 ? (size_t) atol(argv[3]) : 68;   /* a PIECE record of one extent */
    static const int ns[] = {1, 2, 4, 8, 16};
    printf("| processes | shared log, records/s | one log per writer, records/s | per-writer / shared |\n");
    printf("|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        double v[2][RUNS];
        for (int i = 0; i < RUNS; i++)
            for (int shared = 1; shared >= 0; shared--)  /* side by side, interleaved */
                v[shared][i] = run(argv[1], ns[k], shared, r, b);
        double per_writer = bench_median(v[0], RUNS), shared = bench_median(v[1], RUNS);
        printf("| %d | %.0f | %.0f | %.2fx |\n", ns[k], shared, per_writer, per_writer / shared);
        fflush(stdout);
    }
    return 0;
}
