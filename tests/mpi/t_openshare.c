/* One replay of the mapping log for a whole collective open (hint hcomp_open_replay):
 * the view every rank gets from the shared replay is the view of its own replay.
 *
 * The ranks make a file of many pieces and overwrites (independent writes of 1000 bytes
 * with hcomp_write_buffer=0, a collective write over them, a truncation, a growth), close
 * it, then open it collectively with hcomp_open_replay=shared, =each and =auto; every
 * rank reads the whole file and compares it with the model, and with what it reads
 * through an open of its own (MPI_COMM_SELF, which replays the log itself). Without a
 * shared replay a reader replays the log at its first read or size query, so in a
 * collective read through one aggregator only that one reads the log. hcomp: only.
 *
 *   t_openshare TARGET [CONFIG] */
#include "tcommon.h"
#include "../proc_io.h"


#define REC 1000
#define NREC 600
#define SPAN ((uint64_t)NREC * REC)

static void run(const tctx *t)
{
    const int r = t->rank, P = t->nprocs;
    /* hcomp_reclaim=never: the last close would write the small records again as whole
     * pieces, and the log would be too short to tell one replay from several */
    /* format 2: one mapping log that stays long (reclaim never) and is replayed once; a
     * format-3 file's writer logs are replayed by each opener until a close folds them */
    MPI_Info info = t_info(t, "hcomp_write_buffer", "0", "hcomp_reclaim", "never",
                           "hcomp_format", "2", NULL);
    MPI_Status st;
    uint8_t *exp = t_malloc(SPAN + 4096), *got = t_malloc(SPAN + 4096);
    memset(exp, 0, SPAN + 4096);

    t_delete_quiet(t, t->target, info);
    MPI_File fh = t_open(t, t->target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    /* records, every rank its own (pieces of many writers, out of order) */
    t_fill(exp, SPAN, 0, 71);
    for (int i = NREC - 1 - r; i >= 0; i -= P)
        TCHK(MPI_File_write_at(fh, (MPI_Offset)i * REC, exp + (uint64_t)i * REC, REC, MPI_BYTE, &st));
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    /* a collective write over the middle of them */
    uint64_t lo = SPAN / 4 + (uint64_t)r * (SPAN / 2 / P), len = SPAN / 2 / P;
    t_fill(exp + SPAN / 4, SPAN / 2, SPAN / 4, 72);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)lo, exp + lo, (int)len, MPI_BYTE, &st));
    /* cut, then grown back with a hole */
    TCHK(MPI_File_set_size(fh, (MPI_Offset)(SPAN - 50000)));
    memset(exp + SPAN - 50000, 0, 50000 + 4096);
    TCHK(MPI_File_preallocate(fh, (MPI_Offset)(SPAN + 4096)));
    TCHK(MPI_File_close(&fh));
    const uint64_t size = SPAN + 4096;

    static const char *const modes[] = {"shared", "each", "auto"};
    for (int m = 0; m < 3; m++) {
        MPI_Info mi = t_info(t, "hcomp_open_replay", modes[m], NULL);
        struct stat sb;
        TASSERT(stat(t->path, &sb) == 0, "stat %s", t->path);
        MPI_Barrier(MPI_COMM_WORLD);
        long long r0 = proc_bytes_read();
        fh = t_open(t, t->target, MPI_MODE_RDONLY, mi);
        long long mine = proc_bytes_read() - r0, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        /* shared: the log is read once in all (plus a few headers), not once per rank */
        if (m == 0 && P > 1)
            TASSERT(all < sb.st_size * 3 / 2, "[shared] %d ranks read %lld bytes opening a file "
                    "whose mapping file has %lld: not one replay for all", P, all,
                    (long long)sb.st_size);
        /* each: a reader replays the log when it first needs it, not at the open */
        if (m == 1)
            TASSERT(all < sb.st_size / 2, "[each] %d ranks read %lld bytes opening a file whose "
                    "mapping file has %lld: the open replayed it", P, all, (long long)sb.st_size);
        TASSERT(t_get_size(fh) == (MPI_Offset)size, "[%s] size %lld, want %llu", modes[m],
                (long long)t_get_size(fh), (unsigned long long)size);
        mine = proc_bytes_read() - r0;
        MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (m == 1)
            TASSERT(all >= (long long)P * sb.st_size, "[each] %d ranks read %lld bytes by their "
                    "first size query, mapping file %lld", P, all, (long long)sb.st_size);
        memset(got, 0xEE, size);
        TCHK(MPI_File_read_at(fh, 0, got, (int)size, MPI_BYTE, &st));
        TEXPECT_BYTES(got, exp, size, 0, t_fmt("[%s] the whole file, collective open", modes[m]));
        /* the same through an open of this rank alone: it replays the log itself */
        MPI_File own;
        TCHK(MPI_File_open(MPI_COMM_SELF, t->target, MPI_MODE_RDONLY, mi, &own));
        memset(got, 0xEE, size);
        TCHK(MPI_File_read_at(own, 0, got, (int)size, MPI_BYTE, &st));
        TEXPECT_BYTES(got, exp, size, 0, t_fmt("[%s] the whole file, open of one rank", modes[m]));
        TCHK(MPI_File_close(&own));
        TCHK(MPI_File_close(&fh));
        MPI_Info_free(&mi);
    }
    /* each, read collectively through one aggregator: the other ranks never replay the
     * log, and every rank gets its part */
    MPI_Info ci = t_info(t, "hcomp_open_replay", "each", "cb_nodes", "1", "romio_cb_read",
                         "enable", NULL);
    struct stat sb;
    TASSERT(stat(t->path, &sb) == 0, "stat %s", t->path);
    MPI_Barrier(MPI_COMM_WORLD);
    long long c0 = proc_bytes_read();
    fh = t_open(t, t->target, MPI_MODE_RDONLY, ci);
    uint64_t part = size / (uint64_t)P, at = (uint64_t)r * part;
    memset(got, 0xEE, part);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)at, got, (int)part, MPI_BYTE, &st));
    TEXPECT_BYTES(got, exp + at, part, at, "[each] a collective read through one aggregator");
    TCHK(MPI_File_close(&fh));
    int replayed = proc_bytes_read() - c0 >= (long long)sb.st_size, replayers = 0;
    MPI_Allreduce(&replayed, &replayers, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    TASSERT(replayers == 1, "[each] %d of %d ranks replayed the log for a collective read with "
            "one aggregator (want 1: the others read nothing of the file)", replayers, P);
    MPI_Info_free(&ci);
    /* a writable collective open from a shared replay goes on writing correctly */
    MPI_Info wi = t_info(t, "hcomp_open_replay", "shared", "hcomp_write_buffer", "0",
                         "hcomp_reclaim", "never", NULL);
    fh = t_open(t, t->target, MPI_MODE_RDWR, wi);
    uint64_t o = (uint64_t)r * REC;
    t_fill(exp, (uint64_t)P * REC, 0, 73);      /* every rank's record */
    TCHK(MPI_File_write_at(fh, (MPI_Offset)o, exp + o, REC, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    fh = t_open(t, t->target, MPI_MODE_RDONLY, wi);
    memset(got, 0xEE, size);
    TCHK(MPI_File_read_at(fh, 0, got, (int)size, MPI_BYTE, &st));
    TEXPECT_BYTES(got, exp, size, 0, "after writes through a shared-replay open");
    TCHK(MPI_File_close(&fh));
    /* opened again with MPI_MODE_CREATE, as a checkpoint rewritten in place is: ROMIO's
     * create step (one process opens and closes the file first) leaves the file as it is
     * and reads none of its log, and the one replay still reaches every process's open */
    TASSERT(stat(t->path, &sb) == 0, "stat %s", t->path);
    MPI_Barrier(MPI_COMM_WORLD);
    long long w0 = proc_bytes_read();
    fh = t_open(t, t->target, MPI_MODE_CREATE | MPI_MODE_RDWR, wi);
    long long wmine = proc_bytes_read() - w0, wall = 0;
    MPI_Allreduce(&wmine, &wall, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (P > 1)
        TASSERT(wall < sb.st_size * 3 / 2, "[shared, create] %d ranks read %lld bytes opening a "
                "file whose mapping file has %lld: not one replay for all", P, wall,
                (long long)sb.st_size);
    TASSERT(t_get_size(fh) == (MPI_Offset)size, "[shared, create] size %lld, want %llu",
            (long long)t_get_size(fh), (unsigned long long)size);
    t_fill(exp, (uint64_t)P * REC, 0, 74);
    TCHK(MPI_File_write_at(fh, (MPI_Offset)o, exp + o, REC, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    fh = t_open(t, t->target, MPI_MODE_RDONLY, wi);
    memset(got, 0xEE, size);
    TCHK(MPI_File_read_at(fh, 0, got, (int)size, MPI_BYTE, &st));
    TEXPECT_BYTES(got, exp, size, 0, "after writes through a shared-replay open with "
                  "MPI_MODE_CREATE");
    TCHK(MPI_File_close(&fh));
    MPI_Info_free(&wi);
    t_delete(t, t->target, info);
    MPI_Info_free(&info);
    free(exp), free(got);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_openshare needs an hcomp: target");
    run(&t);
    return t_finish(&t);
}
