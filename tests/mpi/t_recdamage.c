/* A record in the middle of the mapping file's log is damaged (a flipped bit: bit rot,
 * a bad disk block). The write that record stood for was reported as successful, so
 * what a reader gets must be the data written or an MPI error - not zeros, not the
 * data it overwrote, not bytes that were cut off by MPI_File_set_size. hcomp targets
 * only.
 *
 *   t_recdamage TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * One tier, pieces of 4 KiB, codec none. Rank 0 writes 16 pieces in one write (a
 * SEGMENT record and 16 PIECE records), overwrites piece 3 (a PIECE record), then the
 * file is cut to 15 pieces with MPI_File_set_size (a SIZE record); close (a STATS
 * record). For each of these records in turn, one payload byte is flipped in a copy of
 * the mapping file and every rank opens the file and reads it whole, then piece by
 * piece; the original is put back after each case:
 *   SEGMENT record      the pieces in that segment: MPI_ERR_IO naming the segment id
 *   PIECE of piece 7    piece 7 reads back exactly or fails with MPI_ERR_IO
 *   PIECE of the overwrite of piece 3   the new data or MPI_ERR_IO (not the old data)
 *   SIZE record         the size is 15 pieces, or the open or the reads fail (piece 15,
 *                       cut off, must not come back) */
#include "tfault.h"

#define PS 4096
#define NP 16

static uint8_t ref[NP * PS];   /* what the file holds: pieces 0-14, piece 3 overwritten */
static uint8_t old3[PS];       /* piece 3 before the overwrite */

/* open and read; every outcome must be the right bytes or an MPI_ERR_IO */
static void check(const tctx *t, MPI_Info info, const char *what)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    int rc = MPI_File_open(MPI_COMM_WORLD, t->target, MPI_MODE_RDONLY, info, &fh);
    if (rc != MPI_SUCCESS) {
        TASSERT(t_err_class(rc) == MPI_ERR_IO, "%s: open failed with %s", what, t_errstr(rc));
        t_log(t, "%s: the open fails: %.300s", what, t->rank == 0 ? t_err_text(rc) : "");
        return;
    }
    /* the size may be unknowable too (a lost SIZE or PIECE record changes it) */
    MPI_Offset size = -1;
    rc = MPI_File_get_size(fh, &size);
    if (rc != MPI_SUCCESS) {
        TASSERT(t_err_class(rc) == MPI_ERR_IO, "%s: get_size: %s", what, t_errstr(rc));
        size = -1;
    }
    int errors = 0;
    for (int k = 0; k < NP; k++) {
        uint8_t b[PS];
        memset(b, 0xa5, PS);
        rc = MPI_File_read_at(fh, (MPI_Offset)k * PS, b, PS, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS) {
            TASSERT(t_err_class(rc) == MPI_ERR_IO, "%s: piece %d: %s", what, k, t_errstr(rc));
            if (errors++ == 0 && t->rank == 0)
                printf("  [%s] %s: piece %d: %.400s\n", t->test, what, k, t_err_text(rc));
            continue;
        }
        int n = t_count(&st);
        if (k == NP - 1) { /* cut off by set_size: must stay gone */
            TASSERT(n == 0 && size == (NP - 1) * PS, "%s: piece 15, cut off by MPI_File_set_size, "
                    "is back (size %lld, read %d bytes)", what, (long long)size, n);
            continue;
        }
        TASSERT(n == PS, "%s: piece %d: read %d bytes (size %lld)", what, k, n, (long long)size);
        if (k == 3 && memcmp(b, old3, PS) == 0)
            TFAIL("%s: piece 3 reads as the data its (damaged) overwrite replaced", what);
        TEXPECT_BYTES(b, ref + (uint64_t)k * PS, PS, (uint64_t)k * PS,
                      t_fmt("%s: piece %d read without an error", what, k));
    }
    TCHK(MPI_File_close(&fh));
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    t_log(t, "%s: %d failed piece reads over all ranks, the rest exact", what, all);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_recdamage needs an hcomp: target");
    static const char *const caps[1] = {"unlimited"};
    ttiers tt;
    t_make_tiers(&t, &tt, 1, caps);
    /* format 2: records of the one mapping log are damaged (format 3's writer logs:
     * tests/unit/test_wlog.c) */
    MPI_Info info = t_info(&t, "hcomp_config", tt.cfg, "hcomp_piece_size", "4096", "hcomp_codec",
                           "none", "hcomp_format", "2", NULL);
    MPI_Status st;
    t_fill_random(ref, sizeof ref, 2024);
    memcpy(old3, ref + 3 * PS, PS);
    t_fill_random(ref + 3 * PS, PS, 2025);

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    if (t.rank == 0) {
        uint8_t *first = t_malloc(NP * PS);
        memcpy(first, ref, NP * PS);
        memcpy(first + 3 * PS, old3, PS);
        TCHK(MPI_File_write_at(fh, 0, first, NP * PS, MPI_BYTE, &st));
        TCHK(MPI_File_write_at(fh, 3 * PS, ref + 3 * PS, PS, MPI_BYTE, &st));
        free(first);
    }
    TCHK(MPI_File_set_size(fh, (NP - 1) * PS));
    TCHK(MPI_File_close(&fh));
    memset(ref + (NP - 1) * PS, 0, PS);
    check(&t, info, "intact file");

    unsigned char *map0 = NULL;
    size_t map0_len = 0;
    t_rec r[64];
    int nrec = 0;
    if (t.rank == 0) {
        map0 = t_slurp(t.path, &map0_len);
        TASSERT(map0 != NULL, "cannot read %s", t.path);
        nrec = t_records(map0, map0_len, r, 64);
    }
    MPI_Bcast(&nrec, 1, MPI_INT, 0, MPI_COMM_WORLD);
    /* the cases: record index and what it is */
    int which[4] = {-1, -1, -1, -1};
    if (t.rank == 0) {
        int pieces = 0;
        for (int i = 0; i < nrec; i++) {
            if (r[i].type == 1 && which[0] < 0)
                which[0] = i;
            if (r[i].type == 2 && pieces++ == 7)
                which[1] = i;
            if (r[i].type == 2 && pieces == 17)
                which[2] = i;
            if (r[i].type == 3)
                which[3] = i;
        }
        for (int c = 0; c < 4; c++)
            TASSERT(which[c] >= 0, "unexpected log (%d records): case %d has no record", nrec, c);
    }
    static const char *const what[4] = {
        "SEGMENT record damaged", "PIECE record of piece 7 damaged",
        "PIECE record of the overwrite of piece 3 damaged", "SIZE record damaged"};
    for (int c = 0; c < 4; c++) {
        int err = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (t.rank == 0) /* a payload byte (past the 12-byte frame head), not the last one */
            err = t_flip_byte(t.path, (long long)(r[which[c]].at + 12 + (c == 3 ? 0 : 2)));
        MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (err)
            TFAIL("damaging the mapping file: %s", strerror(err));
        check(&t, info, what[c]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (t.rank == 0)
            err = t_write_bytes(t.path, map0, map0_len, 0, 1);
        MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (err)
            TFAIL("restoring the mapping file: %s", strerror(err));
    }

    t_delete(&t, t.target, info);
    t_remove_tiers(&t, &tt);
    MPI_Info_free(&info);
    free(map0);
    return t_finish(&t);
}
