/* What a POSIX file system gives and MPI does not promise, which parallel HDF5 and many
 * programs rely on, with hcomp's default hints:
 *
 *   1. a write seen by the other processes after a barrier alone, without MPI_File_sync
 *      (HDF5 1.10 writes metadata with independent writes and lets other processes read
 *      it after MPI_Barrier; HDF5's own t_mpi checks a write, a broadcast, a barrier and
 *      a read by the others): writes of 32 B to 70,000 B by each rank in turn, then
 *      the same bytes rewritten by other ranks after everyone read them once;
 *   2. MPI_File_close returns once every process has closed the file: rank 0 then opens
 *      it alone (MPI_COMM_SELF) and must find the last rank's writes, here small writes
 *      gathered on that rank's handle (hcomp_write_buffer=4MiB) which its own close
 *      writes out; and no other process's close still holds a lock on the file (an
 *      flock(LOCK_EX | LOCK_NB), which HDF5's serial driver takes when it creates a
 *      file where a parallel one was just closed).
 *
 *   t_visible TARGET [CONFIG] */
#include "tcommon.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#define SEED 31
#define NREC 1000
#define REC 1024

/* pass 0 writes new bytes; pass 1 rewrites them, each by another rank than before, once
 * every rank has read (and may keep in its caches) what pass 0 wrote there */
static void write_then_barrier(const tctx *t, MPI_File fh, int pass)
{
    static const int sizes[] = {32, 1000, 4096, 70000};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    MPI_Offset off = 0;
    for (int k = 0; k < ns * t->nprocs; k++) {
        const int len = sizes[k % ns], writer = (k + pass) % t->nprocs;
        uint8_t *w = t_malloc((size_t)len), *g = t_malloc((size_t)len);
        MPI_Status st;
        t_fill(w, (uint64_t)len, (uint64_t)off, SEED + (uint64_t)pass);
        int rc = MPI_SUCCESS;
        if (t->rank == writer)
            rc = MPI_File_write_at(fh, off, w, len, MPI_BYTE, &st);
        MPI_Bcast(&rc, 1, MPI_INT, writer, MPI_COMM_WORLD);
        TASSERT(rc == MPI_SUCCESS, "write %d of rank %d failed", k, writer);
        MPI_Barrier(MPI_COMM_WORLD);
        memset(g, 0xEE, (size_t)len);
        TCHK(MPI_File_read_at(fh, off, g, len, MPI_BYTE, &st));
        TASSERT(t_count(&st) == len, "rank %d read %d of the %d bytes rank %d wrote at %lld "
                "before a barrier (no sync)", t->rank, t_count(&st), len, writer, (long long)off);
        TEXPECT_BYTES(g, w, (uint64_t)len, (uint64_t)off, "bytes another rank wrote before a barrier");
        MPI_Barrier(MPI_COMM_WORLD);    /* everybody read before the next write */
        off += len + 100;               /* a gap: holes between the writes */
        free(w), free(g);
    }
}

/* rank 0, right after its MPI_File_close returned: nobody holds a lock on the file, and
 * every rank's writes are in it */
static void check_after_close(const tctx *t, const char *name, const char *path, MPI_Info info)
{
    int fd = open(path, O_RDONLY);
    TASSERT(fd >= 0, "open %s after close: %s", path, strerror(errno));
    TASSERT(flock(fd, LOCK_EX | LOCK_NB) == 0,
            "%s is still locked by another process's close after MPI_File_close returned (%s)",
            path, strerror(errno));
    flock(fd, LOCK_UN);
    close(fd);

    const uint64_t len = (uint64_t)t->nprocs * NREC * REC;
    uint8_t *g = t_malloc(len), *e = t_malloc(len);
    memset(e, 0, len);
    t_fill(e + (uint64_t)(t->nprocs - 1) * NREC * REC, (uint64_t)NREC * REC,
           (uint64_t)(t->nprocs - 1) * NREC * REC, SEED);
    MPI_File fh;
    TCHK(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, info, &fh));
    MPI_Offset size;
    TCHK(MPI_File_get_size(fh, &size));
    TASSERT(size == (MPI_Offset)len, "size %lld right after the close, want %llu (the last "
            "rank's writes)", (long long)size, (unsigned long long)len);
    MPI_Status st;
    memset(g, 0xEE, len);
    TCHK(MPI_File_read_at(fh, 0, g, (int)len, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)len, "read %d of %llu right after the close", t_count(&st),
            (unsigned long long)len);
    TEXPECT_BYTES(g, e, len, 0, "the file opened alone right after every rank closed it");
    TCHK(MPI_File_close(&fh));
    free(g), free(e);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    MPI_Info info = t_info(&t, NULL);

    /* 1 */
    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    write_then_barrier(&t, fh, 0);
    write_then_barrier(&t, fh, 1);
    TCHK(MPI_File_close(&fh));
    t_delete(&t, t.target, info);

    /* 2: only the last rank writes, in small writes its handle gathers, so its close has
     * the work to do and the others' closes have none; on one tier whose speed hcomp
     * emulates at 20 MB/s, so that the close takes about 50 ms whatever the machine, and
     * a close that returned before the others finished would be seen */
    char tdir[4200], tcfg[4200], json[8600];
    snprintf(tdir, sizeof tdir, "%.4000s", t_path(&t, ".slowtier"));
    snprintf(tcfg, sizeof tcfg, "%.4000s.json", tdir);
    snprintf(json, sizeof json, "{\"version\":1,\"tiers\":[{\"name\":\"slow\",\"path\":\"%s\","
             "\"capacity\":\"unlimited\",\"scope\":\"shared\",\"emulate\":true,"
             "\"bandwidth\":\"20MB/s\",\"latency\":\"1ms\"}]}\n", tdir);
    t_mkdir(&t, tdir);
    t_write_text(&t, tcfg, json);
    MPI_Info ginfo = t_info(&t, "hcomp_write_buffer", "4MiB", "hcomp_config", tcfg, NULL);
    const char *name = t_name(&t, ".close"), *path = t_path(&t, ".close");
    t_delete_quiet(&t, name, ginfo);
    fh = t_open(&t, name, MPI_MODE_CREATE | MPI_MODE_RDWR, ginfo);
    if (t.rank == t.nprocs - 1) {
        const uint64_t base = (uint64_t)(t.nprocs - 1) * NREC * REC;
        uint8_t rec[REC];
        MPI_Status st;
        for (uint64_t i = 0; i < NREC; i++) {
            uint64_t off = base + ((i * 7919) % NREC) * REC;   /* a shuffled order */
            t_fill(rec, REC, off, SEED);
            TCHK(MPI_File_write_at(fh, (MPI_Offset)off, rec, REC, MPI_BYTE, &st));
        }
    }
    TCHK(MPI_File_close(&fh));
    if (t.rank == 0)
        check_after_close(&t, name, path, ginfo);
    MPI_Barrier(MPI_COMM_WORLD);
    t_delete(&t, name, ginfo);
    MPI_Barrier(MPI_COMM_WORLD);
    t_unlink(&t, tcfg);
    t_rmdir(&t, tdir);
    MPI_Info_free(&ginfo);
    MPI_Info_free(&info);
    return t_finish(&t);
}
