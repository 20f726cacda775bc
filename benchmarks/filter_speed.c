/* filter_speed: the byte shuffle's speed (engine/filter.c), apply and undo, for 4- and
 * 8-byte elements, on 1 MiB that stays in the cache (the size of a piece; what a read of a
 * byte-shuffled piece does after decoding it): the best of 50 rounds each, checked.
 *
 *   make benchmarks/filter_speed && benchmarks/filter_speed */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hcomp_model.h"
#include "engine/filter.h"
#include "bench_util.h"

#define LEN (1u << 20)
#define ROUNDS 50

int main(void)
{
    unsigned char *a = malloc(LEN), *b = malloc(LEN), *c = malloc(LEN);
    if (a == NULL || b == NULL || c == NULL)
        return 1;
    for (size_t i = 0; i < LEN; i++)
        a[i] = (unsigned char) (i * 7 + i / 13);
    static const struct { int filter; const char *name; } fs[] = {
        {HCOMP_FILTER_SHUFFLE4, "byte shuffle, 4-byte elements"},
        {HCOMP_FILTER_SHUFFLE8, "byte shuffle, 8-byte elements"}};
    printf("| filter (1 MiB, in cache) | apply GB/s | undo GB/s |\n|---|---|---|\n");
    for (size_t k = 0; k < sizeof(fs) / sizeof(fs[0]); k++) {
        double best_apply = 1e9, best_undo = 1e9;
        for (int r = 0; r < ROUNDS; r++) {
            double t0 = bench_now();
            hcomp_filter_apply(fs[k].filter, a, b, LEN);
            double t1 = bench_now();
            hcomp_filter_undo(fs[k].filter, b, c, LEN);
            double t2 = bench_now();
            best_apply = t1 - t0 < best_apply ? t1 - t0 : best_apply;
            best_undo = t2 - t1 < best_undo ? t2 - t1 : best_undo;
        }
        if (memcmp(a, c, LEN) != 0) {
            fprintf(stderr, "filter_speed: %s did not undo\n", fs[k].name);
            return 1;
        }
        printf("| %s | %.1f | %.1f |\n", fs[k].name, LEN / best_apply / 1e9, LEN / best_undo / 1e9);
    }
    free(a);
    free(b);
    free(c);
    return 0;
}
