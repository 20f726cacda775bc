/* block_ratio: what framing pieces in blocks costs in ratio (docs/ENGINE.md, "Blocks and
 * reads"). For each codec configuration, FILE's bytes are cut in 1 MiB pieces and each
 * piece in blocks of 8 KiB .. 1 MiB, every block compressed on its own (hcomp's filter and
 * codec composition, a block that does not shrink stored as it is, 8 bytes of table per
 * block); prints the ratio per block size. The data files are those of
 * `wl_frontier gen KIND FILE` (scripts/bench-frontier).
 *
 *   make benchmarks/block_ratio && benchmarks/block_ratio particles.dat */
#include <stdio.h>
#include <stdlib.h>
#include "hcomp_codec.h"
#include "engine/filter.h"
#include "common/clock.h"

#define PIECE (1u << 20)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: block_ratio FILE\n");
        return 2;
    }
    FILE *fp = fopen(argv[1], "rb");
    if (fp == NULL || fseek(fp, 0, SEEK_END) != 0) {
        perror(argv[1]);
        return 1;
    }
    long n = ftell(fp);
    rewind(fp);
    unsigned char *d = malloc(n > 0 ? (size_t) n : 1), *out = malloc(2 * PIECE), *tmp = NULL;
    size_t tmp_cap = 0;
    if (d == NULL || out == NULL || fread(d, 1, (size_t) n, fp) != (size_t) n) {
        fprintf(stderr, "%s: cannot read it\n", argv[1]);
        return 1;
    }
    fclose(fp);
    static const struct { const char *codec; int level, filter; } cf[] = {
        {"lz4", 1, HCOMP_FILTER_NONE}, {"zstd", 1, HCOMP_FILTER_NONE},
        {"zstd", 1, HCOMP_FILTER_SHUFFLE4}, {"blosc-lz4", 5, HCOMP_FILTER_BITSHUFFLE4},
        {"blosc-zstd", 1, HCOMP_FILTER_BITSHUFFLE4}, {"blosc-zstd", 5, HCOMP_FILTER_BITSHUFFLE4},
        {"blosc-zstd", 6, HCOMP_FILTER_BITSHUFFLE4}, {"zlib", 6, HCOMP_FILTER_SHUFFLE4},
        {"snappy", 0, HCOMP_FILTER_NONE}, {"snappy", 0, HCOMP_FILTER_SHUFFLE4}};
    static const size_t bs[] = {8192, 16384, 32768, 65536, 131072, 262144, PIECE};
    printf("%-11s %-5s %-7s", "codec", "level", "filter");
    for (size_t b = 0; b < sizeof(bs) / sizeof(bs[0]); b++)
        printf(" %7zuK", bs[b] >> 10);
    printf("  MB/s  (ratio; the last ratio: unframed pieces, whose compression speed is the\n"
           "       last column, one thread)\n");
    for (size_t c = 0; c < sizeof(cf) / sizeof(cf[0]); c++) {
        const hcomp_codec *codec = hcomp_codec_by_name(cf[c].codec);
        printf("%-11s %-5d %-7d", cf[c].codec, cf[c].level, cf[c].filter);
        double mbps = 0;
        for (size_t b = 0; b < sizeof(bs) / sizeof(bs[0]); b++) {
            size_t stored = 0;
            double t0 = hcomp_now();
            for (size_t p = 0; p < (size_t) n; p += PIECE)
                for (size_t o = 0; o < PIECE && p + o < (size_t) n; o += bs[b]) {
                    size_t len = (size_t) n - p - o < bs[b] ? (size_t) n - p - o : bs[b], cl = 0;
                    if (hcomp_filter_encode(codec, cf[c].level, cf[c].filter, d + p + o, len, &tmp,
                                            &tmp_cap, out, 2 * PIECE, &cl) != HCOMP_OK)
                        cl = len;
                    stored += (cl < len ? cl : len) + (bs[b] < PIECE ? 8 : 0);
                }
            printf(" %8.3f", (double) n / (double) stored);
            if (b + 1 == sizeof(bs) / sizeof(bs[0]))
                mbps = (double) n / (hcomp_now() - t0) / 1e6;
        }
        printf(" %5.0f\n", mbps);
    }
    free(tmp);
    free(out);
    free(d);
    return 0;
}
