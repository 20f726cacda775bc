/* Damaged storage seen through MPI-IO: a damaged piece, segment or mapping file makes
 * MPI_File_open or MPI_File_read_at fail with an MPI error class and a message that
 * names the file and the cause - no crash, never wrong bytes - and what is intact
 * still reads back. hcomp targets only.
 *
 *   t_damage TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * One tier; rank 0 writes 16 pieces of 4 KiB (random data, codec none, so piece k is
 * at 4112*k in the only segment) and closes; rank 0 then damages a copy of what hcomp
 * stored, every rank checks, and the original is put back:
 *   piece payload byte flipped      read of that piece: MPI_ERR_IO, names the segment,
 *                                   "checksum"; the other pieces read back
 *   piece header byte flipped       read of that piece: MPI_ERR_IO, names the segment
 *   segment truncated in piece 10   pieces 10-15: MPI_ERR_IO, names the segment,
 *                                   "truncated"; pieces 0-9 read back
 *   segment removed                 MPI_ERR_NO_SUCH_FILE, names the segment
 *   mapping file cut inside its header     open: MPI_ERR_IO, names it, "truncated"
 *   mapping file header byte flipped       open: MPI_ERR_IO, names it, "corrupt"
 *   mapping file magic damaged             open: MPI_ERR_IO, "not an hcomp file"
 *   mapping file of format version 99      open (read-only, read-write, create):
 *                                          MPI_ERR_IO, names it, "version 99"; the
 *                                          file is left as it was
 *   mapping file cut inside its last record (a torn append, e.g. a writer killed at
 *   close): opens; every piece reads back (the lost record held statistics only);
 *   then a writable open overwrites a piece and appends a new one: read back at once
 *   and after reopening, the new data must be there (writers append after the torn
 *   bytes; readers must find their records)
 *   mapping file cut inside a PIECE record (the last write's): opens; the earlier
 *   pieces read back, the lost piece reads as absent (short read), never garbage
 * (Records damaged in the middle of the log: t_recdamage; a collective read over a
 * damaged piece: t_collfail.) */
#include "tfault.h"

#define PS 4096
#define NP 16
#define STORED (PS + 16 + 16) /* header, block table of one block (format 2), payload */

typedef struct fx {
    tctx *t;
    ttiers tt;
    MPI_Info info;
    uint8_t ref[NP * PS];
    char seg[4096];        /* the segment file */
    unsigned char *seg0;   /* its original bytes (rank 0) */
    size_t seg0_len;
    unsigned char *map0;   /* the mapping file's original bytes (rank 0) */
    size_t map0_len;
} fx;

static void rank0_do(const tctx *t, int err, const char *what)
{
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err)
        TFAIL("%s: %s", what, strerror(err));
    (void)t;
}

/* put the segment and the mapping file back as they were */
static void restore(fx *x)
{
    int err = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (x->t->rank == 0) {
        err = t_write_bytes(x->seg, x->seg0, x->seg0_len, 0, 1);
        if (!err)
            err = t_write_bytes(x->t->path, x->map0, x->map0_len, 0, 1);
    }
    rank0_do(x->t, err, "restoring the original files");
}

/* Read piece range [p0, p1) with MPI_File_read_at on every rank: must succeed with
 * the right bytes (want_cls == MPI_SUCCESS) or fail with want_cls and a message that
 * contains the strings given. */
static void read_pieces(fx *x, MPI_File fh, int p0, int p1, int want_cls, const char *s1,
                        const char *s2, const char *what)
{
    uint8_t buf[NP * PS];
    MPI_Status st;
    uint64_t off = (uint64_t)p0 * PS, len = (uint64_t)(p1 - p0) * PS;
    memset(buf, 0xa5, sizeof buf);
    int rc = MPI_File_read_at(fh, (MPI_Offset)off, buf, (int)len, MPI_BYTE, &st);
    if (want_cls == MPI_SUCCESS) {
        if (rc != MPI_SUCCESS)
            TFAIL("%s: reading pieces %d-%d failed: %s", what, p0, p1 - 1, t_errstr(rc));
        TASSERT(t_count(&st) == (int)len, "%s: read %d of %llu bytes", what, t_count(&st),
                (unsigned long long)len);
        TEXPECT_BYTES(buf, x->ref + off, len, off, what);
        return;
    }
    if (rc == MPI_SUCCESS) {
        /* a success must at least carry the right bytes */
        TEXPECT_BYTES(buf, x->ref + off, len, off, t_fmt("%s (the read succeeded)", what));
        TFAIL("%s: reading pieces %d-%d succeeded, expected %s", what, p0, p1 - 1,
              t_class_name(want_cls));
    }
    const char *msg = t_err_text(rc);
    if (t_err_class(rc) != want_cls)
        TFAIL("%s: expected %s, got %s", what, t_class_name(want_cls), t_errstr(rc));
    if ((s1 && !strstr(msg, s1)) || (s2 && !strstr(msg, s2)))
        TFAIL("%s: the message does not name '%s' and '%s': %s", what, s1 ? s1 : "",
              s2 ? s2 : "", msg);
    if (x->t->rank == 0)
        printf("  [%s] %s: %s: %.500s\n", x->t->test, what, t_class_name(want_cls), msg);
}

static MPI_File open_ro(fx *x)
{
    return t_open(x->t, x->t->target, MPI_MODE_RDONLY, x->info);
}

/* ---- damage in the segment ---------------------------------------------------------- */

static void segment_cases(fx *x)
{
    const tctx *t = x->t;
    MPI_File fh;
    int err = 0;

    /* a payload byte of piece 3 */
    if (t->rank == 0)
        err = t_flip_byte(x->seg, 3 * STORED + 16 + 100);
    rank0_do(t, err, "flipping a payload byte");
    fh = open_ro(x);
    read_pieces(x, fh, 3, 4, MPI_ERR_IO, x->seg, "checksum", "piece payload byte flipped");
    read_pieces(x, fh, 2, 5, MPI_ERR_IO, x->seg, NULL, "read across the damaged piece");
    read_pieces(x, fh, 0, 3, MPI_SUCCESS, NULL, NULL, "pieces before the damaged one");
    read_pieces(x, fh, 4, NP, MPI_SUCCESS, NULL, NULL, "pieces after the damaged one");
    { /* 7 bytes inside the damaged piece, through the one-piece cache path */
        uint8_t b[7];
        MPI_Status st;
        int rc = MPI_File_read_at(fh, 3 * PS + 4000, b, 7, MPI_BYTE, &st);
        TASSERT(rc != MPI_SUCCESS && t_err_class(rc) == MPI_ERR_IO,
                "7 bytes inside the damaged piece: %s", rc ? t_errstr(rc) : "read succeeded");
    }
    TCHK(MPI_File_close(&fh));
    restore(x);

    /* a header byte of piece 5 (its logical offset) */
    if (t->rank == 0)
        err = t_flip_byte(x->seg, 5 * STORED + 1);
    rank0_do(t, err, "flipping a piece header byte");
    fh = open_ro(x);
    read_pieces(x, fh, 5, 6, MPI_ERR_IO, x->seg, "header", "piece header byte flipped");
    read_pieces(x, fh, 6, NP, MPI_SUCCESS, NULL, NULL, "pieces after the damaged header");
    TCHK(MPI_File_close(&fh));
    restore(x);

    /* the segment cut in the middle of piece 10 */
    if (t->rank == 0)
        err = truncate(x->seg, 10 * STORED + 2000) != 0 ? errno : 0;
    rank0_do(t, err, "truncating the segment");
    fh = open_ro(x);
    read_pieces(x, fh, 10, 11, MPI_ERR_IO, x->seg, "truncated", "segment cut inside piece 10");
    read_pieces(x, fh, 15, 16, MPI_ERR_IO, x->seg, "truncated", "piece 15 after the cut");
    read_pieces(x, fh, 0, 10, MPI_SUCCESS, NULL, NULL, "pieces 0-9 before the cut");
    TCHK(MPI_File_close(&fh));
    restore(x);

    /* the segment gone */
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0)
        err = unlink(x->seg) != 0 ? errno : 0;
    rank0_do(t, err, "removing the segment");
    fh = open_ro(x);
    read_pieces(x, fh, 0, NP, MPI_ERR_NO_SUCH_FILE, x->seg, NULL, "segment removed");
    TCHK(MPI_File_close(&fh));
    restore(x);
}

/* ---- damage in the mapping file ------------------------------------------------------ */

static void header_case(fx *x, long long cut, long long flip, int version, const char *s1,
                        const char *what)
{
    const tctx *t = x->t;
    int err = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0) {
        if (cut >= 0)
            err = truncate(t->path, cut) != 0 ? errno : 0;
        if (flip >= 0)
            err = t_flip_byte(t->path, flip);
        if (version) {
            unsigned char v[4] = {(unsigned char)version, 0, 0, 0};
            err = t_write_bytes(t->path, v, 4, 8, 0);
        }
    }
    rank0_do(t, err, what);
    long long before = t_file_size(t->path);
    t_open_fails(x->t, MPI_COMM_WORLD, t->target, MPI_MODE_RDONLY, x->info, MPI_ERR_IO, -1,
                 t_fmt("%s, read-only open", what), t->path, s1, NULL);
    t_open_fails(x->t, MPI_COMM_WORLD, t->target, MPI_MODE_RDWR, x->info, MPI_ERR_IO, -1,
                 t_fmt("%s, read-write open", what), t->path, s1, NULL);
    t_open_fails(x->t, MPI_COMM_WORLD, t->target, MPI_MODE_RDWR | MPI_MODE_CREATE, x->info,
                 MPI_ERR_IO, -1, t_fmt("%s, create", what), t->path, s1, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    TASSERT(t_file_size(t->path) == before, "%s: the failed opens changed the mapping file "
            "(%lld bytes, was %lld)", what, t_file_size(t->path), before);
    restore(x);
}

static void mapfile_cases(fx *x)
{
    tctx *t = x->t;
    MPI_File fh;
    MPI_Status st;
    int err = 0;

    header_case(x, 40, -1, 0, "truncated", "mapping file cut inside its header");
    header_case(x, -1, 20, 0, "corrupt", "mapping file header byte flipped");
    header_case(x, -1, 0, 0, "not an hcomp file", "mapping file magic damaged");
    header_case(x, -1, -1, 99, "version 99", "mapping file of format version 99");

    /* the log: SEGMENT, 16 PIECE records, STATS (written at close) */
    t_rec r[64];
    int nrec, last_piece = -1, stats = -1;
    if (t->rank == 0) {
        nrec = t_records(x->map0, x->map0_len, r, 64);
        for (int i = 0; i < nrec; i++) {
            if (r[i].type == 2)
                last_piece = i;
            if (r[i].type == 4)
                stats = i;
        }
        TASSERT(last_piece > 0 && stats == nrec - 1 && stats > last_piece,
                "unexpected log: %d records, last PIECE %d, STATS %d", nrec, last_piece, stats);
    }

    /* a torn append at the end: the STATS record cut after 40 bytes */
    if (t->rank == 0)
        err = truncate(t->path, (off_t)(r[stats].at + 40)) != 0 ? errno : 0;
    rank0_do(t, err, "cutting the mapping file inside its last record");
    fh = open_ro(x);
    read_pieces(x, fh, 0, NP, MPI_SUCCESS, NULL, NULL, "mapping file cut in its last record");
    TCHK(MPI_File_close(&fh));
    /* a writer after the torn bytes: overwrite piece 2 (rank 0), append piece 16 (last
     * rank); both must be visible at once and after reopening */
    uint8_t more[2][PS];
    t_fill_random(more[0], PS, 901);
    t_fill_random(more[1], PS, 902);
    fh = t_open(t, t->target, MPI_MODE_RDWR, x->info);
    if (t->rank == 0)
        TCHK(MPI_File_write_at(fh, 2 * PS, more[0], PS, MPI_BYTE, &st));
    if (t->rank == t->nprocs - 1)
        TCHK(MPI_File_write_at(fh, NP * PS, more[1], PS, MPI_BYTE, &st));
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    for (int pass = 0; pass < 2; pass++) {
        const char *when = pass ? "after reopening" : "same open";
        uint8_t b[(NP + 1) * PS];
        memset(b, 0xa5, sizeof b);
        MPI_Offset sz = t_get_size(fh);
        TASSERT(sz == (NP + 1) * PS, "writes after a torn record, %s: size %lld, want %d "
                "(the appended piece is not seen)", when, (long long)sz, (NP + 1) * PS);
        TCHK(MPI_File_read_at(fh, 0, b, (NP + 1) * PS, MPI_BYTE, &st));
        TEXPECT_BYTES(b + 2 * PS, more[0], PS, 2 * PS,
                      t_fmt("overwrite after a torn record, %s", when));
        TEXPECT_BYTES(b + NP * PS, more[1], PS, NP * PS,
                      t_fmt("piece appended after a torn record, %s", when));
        TEXPECT_BYTES(b, x->ref, 2 * PS, 0, t_fmt("old pieces 0-1, %s", when));
        TEXPECT_BYTES(b + 3 * PS, x->ref + 3 * PS, (NP - 3) * PS, 3 * PS,
                      t_fmt("old pieces 3-15, %s", when));
        TCHK(MPI_File_close(&fh));
        if (!pass)
            fh = open_ro(x);
    }
    t_log(t, "writes after a torn record at the end of the mapping file are seen");
    restore(x);

    /* the last PIECE record cut (a torn append of a write's records) */
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0)
        err = truncate(t->path, (off_t)(r[last_piece].at + 30)) != 0 ? errno : 0;
    rank0_do(t, err, "cutting the mapping file inside a PIECE record");
    fh = open_ro(x);
    {
        MPI_Offset sz = t_get_size(fh);
        TASSERT(sz == (NP - 1) * PS, "cut PIECE record: size %lld, want %d (the last piece's "
                "record is lost)", (long long)sz, (NP - 1) * PS);
        read_pieces(x, fh, 0, NP - 1, MPI_SUCCESS, NULL, NULL, "pieces before the cut record");
        uint8_t b[PS];
        int rc = MPI_File_read_at(fh, (NP - 1) * PS, b, PS, MPI_BYTE, &st);
        TASSERT(rc == MPI_SUCCESS && t_count(&st) == 0, "the lost piece: read %d bytes (%s), "
                "want 0 (beyond the end)", t_count(&st), rc ? t_errstr(rc) : "ok");
    }
    TCHK(MPI_File_close(&fh));
    restore(x);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_damage needs an hcomp: target");
    static fx x;
    x.t = &t;
    static const char *const caps[1] = {"unlimited"};
    t_make_tiers(&t, &x.tt, 1, caps);
    /* format 2: the damage is done to the one mapping log (format 3's writer logs:
     * tests/unit/test_wlog.c) */
    x.info = t_info(&t, "hcomp_config", x.tt.cfg, "hcomp_piece_size", "4096", "hcomp_codec",
                    "none", "hcomp_format", "2", NULL);
    t_fill_random(x.ref, sizeof x.ref, 31337);

    t_delete_quiet(&t, t.target, x.info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, x.info);
    if (t.rank == 0) {
        MPI_Status st;
        TCHK(MPI_File_write_at(fh, 0, x.ref, NP * PS, MPI_BYTE, &st));
    }
    TCHK(MPI_File_close(&fh));
    if (t.rank == 0) {
        static char segs[4][4096];
        int n = t_find_files(x.tt.dir[0], ".seg", segs, 4);
        TASSERT(n == 1, "%d segment files, expected 1", n);
        snprintf(x.seg, sizeof x.seg, "%s", segs[0]);
        x.seg0 = t_slurp(x.seg, &x.seg0_len);
        x.map0 = t_slurp(t.path, &x.map0_len);
        TASSERT(x.seg0 && x.seg0_len == NP * STORED, "segment %s: %zu bytes, want %d", x.seg,
                x.seg0_len, NP * STORED);
        TASSERT(x.map0 != NULL, "cannot read %s", t.path);
    }
    MPI_Bcast(x.seg, sizeof x.seg, MPI_CHAR, 0, MPI_COMM_WORLD);

    segment_cases(&x);
    mapfile_cases(&x);

    t_delete(&t, t.target, x.info);
    t_remove_tiers(&t, &x.tt);
    MPI_Info_free(&x.info);
    free(x.seg0), free(x.map0);
    return t_finish(&t);
}
