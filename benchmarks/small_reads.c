/* small_reads: small reads of pieces stored as they are (incompressible data, 4 KiB
 * blocks), through libhcomp, beside the same reads of a plain file holding the same bytes
 * (pread). MIB MiB of noise are written once to DIR/small.hc (the default options: the
 * embedded tiers) and DIR/small.raw, then read on one handle each, warm (from the page
 * cache: a library-level figure, not a storage one), in four patterns: sequential reads of
 * 1 KiB, 16 KiB and 100,000 bytes over the whole file, and 20,000 reads of 4 KiB at random
 * offsets. Every read is checked. Prints the median of 5 rounds of each (hcomp and plain
 * interleaved) and their ratio.
 *
 *   make benchmarks/small_reads && benchmarks/small_reads /tmp/somedir [MIB]
 * It uses only include/hcomp.h, so it also builds against another build of the library:
 *   cc -O2 -Iinclude benchmarks/small_reads.c -Lother/.libs -lhcomp -o /tmp/small_reads */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hcomp.h"
#include "bench_util.h"

#define ROUNDS 5
#define RANDOM_READS 20000

static void check(int rc, const hcomp_error *e)
{
    if (rc != HCOMP_OK) {
        fprintf(stderr, "small_reads: %s\n", e->msg);
        exit(1);
    }
}

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 11;
}

/* One pattern over one file (fd >= 0: plain pread; else the hcomp handle f): seconds. */
static double run(int pattern, size_t len, const unsigned char *d, unsigned char *b, int fd,
                  hcomp_file *f)
{
    static const size_t sizes[] = {1024, 16384, 100000, 4096};
    size_t sz = sizes[pattern];
    uint64_t seed = 7;
    double t0 = bench_now();
    size_t nreads = pattern < 3 ? (len + sz - 1) / sz : RANDOM_READS;
    for (size_t i = 0; i < nreads; i++) {
        size_t off = pattern < 3 ? i * sz : (size_t) (next(&seed) % (len - sz));
        size_t n = len - off < sz ? len - off : sz;
        unsigned char *to = pattern < 3 ? b + off : b;
        if (fd >= 0) {
            if (pread(fd, to, n, (off_t) off) != (ssize_t) n) {
                perror("small_reads: pread");
                exit(1);
            }
        } else {
            hcomp_error e;
            uint64_t got;
            check(hcomp_file_pread(f, to, n, off, &got, &e), &e);
        }
        if (pattern == 3 && memcmp(to, d + off, n) != 0) {
            fprintf(stderr, "small_reads: wrong bytes at %zu\n", off);
            exit(1);
        }
    }
    double t = bench_now() - t0;
    if (pattern < 3 && memcmp(b, d, len) != 0) {
        fprintf(stderr, "small_reads: wrong bytes read back\n");
        exit(1);
    }
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: small_reads DIR [MIB]\n");
        return 2;
    }
    size_t len = (size_t) (argc > 2 ? atoi(argv[2]) : 64) << 20;
    char hc[4096], raw[4096];
    snprintf(hc, sizeof(hc), "%s/small.hc", argv[1]);
    snprintf(raw, sizeof(raw), "%s/small.raw", argv[1]);
    unsigned char *d = malloc(len), *b = malloc(len);
    if (d == NULL || b == NULL || len == 0)
        return 1;
    uint64_t seed = 1;
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t v = next(&seed) ^ (next(&seed) << 21);
        memcpy(d + i, &v, 8);
    }
    hcomp_error e;
    hcomp_options *o = hcomp_options_new();
    hcomp_file *f;
    (void) hcomp_file_delete(hc, &e);      /* a file of an earlier run */
    check(hcomp_file_open(hc, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f, &e), &e);
    check(hcomp_file_pwrite(f, d, len, 0, &e), &e);
    check(hcomp_file_close(f, &e), &e);
    int fd = open(raw, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, d, len) != (ssize_t) len) {
        perror("small_reads: writing the plain file");
        return 1;
    }
    static const char *names[] = {"sequential 1 KiB", "sequential 16 KiB",
                                  "sequential 100,000 B", "random 4 KiB x 20,000"};
    printf("| reads (warm, %zu MiB of noise) | hcomp s | plain s | hcomp / plain |\n", len >> 20);
    printf("|---|---|---|---|\n");
    for (int p = 0; p < 4; p++) {
        double th[ROUNDS], tp[ROUNDS], ratio[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            check(hcomp_file_open(hc, HCOMP_O_RDONLY, 0, 1, o, &f, &e), &e);
            th[r] = run(p, len, d, b, -1, f);
            check(hcomp_file_close(f, &e), &e);
            tp[r] = run(p, len, d, b, fd, NULL);
            ratio[r] = th[r] / tp[r];
        }
        printf("| %s | %.4f | %.4f | %.2fx |\n", names[p], bench_median(th, ROUNDS),
               bench_median(tp, ROUNDS), bench_median(ratio, ROUNDS));
    }
    close(fd);
    hcomp_options_free(o);
    unlink(raw);
    check(hcomp_file_delete(hc, &e), &e);
    free(d);
    free(b);
    return 0;
}
