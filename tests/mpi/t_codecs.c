/* Every codec round-trips through MPI: for each of the 8 codec names (and a few
 * name:level forms) create a file with that hcomp_codec, write mixed realistic
 * data collectively (smooth doubles, counters, random bytes, zeros, text),
 * reopen without hints and read it back; get_info must report the codec.
 *
 *   t_codecs TARGET [CONFIG]
 *
 * For ufs targets the hint is ignored and the round trip is still checked. */
#include "tcommon.h"

#define PER_RANK (384 * KiB + 77)

static const char *const codecs[] = {"none", "lz4", "zstd", "zlib", "bzip2", "brotli",
                                     "snappy", "lzma", "zstd:1", "zstd:19", "zlib:9",
                                     "lzma:6", "brotli:5"};

/* this rank's data: 5 kinds of content, in 5 slices */
static void gen(uint8_t *b, uint64_t len, int rank, int variant)
{
    uint64_t q = len / 5;
    double *d = (double *)b;
    for (uint64_t i = 0; i < q / 8; i++)
        d[i] = t_field(variant, rank, (long)(i / 64), (long)(i % 64));
    for (uint64_t i = q; i < 2 * q; i++)
        b[i] = (uint8_t)(((i - q) / 4 + (uint64_t)rank * 1000) >> (8 * ((i - q) % 4)));
    t_fill_random(b + 2 * q, q, (uint64_t)rank * 100 + (uint64_t)variant);
    memset(b + 3 * q, 0, q);
    for (uint64_t i = 4 * q, n = 0; i < len; n++) {
        char line[80];
        int k = snprintf(line, sizeof line, "particle %llu rank %d x=%.5f\n",
                         (unsigned long long)n, rank, sin((double)n * 0.01));
        for (int j = 0; j < k && i < len; j++)
            b[i++] = (uint8_t)line[j];
    }
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    MPI_Status st;
    uint8_t *w = t_malloc(PER_RANK), *r = t_malloc(PER_RANK);
    const MPI_Offset off = (MPI_Offset)t.rank * PER_RANK;

    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        const char *codec = codecs[c];
        MPI_Info info = t_info(&t, "hcomp_codec", codec, "hcomp_piece_size", "131072", NULL);
        t_delete_quiet(&t, t.target, info);
        gen(w, PER_RANK, t.rank, (int)c);
        MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, info);
        if (t.is_hcomp) {
            MPI_Info got;
            char v[MPI_MAX_INFO_VAL + 1] = "";
            int flag = 0;
            TCHK(MPI_File_get_info(fh, &got));
            MPI_Info_get(got, "hcomp_codec", MPI_MAX_INFO_VAL, v, &flag);
            MPI_Info_free(&got);
            TASSERT(flag && strcmp(v, codec) == 0, "get_info reports hcomp_codec='%s', want '%s'",
                    flag ? v : "(missing)", codec);
        }
        TCHK(MPI_File_write_at_all(fh, off, w, PER_RANK, MPI_BYTE, &st));
        TCHK(MPI_File_close(&fh));
        MPI_Info_free(&info);

        info = t_info(&t, NULL);
        fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
        TASSERT(t_get_size(fh) == (MPI_Offset)PER_RANK * t.nprocs, "codec %s: size %lld", codec,
                (long long)t_get_size(fh));
        /* read the next rank's part: data written by another process */
        int o = (t.rank + 1) % t.nprocs;
        gen(w, PER_RANK, o, (int)c);
        memset(r, 0xEE, PER_RANK);
        TCHK(MPI_File_read_at_all(fh, (MPI_Offset)o * PER_RANK, r, PER_RANK, MPI_BYTE, &st));
        TEXPECT_BYTES(r, w, PER_RANK, (uint64_t)o * PER_RANK, t_fmt("codec %s round trip", codec));
        TCHK(MPI_File_close(&fh));
        t_delete(&t, t.target, info);
        MPI_Info_free(&info);
        t_log(&t, "codec %s: OK", codec);
    }
    free(w), free(r);
    return t_finish(&t);
}
