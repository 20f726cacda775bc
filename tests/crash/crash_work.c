/* Workloads for the crash-state explorer (tests/crash), run under crash_record.so.
 *
 *   crash_work WORKLOAD TARGET CONFIG ORACLE_DIR [HINT=VALUE...]
 *   crash_work mark TEXT              record TEXT in the trace (no MPI)
 *   crash_work read TARGET CONFIG OUT read TARGET through MPI-IO into OUT (singleton)
 *
 * Rank 0 keeps the whole file's expected content (every rank's writes are a function
 * of the step and the offset) and tells the explorer what it may find, through marks:
 *   "intent O"  a write is about to start; once it is done the file is ORACLE_DIR/O
 *   "synced O"  every rank's MPI_File_sync returned: ORACLE_DIR/O is durable
 * so that the explorer can check, in every crash state after "synced O", that each
 * byte is O's or one a later write put there.  Workloads (issue 46):
 *   collective  write_at_all, sync; overwrite unaligned ranges and extend, sync; close
 *   rewrite     a checkpoint written, synced, closed; reopened and rewritten whole,
 *               synced, closed with hcomp_reclaim=close (the old pieces reclaimed)
 *   ramsync     pieces left on the RAM tier (hcomp_drain=never) moved off by the sync
 *   small       runs of 1000-byte independent writes, synced, coalesced at close
 *   drain       pieces on the RAM tier (hcomp_drain=background), synced, more
 *               written, then the close drains them to the shared tier
 *   killed      written, synced, more written, then every rank is killed (no close) */
#define _GNU_SOURCE
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REGION (192 * 1024)

static int rank, nprocs;
static const char *oracle_dir;
static unsigned char *expect;
static size_t expect_len;
static int oracle_n;

static void mark(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mark(const char *fmt, ...)
{
    char text[512], path[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "/HCOMP_CRASH_MARK/%s", text);
    (void) access(path, F_OK);
}

static void check(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "crash_work rank %d: %s: %s\n", rank, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* the byte a write of step STEP puts at OFF: text-like and numeric runs, compressible */
static unsigned char gen(int step, uint64_t off)
{
    static const char words[] = "pressure temperature velocity density 0123456789 ";
    uint64_t k = off + (uint64_t) step * 7777;
    if ((off / 4096) % 3 == 0)
        return (unsigned char) words[k % (sizeof words - 1)];
    return (unsigned char) ((k / 8) * 31 + step);
}

/* rank 0's model of the file: every rank's write of STEP at [off, off+len) */
static void model(int step, uint64_t off, uint64_t len)
{
    if (rank != 0)
        return;
    if (off + len > expect_len) {
        expect = realloc(expect, off + len);
        memset(expect + expect_len, 0, off + len - expect_len);
        expect_len = off + len;
    }
    for (uint64_t i = 0; i < len; i++)
        expect[off + i] = gen(step, off + i);
}

/* rank 0 writes the model to the next oracle file and returns its name */
static const char *oracle(void)
{
    static char name[64];
    if (rank != 0)
        return name;
    snprintf(name, sizeof name, "o%d.bin", ++oracle_n);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", oracle_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(expect, 1, expect_len, f) != expect_len || fclose(f) != 0) {
        fprintf(stderr, "crash_work: cannot write %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return name;
}

static void write_step(MPI_File fh, int step, uint64_t off, uint64_t len, int collective)
{
    unsigned char *b = malloc(len ? len : 1);
    for (uint64_t i = 0; i < len; i++)
        b[i] = gen(step, off + i);
    if (collective)
        check(MPI_File_write_at_all(fh, (MPI_Offset) off, b, (int) len, MPI_BYTE,
                                    MPI_STATUS_IGNORE), "write_at_all");
    else if (len)
        check(MPI_File_write_at(fh, (MPI_Offset) off, b, (int) len, MPI_BYTE, MPI_STATUS_IGNORE),
              "write_at");
    free(b);
}

/* every rank's part of a step: announced by rank 0 before anyone writes */
typedef struct { uint64_t off, len; } part;

static void step_all(MPI_File fh, int step, part (*where)(int r), int collective)
{
    for (int r = 0; r < nprocs; r++)
        model(step, where(r).off, where(r).len);
    const char *o = oracle();
    if (rank == 0)
        mark("intent %s", o);
    MPI_Barrier(MPI_COMM_WORLD);
    write_step(fh, step, where(rank).off, where(rank).len, collective);
}

static void sync_all(MPI_File fh)
{
    check(MPI_File_sync(fh), "sync");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char path[1024];
        snprintf(path, sizeof path, "o%d.bin", oracle_n);
        mark("synced %s", path);
    }
}

static part whole_region(int r) { return (part){(uint64_t) r * REGION, REGION}; }
static part overwrite(int r)
{
    /* unaligned ranges inside each region; the last rank also extends the file */
    if (r == nprocs - 1)
        return (part){(uint64_t) r * REGION + 40000, REGION - 40000 + 20000};
    return (part){(uint64_t) r * REGION + 40000, 50000};
}

/* the last close folds the logs, coalesces and reclaims: every call in it is a crash
 * point (the explorer's "begin"/"end" marks) */
static void close_last(MPI_File *fh)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        mark("begin close");
    check(MPI_File_close(fh), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        mark("end close");
}

static MPI_File open_file(const char *target, MPI_Info info, int amode)
{
    MPI_File fh;
    check(MPI_File_open(MPI_COMM_WORLD, target, amode, info, &fh), "open");
    return fh;
}

static int small_count = 64;
static void small_writes(MPI_File fh, int step)
{
    /* rank r's run of 1000-byte writes, one after another: pieces under 4 KiB that the
     * close writes again as whole pieces */
    uint64_t base = (uint64_t) rank * small_count * 1000;
    for (int r = 0; r < nprocs; r++)
        model(step, (uint64_t) r * small_count * 1000, (uint64_t) small_count * 1000);
    const char *o = oracle();
    if (rank == 0)
        mark("intent %s", o);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < small_count; i++)
        write_step(fh, step, base + (uint64_t) i * 1000, 1000, 0);
}

static int do_read(const char *target, const char *config, const char *out)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (strncmp(target, "hcomp:", 6) == 0)
        MPI_Info_set(info, "hcomp_config", config);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_SELF, target, MPI_MODE_RDONLY, info, &fh);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "open: %s\n", msg);
        return 2;
    }
    MPI_Offset size;
    MPI_File_get_size(fh, &size);
    unsigned char *b = malloc((size_t) size + 1);
    MPI_Status st;
    rc = MPI_File_read_at(fh, 0, b, (int) size, MPI_BYTE, &st);
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (rc != MPI_SUCCESS || got != size) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "read: %s (%d of %lld bytes)\n", rc ? msg : "short", got, (long long) size);
        return 2;
    }
    MPI_File_close(&fh);
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(b, 1, (size_t) size, f) != (size_t) size || fclose(f) != 0)
        return 2;
    free(b);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "mark") == 0) {
        mark("%s", argv[2]);
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc == 5 && strcmp(argv[1], "read") == 0) {
        int rc = do_read(argv[2], argv[3], argv[4]);
        MPI_Finalize();
        return rc;
    }
    if (argc < 5) {
        fprintf(stderr, "usage: crash_work WORKLOAD TARGET CONFIG ORACLE_DIR [HINT=VALUE...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *w = argv[1], *target = argv[2];
    oracle_dir = argv[4];
    MPI_Info info;
    MPI_Info_create(&info);
    if (strncmp(target, "hcomp:", 6) == 0)
        MPI_Info_set(info, "hcomp_config", argv[3]);
    for (int i = 5; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq)
            continue;
        *eq = 0;
        MPI_Info_set(info, argv[i], eq + 1);
    }
    const int amode = MPI_MODE_CREATE | MPI_MODE_RDWR;
    MPI_File fh = open_file(target, info, amode);
    if (strcmp(w, "collective") == 0 || strcmp(w, "ramsync") == 0) {
        step_all(fh, 1, whole_region, 1);
        sync_all(fh);
        step_all(fh, 2, overwrite, 1);
        sync_all(fh);
        close_last(&fh);
    } else if (strcmp(w, "rewrite") == 0) {
        step_all(fh, 1, whole_region, 1);
        sync_all(fh);
        check(MPI_File_close(&fh), "close");
        fh = open_file(target, info, MPI_MODE_RDWR);
        step_all(fh, 2, whole_region, 1);
        sync_all(fh);
        close_last(&fh);
    } else if (strcmp(w, "small") == 0) {
        small_writes(fh, 1);
        sync_all(fh);
        close_last(&fh);
    } else if (strcmp(w, "drain") == 0) {
        step_all(fh, 1, whole_region, 1);
        sync_all(fh);
        step_all(fh, 2, overwrite, 1);
        close_last(&fh);
    } else if (strcmp(w, "killed") == 0) {
        step_all(fh, 1, whole_region, 1);
        sync_all(fh);
        step_all(fh, 2, overwrite, 1);
        MPI_Barrier(MPI_COMM_WORLD);
        fflush(NULL);
        raise(SIGKILL); /* no close, no MPI_Finalize: the job dies here */
    } else {
        fprintf(stderr, "crash_work: unknown workload %s\n", w);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        mark("closed");
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
