/* blosc_gens: c-blosc 1 (codecs 8, 9) against c-blosc2 (codecs 10, 11) through hcomp's own
 * codec interface, on a dataset's regions cut into hcomp's blocks, one thread, in memory:
 * what decides whether new files still use c-blosc 1 (docs/ENGINE.md, "c-blosc2").
 *
 *   blosc_gens FILE [BLOCK [REPS]]     FILE with FILE.types (benchmarks/workloads/wl_frontier
 *                                      gen); BLOCK: bytes per encode (default 262144, hcomp's
 *                                      default block); REPS (default 3): the median is kept
 * Prints per codec:level and transform: ratio, compression and decoding MB/s (logical, per
 * second of the thread's CPU time).
 * Built against the library's objects, as the unit tests are:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -I. -Iinclude benchmarks/blosc_gens.c \
 *      build/hcomp/.libs/libhcomp_core.a $(libs of libhcomp) -o blosc_gens */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hcomp_codec.h"
#include "hcomp_model.h"
#include "engine/filter.h"

/* the thread's CPU time: on a shared machine, what the codec costs, not what the other
 * processes took (the wall time of identical runs varied 2-4x under a load of 5 here) */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: blosc_gens FILE [BLOCK [REPS]]\n");
        return 2;
    }
    size_t block = argc > 2 ? strtoul(argv[2], NULL, 10) : 262144;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    if (block < 4096 || reps < 1 || reps > 15)
        return 2;
    FILE *f = fopen(argv[1], "rb");
    char tp[4096];
    snprintf(tp, sizeof tp, "%s.types", argv[1]);
    FILE *t = fopen(tp, "r");
    if (f == NULL || t == NULL)
        return 1;
    fseek(f, 0, SEEK_END);
    size_t n = (size_t) ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(n);
    if (fread(data, 1, n, f) != n)
        return 1;
    fclose(f);
    unsigned long long ro[64], rl[64];
    unsigned rk[64];
    int nr = 0;
    char name[32];
    while (nr < 64 && fscanf(t, "%llu %llu %31s", &ro[nr], &rl[nr], name) == 3) {
        int dt = hcomp_dtype_from_name(name);
        rk[nr++] = dt == HCOMP_DTYPE_INT64 || dt == HCOMP_DTYPE_DOUBLE ? 8
                 : dt == HCOMP_DTYPE_BYTES ? 0 : 4;
    }
    fclose(t);
    static const struct { const char *codec; int level, shuffle; } cfg[] = {
        {"blosc-lz4", 5, HCOMP_SHUFFLE_BIT},    {"blosc2-lz4", 5, HCOMP_SHUFFLE_BIT},
        {"blosc-lz4", 5, HCOMP_SHUFFLE_BYTE},   {"blosc2-lz4", 5, HCOMP_SHUFFLE_BYTE},
        {"blosc2-lz4", 5, HCOMP_SHUFFLE_BYTEDELTA},
        {"blosc-zstd", 1, HCOMP_SHUFFLE_BIT},   {"blosc2-zstd", 1, HCOMP_SHUFFLE_BIT},
        {"blosc-zstd", 5, HCOMP_SHUFFLE_BIT},   {"blosc2-zstd", 5, HCOMP_SHUFFLE_BIT},
        {"blosc2-zstd", 1, HCOMP_SHUFFLE_BYTEDELTA}, {"blosc2-zstd", 5, HCOMP_SHUFFLE_BYTEDELTA},
        {"blosc2-zstd", 6, HCOMP_SHUFFLE_BYTEDELTA}, {"blosc2-lz4", 5, HCOMP_SHUFFLE_DELTA},
        {"blosc2-zstd", 5, HCOMP_SHUFFLE_DELTA},
    };
    static const char *const sname[] = {"none", "shuffle", "bitshuffle", "bytedelta", "delta"};
    const hcomp_codec *none = NULL;
    (void) none;
    unsigned char *dst = malloc(block + 1024), *back = malloc(block), *tmp = NULL;
    size_t tmp_cap = 0;
    printf("# %s, blocks of %zu bytes, median of %d\n# config ratio comp_MBps decomp_MBps\n",
           argv[1], block, reps);
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        const hcomp_codec *k = hcomp_codec_by_name(cfg[c].codec);
        double tc[15], td[15];
        size_t stored = 0;
        for (int r = 0; r < reps; r++) {
            tc[r] = td[r] = 0;
            stored = 0;
            for (int g = 0; g < nr; g++)
                for (size_t at = 0; at < rl[g]; at += block) {
                    size_t len = rl[g] - at < block ? rl[g] - at : block, clen = 0;
                    const unsigned char *src = data + ro[g] + at;
                    int fl = rk[g] ? hcomp_filter_for(cfg[c].shuffle, rk[g]) : HCOMP_FILTER_NONE;
                    double t0 = now();
                    if (hcomp_filter_encode(k, cfg[c].level, fl, src, len, &tmp, &tmp_cap, dst,
                                            block + 1024, &clen) != HCOMP_OK)
                        return 1;
                    double t1 = now();
                    if (clen >= len) {      /* framing keeps such a block raw */
                        stored += len;
                        tc[r] += t1 - t0;
                        continue;
                    }
                    if (hcomp_filter_decode(k, fl, dst, clen, back, len, &tmp, &tmp_cap) != HCOMP_OK ||
                        memcmp(back, src, len) != 0)
                        return 1;
                    td[r] += now() - t1;
                    tc[r] += t1 - t0;
                    stored += clen;
                }
        }
        qsort(tc, (size_t) reps, sizeof(double), cmp);
        qsort(td, (size_t) reps, sizeof(double), cmp);
        printf("%s:%d+%s %.4f %.0f %.0f\n", cfg[c].codec, cfg[c].level, sname[cfg[c].shuffle],
               (double) n / (double) stored, n / tc[reps / 2] / 1e6, n / td[reps / 2] / 1e6);
    }
    free(tmp);
    free(dst);
    free(back);
    free(data);
    return 0;
}
