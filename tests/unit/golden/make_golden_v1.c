/* Made the version-1 golden files in tests/unit/data/golden-v1/ once, with main at
 * 1619a72 (format version 1); they are kept as they are, never made again: they stand for
 * files users already have. Kept to say how they were made:
 *   (linked with the library's internal objects, as the unit tests are: hcomp_compact)
 *   cc -I. -I../../.. -I../../../include make_golden_v1.c <build>/.libs/libhcomp_core.a \
 *      $(the codec, jansson and libdeflate libraries) -o make_golden_v1
 *   ./make_golden_v1 && cp -a /tmp/hcomp-golden-v1/. ../data/golden-v1/
 * log.hc: the writes of golden_v1.h, each in an open of its own with its codec, the size
 * grown to 300000, nothing reclaimed (the overwritten bytes stay recorded and stored).
 * snapshot.hc: the same, then hcomp_compact (the log rewritten to its live state, the
 * partly overwritten piece's live bytes as two extents).
 * blosc.hc: made later, once, with main at the commit that added the c-blosc codecs
 * (`./make_golden_v1 blosc`): the same writes with golden_v1_blosc_writes' codecs and
 * element types (c-blosc 1.21.3 chunks, bit-shuffled).
 * The version-2 golden files in tests/unit/data/golden-v2/ were made the same way, once,
 * when format version 2 was added (`./make_golden_v1 v2`, then
 * `cp -a /tmp/hcomp-golden-v1/. ../data/golden-v2/`): framed.hc and framed-blosc.hc, the
 * writes of log.hc and blosc.hc in a version-2 file, pieces framed in 8 KiB blocks.
 * The version-3 golden files in tests/unit/data/golden-v3/ likewise, when format version 3
 * was added (`./make_golden_v1 v3`, then `cp -a /tmp/hcomp-golden-v1/. ../data/golden-v3/`):
 * wlogs.hc, the writes of framed.hc each in an open of its own, so each in a writer log of
 * its own, never folded (reclaim never); folded.hc, the same, then hcomp_compact (the logs
 * folded into the mapping file, log generation 1).
 * blosc2.hc and blosc2-bit.hc in tests/unit/data/golden-v3/: made once when the c-blosc2
 * codecs were added (`./make_golden_v1 blosc2`, libblosc2 2.17.1, then
 * `cp -a /tmp/hcomp-golden-v1/. ../data/golden-v3/`): the writes of framed.hc in a
 * version-3 file with golden_v3_blosc2_writes' codecs, element types and transforms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "hcomp.h"
#include "file/tools.h"
#include "golden_v1.h"

static void die(const char *what, const hcomp_error *e)
{
    fprintf(stderr, "%s: %s\n", what, e->msg);
    exit(1);
}

/* blosc: 1 golden_v1_blosc_writes, 2 and 3 golden_v3_blosc2_writes[0] and [1] */
static void make(const char *name, const char *config, int compact, int blosc, int framed)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", GOLDEN_V1_DIR, name);
    hcomp_error e;
    for (size_t w = 0; w < GOLDEN_V1_NWRITES; w++) {
        hcomp_options *o = hcomp_options_new();
        const struct golden_blosc2_write *b2 = blosc >= 2 ? &golden_v3_blosc2_writes[blosc - 2][w]
                                                          : NULL;
        const char *codec = b2 ? b2->codec : blosc ? golden_v1_blosc_writes[w].codec
                                                   : golden_v1_writes[w].codec;
        if (hcomp_options_set(o, "hcomp_config", config, &e) || hcomp_options_set(o, "hcomp_codec",
            codec, &e) || hcomp_options_set(o, "hcomp_reclaim", "never", &e) ||
            (b2 && hcomp_options_set(o, "hcomp_shuffle", b2->shuffle, &e)) ||
            hcomp_options_set(o, "hcomp_piece_size", "65536", &e) ||
            (framed && hcomp_options_set(o, "hcomp_block_size", "8192", &e)))
            die("options", &e);
        hcomp_file *f;
        if (hcomp_file_open(path, HCOMP_O_RDWR | HCOMP_O_CREAT, 0644, 1, o, &f, &e))
            die(path, &e);
        if (b2 && b2->dtype >= 0)
            hcomp_file_set_dtype(f, b2->dtype);
        else if (blosc == 1 && golden_v1_blosc_writes[w].dtype >= 0)
            hcomp_file_set_dtype(f, golden_v1_blosc_writes[w].dtype);
        unsigned char *b = malloc(golden_v1_writes[w].len);
        for (uint32_t i = 0; i < golden_v1_writes[w].len; i++)
            b[i] = golden_v1_byte(golden_v1_writes[w].kind, golden_v1_writes[w].off + i);
        if (hcomp_file_pwrite(f, b, golden_v1_writes[w].len, golden_v1_writes[w].off, &e))
            die("write", &e);
        if (w + 1 == GOLDEN_V1_NWRITES && hcomp_file_extend(f, GOLDEN_V1_SIZE, &e))
            die("extend", &e);
        if (hcomp_file_close(f, &e))
            die("close", &e);
        free(b);
        hcomp_options_free(o);
    }
    hcomp_reclaim_result res;
    if (compact && hcomp_compact(path, config, NULL, &res, &e))
        die("compact", &e);
}

int main(int argc, char **argv)
{
    int blosc = argc > 1 && strcmp(argv[1], "blosc") == 0;
    int v2 = argc > 1 && strcmp(argv[1], "v2") == 0;
    int v3 = argc > 1 && strcmp(argv[1], "v3") == 0;
    int blosc2 = argc > 1 && strcmp(argv[1], "blosc2") == 0;
    mkdir(GOLDEN_V1_DIR, 0755);
    char config[512];
    snprintf(config, sizeof(config), "%s/tiers.json", GOLDEN_V1_DIR);
    FILE *c = fopen(config, "w");
    fprintf(c, "{\"version\": 1, \"tiers\": [{\"name\": \"filedir\", \"path\": \"@filedir\", "
               "\"capacity\": \"unlimited\", \"scope\": \"shared\"}]}\n");
    fclose(c);
    if (blosc2) {
        make("blosc2.hc", config, 0, 2, 1);
        make("blosc2-bit.hc", config, 0, 3, 1);
    } else if (v3) {
        make("wlogs.hc", config, 0, 0, 1);
        make("folded.hc", config, 1, 0, 1);
    } else if (v2) {
        make("framed.hc", config, 0, 0, 1);
        make("framed-blosc.hc", config, 0, 1, 1);
    } else if (blosc) {
        make("blosc.hc", config, 0, 1, 0);
    } else {
        make("log.hc", config, 0, 0, 0);
        make("snapshot.hc", config, 1, 0, 0);
    }
    remove(config);
    return 0;
}
