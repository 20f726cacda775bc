/* The logical content of the version-1 golden files (tests/unit/data/golden-v1/), and the
 * writes that made them (make_golden_v1.c): a deterministic function of the offset, so
 * the test needs no copy of the expected bytes. */
#ifndef HCOMP_GOLDEN_V1_H
#define HCOMP_GOLDEN_V1_H

#include <stdint.h>
#include <string.h>
#include "hcomp_model.h"

#define GOLDEN_V1_DIR "/tmp/hcomp-golden-v1"
#define GOLDEN_V1_SIZE 300000u

/* write i: codec, logical offset, length, and which generator fills it */
static const struct golden_write {
    const char *codec;
    uint32_t off, len;
    int kind;               /* 0 text, 1 smooth doubles, 2 noise */
} golden_v1_writes[] = {
    {"lz4", 0, 98304, 0},
    {"zstd", 98304, 131072, 1},
    {"none", 229376, 16384, 2},
    {"zlib", 10000, 20000, 2},      /* an unaligned overwrite inside the first write */
    {"zstd", 65536, 32768, 1},      /* the first write's second piece overwritten whole */
    {"snappy", 260000, 5, 0},       /* after a hole; the size is then grown to 300000 */
};
#define GOLDEN_V1_NWRITES (sizeof(golden_v1_writes) / sizeof(golden_v1_writes[0]))

/* blosc.hc: the same writes (so the same content) with the c-blosc codecs added after
 * hcomp 0.1.0, the doubles announced as such (bit-shuffled chunks, filter 4) and the
 * noise as int32 (filter 3; it does not shrink, so it is stored raw) */
static const struct golden_blosc_write {
    const char *codec;
    int dtype;              /* enum hcomp_dtype, -1: inferred */
} golden_v1_blosc_writes[GOLDEN_V1_NWRITES] = {
    {"blosc-lz4", -1}, {"blosc-zstd", HCOMP_DTYPE_DOUBLE}, {"none", -1},
    {"blosc-zstd:1", HCOMP_DTYPE_INT32}, {"blosc-lz4:9", HCOMP_DTYPE_DOUBLE}, {"blosc-lz4", -1},
};

/* blosc2.hc and blosc2-bit.hc (tests/unit/data/golden-v3/, made when the c-blosc2 codecs
 * were added): the same writes with c-blosc2 chunks, each write's transform given by the
 * hint hcomp_shuffle: bytedelta and delta in blosc2.hc (filters 6, 8; the int32 noise
 * does not shrink, so it is stored raw), bitshuffle and byte shuffle in blosc2-bit.hc
 * (filters 4, 2), every tail past the last whole element kept after the chunk. */
static const struct golden_blosc2_write {
    const char *codec;
    int dtype;              /* enum hcomp_dtype, -1: inferred */
    const char *shuffle;    /* the hint hcomp_shuffle */
} golden_v3_blosc2_writes[2][GOLDEN_V1_NWRITES] = {
    {{"blosc2-lz4", -1, "auto"}, {"blosc2-zstd", HCOMP_DTYPE_DOUBLE, "bytedelta"},
     {"none", -1, "auto"}, {"blosc2-zstd:1", HCOMP_DTYPE_INT32, "delta"},
     {"blosc2-lz4:9", HCOMP_DTYPE_DOUBLE, "delta"}, {"blosc2-lz4", HCOMP_DTYPE_INT32, "bytedelta"}},
    {{"blosc2-zstd:9", -1, "auto"}, {"blosc2-lz4", HCOMP_DTYPE_DOUBLE, "bit"},
     {"none", -1, "auto"}, {"blosc2-zstd:1", HCOMP_DTYPE_INT32, "byte"},
     {"blosc2-zstd:5", HCOMP_DTYPE_DOUBLE, "byte"}, {"blosc2-zstd", HCOMP_DTYPE_FLOAT, "bit"}},
};

static inline unsigned char golden_v1_byte(int kind, uint32_t at)
{
    if (kind == 0) {
        static const char line[] = "step 42: temperature 273.15 K, residual ok\n";
        return (unsigned char) line[at % (sizeof(line) - 1)];
    }
    if (kind == 1) {        /* the bytes of a slowly changing double at each 8-byte index */
        double v = 1.0 + (double) (at / 8) * 1e-5;
        unsigned char b[8];
        memcpy(b, &v, 8);
        return b[at % 8];
    }
    uint32_t x = at * 2654435761u;
    x ^= x >> 15;
    x *= 2246822519u;
    return (unsigned char) (x ^ (x >> 13));
}

/* The whole expected file: later writes win, holes are zeros. */
static inline void golden_v1_expected(unsigned char *out)
{
    memset(out, 0, GOLDEN_V1_SIZE);
    for (size_t w = 0; w < GOLDEN_V1_NWRITES; w++)
        for (uint32_t i = 0; i < golden_v1_writes[w].len; i++)
            out[golden_v1_writes[w].off + i] =
                golden_v1_byte(golden_v1_writes[w].kind, golden_v1_writes[w].off + i);
}

#endif
