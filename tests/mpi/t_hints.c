/* Hints: MPI_File_get_info reports every hcomp_* hint with its current value
 * (defaults included), values given at open, and values changed by
 * MPI_File_set_info and MPI_File_set_view; data written before and after each
 * codec change reads back; MPI's access_style is shown as given and the data written
 * and read under random reads back.
 *
 *   t_hints TARGET [CONFIG]
 *
 * For ufs targets only the generic part runs (get_info works, ROMIO's own
 * hints are there, data round-trips). */
#include "tcommon.h"

#define LEN (256 * KiB)

/* value of key in the file's info, or NULL if absent (static buffer) */
static const char *info_get(MPI_File fh, const char *key)
{
    static char val[MPI_MAX_INFO_VAL + 1];
    MPI_Info got;
    int flag = 0;
    TCHK(MPI_File_get_info(fh, &got));
    MPI_Info_get(got, key, MPI_MAX_INFO_VAL, val, &flag);
    MPI_Info_free(&got);
    return flag ? val : NULL;
}

static void expect_hint(MPI_File fh, const char *key, const char *want, const char *when)
{
    const char *v = info_get(fh, key);
    if (!v)
        TFAIL("%s: hint %s missing from MPI_File_get_info", when, key);
    if (want && strcmp(v, want) != 0)
        TFAIL("%s: hint %s is '%s', want '%s'", when, key, v, want);
}

static void dump_info(const tctx *t, MPI_File fh)
{
    if (t->rank != 0)
        return;
    MPI_Info got;
    int n = 0;
    TCHK(MPI_File_get_info(fh, &got));
    MPI_Info_get_nkeys(got, &n);
    printf("  [%s] %d hints:", t->test, n);
    for (int i = 0; i < n; i++) {
        char k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
        int flag;
        MPI_Info_get_nthkey(got, i, k);
        MPI_Info_get(got, k, MPI_MAX_INFO_VAL, v, &flag);
        if (strncmp(k, "hcomp_", 6) == 0 || strncmp(k, "cb_", 3) == 0)
            printf(" %s=%s", k, v);
    }
    printf("\n");
    MPI_Info_free(&got);
}

static void write_part(MPI_File fh, const tctx *t, uint64_t base)
{
    uint64_t a = base + (uint64_t)t->rank * LEN / t->nprocs;
    uint64_t b = base + (uint64_t)(t->rank + 1) * LEN / t->nprocs;
    uint8_t *buf = t_malloc(b - a);
    MPI_Status st;
    t_fill(buf, b - a, a, 31);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)a, buf, (int)(b - a), MPI_BYTE, &st));
    free(buf);
}

static void check_all(MPI_File fh, uint64_t len, const char *when)
{
    uint8_t *b = t_malloc(len), *e = t_malloc(len);
    MPI_Status st;
    t_fill(e, len, 0, 31);
    TASSERT(t_get_size(fh) == (MPI_Offset)len, "%s: size %lld", when, (long long)t_get_size(fh));
    TCHK(MPI_File_read_at_all(fh, 0, b, (int)len, MPI_BYTE, &st));
    t_expect_bytes(__FILE__, __LINE__, b, e, len, 0, when);
    free(b), free(e);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);

    /* 1. defaults */
    MPI_Info info = t_info(&t, NULL);
    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    dump_info(&t, fh);
    expect_hint(fh, "cb_buffer_size", NULL, "defaults"); /* ROMIO's own hints survive */
    if (t.is_hcomp) {
        const char *c = info_get(fh, "hcomp_codec");
        if (!c || strcmp(c, "auto") != 0)
            TFAIL("defaults: hcomp_codec is '%s', want 'auto'", c ? c : "(missing)");
        expect_hint(fh, "hcomp_priority", "read_after_write", "defaults");
        expect_hint(fh, "hcomp_weights", "0.3,0.3,0.4", "defaults");
        expect_hint(fh, "hcomp_codecs", "all", "defaults");
        expect_hint(fh, "hcomp_drain", "close", "defaults");
        expect_hint(fh, "hcomp_piece_size", "1048576", "defaults");
        expect_hint(fh, "hcomp_config", t.config, "defaults");
        /* the storage's bandwidth is shared by the job's ranks on this node */
        MPI_Comm node;
        int here;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &here);
        MPI_Comm_free(&node);
        char want[16];
        snprintf(want, sizeof(want), "%d", here);
        expect_hint(fh, "hcomp_node_writers", want, "defaults");
    }
    write_part(fh, &t, 0);
    TCHK(MPI_File_close(&fh));
    MPI_Info_free(&info);

    /* 2. hints given at open (re-opening an existing file with new hints) */
    info = t_info(&t, "hcomp_codec", "zstd:3", "hcomp_piece_size", "65536", NULL);
    fh = t_open(&t, t.target, MPI_MODE_RDWR, info);
    dump_info(&t, fh);
    if (t.is_hcomp) {
        expect_hint(fh, "hcomp_codec", "zstd:3", "hints at open");
        expect_hint(fh, "hcomp_piece_size", "65536", "hints at open");
        expect_hint(fh, "hcomp_config", t.config, "hints at open");
    }
    write_part(fh, &t, LEN);

    /* 3. MPI_File_set_info changes the codec for later writes */
    MPI_Info chg;
    MPI_Info_create(&chg);
    MPI_Info_set(chg, "hcomp_codec", "zlib:6");
    TCHK(MPI_File_set_info(fh, chg));
    MPI_Info_free(&chg);
    if (t.is_hcomp) {
        expect_hint(fh, "hcomp_codec", "zlib:6", "after set_info");
        expect_hint(fh, "hcomp_piece_size", "65536", "after set_info");
    }
    write_part(fh, &t, 2 * LEN);

    /* 4. hints passed to MPI_File_set_view apply too */
    MPI_Info vi;
    MPI_Info_create(&vi);
    MPI_Info_set(vi, "hcomp_codec", "bzip2");
    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", vi));
    MPI_Info_free(&vi);
    if (t.is_hcomp)
        expect_hint(fh, "hcomp_codec", "bzip2", "after set_view with hints");
    write_part(fh, &t, 3 * LEN);

    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    check_all(fh, 4 * LEN, "four codecs, same open");
    TCHK(MPI_File_close(&fh));
    MPI_Info_free(&info);

    /* 5. reopen without codec hints: everything decodes, defaults reported again */
    info = t_info(&t, NULL);
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    check_all(fh, 4 * LEN, "four codecs, after reopen");
    if (t.is_hcomp)
        expect_hint(fh, "hcomp_piece_size", "1048576", "reopen without hints");
    TCHK(MPI_File_close(&fh));

    t_delete(&t, t.target, info);
    MPI_Info_free(&info);

    /* 6. MPI's access_style: shown as given (MPICH's test/mpi/io/setinfo asks for it back
     * verbatim), changed by set_info, values hcomp does not know taken; the data written
     * under random (8 KiB blocks) reads back whole and in parts */
    info = t_info(&t, "access_style", "write_once,random", NULL);
    fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    if (t.is_hcomp) {
        expect_hint(fh, "access_style", "write_once,random", "access_style at open");
        expect_hint(fh, "hcomp_block_size", "auto", "access_style at open");
    }
    write_part(fh, &t, 0);
    write_part(fh, &t, LEN);
    MPI_Info_create(&chg);
    MPI_Info_set(chg, "access_style", "read_once,sequential,no_such_style");
    TCHK(MPI_File_set_info(fh, chg));
    MPI_Info_free(&chg);
    if (t.is_hcomp)
        expect_hint(fh, "access_style", "read_once,sequential,no_such_style", "after set_info");
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    check_all(fh, 2 * LEN, "written under access_style=random");
    TCHK(MPI_File_close(&fh));
    MPI_Info_free(&info);
    info = t_info(&t, "access_style", "random", NULL);
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    {
        /* scattered small reads over block edges, each rank its own */
        uint8_t got[5000], want[5000];
        uint64_t seed = 77 + (uint64_t)t.rank;
        for (int i = 0; i < 24; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t len = 1 + (seed >> 33) % sizeof(got);
            uint64_t off = (seed >> 13) % (2 * LEN - len);
            MPI_Status st;
            TCHK(MPI_File_read_at(fh, (MPI_Offset)off, got, (int)len, MPI_BYTE, &st));
            t_fill(want, len, off, 31);
            t_expect_bytes(__FILE__, __LINE__, got, want, len, off, "random read");
        }
    }
    check_all(fh, 2 * LEN, "read under access_style=random");
    TCHK(MPI_File_close(&fh));
    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    return t_finish(&t);
}
