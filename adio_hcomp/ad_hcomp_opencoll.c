/*
 * OpenColl: plain files pass through. An existing regular file that is not an hcomp
 * file (hcomp_file_kind) is read and written exactly as ufs: would, and never
 * converted; `hcomp import` converts explicitly. This is what makes
 * ROMIO_FSTYPE_FORCE=hcomp: usable on programs that also open their inputs.
 *
 * The decision is made once per open, here, before any Open: the first aggregator
 * (the process ROMIO's create step uses) looks at the file and broadcasts the answer
 * over fd->comm, so every process agrees, those that never call Open (deferred open)
 * included. For a plain file the handle becomes a ufs: handle (fd->fns =
 * &ADIO_UFS_operations, fd->file_system = ADIO_UFS) before ADIOI_GEN_OpenColl opens
 * it, so every later call takes ufs:'s own path: reads, writes, two-phase collective
 * I/O, Fcntl (sizes, preallocate, atomic mode), Resize, Flush, byte-range locks, the
 * shared-file-pointer file (ADIO_Get_shared_fp opens it with fd->fns and
 * fd->file_system), deferred opens, Close and the delete of MPI_MODE_DELETE_ON_CLOSE
 * (ADIO_Delete goes through fd->fns). Nothing of hcomp stays on the handle: fd->fs_ptr
 * is freed (SetInfo keeps state there only to report a bad hint), the hcomp_* hints,
 * which do not apply to it, leave fd->info, romio_filesystem_type names UFS, and the
 * key hcomp_file_kind says "plain". (The alternative, every hcomp operation testing a
 * flag and calling the ufs: function, would spread the same decision over every file
 * of the driver, and miss the places where ROMIO calls fd->fns itself.)
 *
 * Which files: only regular files pass through. A missing file is created as an hcomp
 * file (ROMIO creates it in its first Open, after this decision), as before; a
 * directory, device or FIFO keeps hcomp's error (MPI_ERR_BAD_FILE for a directory,
 * MPI_ERR_IO for the others). A file hcomp creates is
 * never empty, not even for a moment (its mapping file is linked into place with its
 * header), so an empty file was made or emptied by something else. Opened read-only it
 * is plain; opened to be written it becomes an hcomp file (hcomp_file_adoptable_empty
 * here; the header is written in place by the first Open, after the configuration and
 * tiers are checked, so an open failing on them leaves it empty): PnetCDF's ncmpi_create
 * truncates the file with truncate(2) before its MPI_File_open, so every checkpoint it
 * rewrote would otherwise be stored plain; nothing in an empty file can be lost. A
 * mapping file damaged in its first bytes is
 * hcomp to hcomp_file_kind, so its open fails as before, never reads as plain bytes.
 * If the kind cannot be told (no permission to read the file, say), the open takes
 * hcomp's path, which reports the cause. A bad hcomp_* hint fails the open whatever
 * the file is.
 *
 * One replay for all: the mapping log of an existing hcomp file is replayed by that same
 * process alone, and the state it built is broadcast to one process per node, which
 * puts it in the node's shared memory (an MPI shared-memory window); every Open then
 * starts from it and replays only what was appended since (hcomp_file_open_with_state).
 * So the log is read once per open instead of once per process, and travels once per
 * node (docs/SCALING.md). When that process cannot replay it (a damaged log), every
 * process replays itself and reports the cause, as before. Hint hcomp_open_replay: auto
 * (shared, but not on nodes with more processes than cores), shared, each.
 *
 * The create step: ADIOI_GEN_OpenColl has the first aggregator open the file with
 * ADIO_CREATE and close it at once, then every process opens it. That first Open only
 * creates the mapping file (hcomp_file_create: the checks of a full open, without
 * loading the cost model, which would make every other process wait 1-2 ms for a model
 * thrown away at once); st->create_step tells Open which call it is, since deferred
 * opens also reach Open with ADIO_CREATE in the access mode, later, for real.
 */

#include "ad_hcomp.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BCAST_CHUNK (1 << 30)

/* The log's replayed state, shared for one collective open. */
typedef struct shared_replay {
    MPI_Comm node;          /* the processes of this node in fd->comm */
    MPI_Win win;            /* the state, once per node, in the node's shared memory */
    const void *state;      /* NULL: nothing to share; each Open replays */
    size_t len;
} shared_replay;

/* Wait for a nonblocking collective without spinning on the cores a replay needs (MPICH
 * polls: with more processes than cores, busy waiters slow the replay several times). */
static void wait_politely(MPI_Request *req)
{
    for (int done = 0;;) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        struct timespec nap = {0, 200000};
        nanosleep(&nap, NULL);
    }
}

/* root replays the log; its state reaches one process per node (a broadcast among
 * them), which puts it in a window of the node's shared memory that the node's other
 * processes read in place. */
/* Whether this open shares one replay (decided by root, sent with the file's kind).
 * auto: not where root's node has more processes than cores: sharing has the others
 * wait while one replays, and MPICH's collectives among more processes than cores take
 * most of a second for a few MB (BENCHMARKS.md, "Opening a file of many pieces"), so
 * there each replaying for itself is faster. */
static int replay_shared(ADIO_File fd)
{
    int nprocs = 1, flag = 0;
    char value[MPI_MAX_INFO_VAL + 1];
    MPI_Comm_size(fd->comm, &nprocs);
    if (fd->info != MPI_INFO_NULL)
        ADIOI_Info_get(fd->info, "hcomp_open_replay", MPI_MAX_INFO_VAL, value, &flag);
    if (nprocs < 2 || (flag && strcmp(value, "each") == 0))
        return 0;
    if (flag && strcmp(value, "shared") == 0)
        return 1;
    const char *local = getenv("MPI_LOCALNRANKS");     /* set by MPICH's launcher */
    return !(local && atol(local) > sysconf(_SC_NPROCESSORS_ONLN));
}

static void share_replay(ADIO_File fd, int rank, int root, shared_replay *sr)
{
    memset(sr, 0, sizeof(*sr));
    sr->node = MPI_COMM_NULL;
    sr->win = MPI_WIN_NULL;
    /* root first on its node, so that it leads it */
    MPI_Comm_split_type(fd->comm, MPI_COMM_TYPE_SHARED, rank == root ? -1 : rank, MPI_INFO_NULL,
                        &sr->node);
    int node_rank = 0;
    MPI_Comm_rank(sr->node, &node_rank);
    MPI_Comm leaders = MPI_COMM_NULL;
    MPI_Comm_split(fd->comm, node_rank == 0 ? 0 : MPI_UNDEFINED, rank == root ? -1 : rank, &leaders);

    long long n = 0;
    void *state = NULL;
    if (rank == root) {
        hcomp_options *o = hcomp_options_new();
        hcomp_file *f = NULL;
        hcomp_error err;
        size_t l = 0;
        /* a replay needs no tiers: the segments' names are in the log */
        if (o != NULL && hcomp_options_set(o, "hcomp_config", "embedded", &err) == HCOMP_OK &&
            hcomp_file_open(fd->filename, HCOMP_O_RDONLY, 0, 1, o, &f, &err) == HCOMP_OK &&
            hcomp_file_export_state(f, &state, &l, &err) == HCOMP_OK)
            n = (long long) l;
        if (f != NULL)
            hcomp_file_close(f, NULL);
        hcomp_options_free(o);
    }
    MPI_Request req;
    if (leaders != MPI_COMM_NULL) {     /* root is rank 0 of the leaders */
        MPI_Ibcast(&n, 1, MPI_LONG_LONG, 0, leaders, &req);
        wait_politely(&req);
        if (n > 0 && rank != root && (state = malloc((size_t) n)) == NULL)
            n = -1;
        long long worst = n;
        MPI_Allreduce(&n, &worst, 1, MPI_LONG_LONG, MPI_MIN, leaders);
        if (worst > 0)
            for (long long at = 0; at < n; at += BCAST_CHUNK)
                MPI_Bcast((char *) state + at, (int) (n - at < BCAST_CHUNK ? n - at : BCAST_CHUNK),
                          MPI_BYTE, 0, leaders);
        n = worst;
        MPI_Comm_free(&leaders);
    }
    MPI_Ibcast(&n, 1, MPI_LONG_LONG, 0, sr->node, &req);
    wait_politely(&req);
    void *base = NULL;
    int ok = n > 0, all = 0;
    if (ok) {
        MPI_Comm_set_errhandler(sr->node, MPI_ERRORS_RETURN);
        ok = MPI_Win_allocate_shared(node_rank == 0 ? (MPI_Aint) n : 0, 1, MPI_INFO_NULL, sr->node,
                                     &base, &sr->win) == MPI_SUCCESS;
        if (!ok)
            sr->win = MPI_WIN_NULL;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, sr->node);
    }
    if (all) {
        if (node_rank == 0)
            memcpy(base, state, (size_t) n);
        MPI_Barrier(sr->node);
        MPI_Aint size;
        int unit;
        MPI_Win_shared_query(sr->win, 0, &size, &unit, &base);
        sr->state = base;
        sr->len = (size_t) n;
    }
    free(state);
}

static void share_done(shared_replay *sr)
{
    if (sr->win != MPI_WIN_NULL)
        MPI_Win_free(&sr->win);     /* collective: every Open of the node has imported */
    if (sr->node != MPI_COMM_NULL)
        MPI_Comm_free(&sr->node);
}

#ifdef ROMIO_UFS
/* Turn the handle into a ufs: handle for a plain file (before any Open). */
static void pass_through(ADIO_File fd, int rank, int root)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0, stats = 0;

    if (fd->info != MPI_INFO_NULL) {
        ADIOI_Info_get(fd->info, "hcomp_stats", MPI_MAX_INFO_VAL, value, &flag);
        stats = flag && strcmp(value, "1") == 0;
        for (size_t i = 0; i < hcomp_options_count(); i++) {
            ADIOI_Info_get(fd->info, hcomp_options_key(i), MPI_MAX_INFO_VAL, value, &flag);
            if (flag && hcomp_options_is_hint(hcomp_options_key(i)))  /* access_style stays */
                ADIOI_Info_delete(fd->info, hcomp_options_key(i));
        }
        ADIOI_Info_set(fd->info, "romio_filesystem_type", ADIO_UFS_operations.fsname);
        ADIOI_Info_set(fd->info, ADIOI_HCOMP_KIND_KEY, "plain");
    }
    if (fd->fs_ptr != NULL) {
        ADIOI_Free(fd->fs_ptr);
        fd->fs_ptr = NULL;
    }
    fd->fns = &ADIO_UFS_operations;
    fd->file_system = ADIO_UFS;
    /* the hcomp_stats report (printed at close for an hcomp file) says what happened */
    if (stats && rank == root)
        fprintf(stderr, "hcomp stats for %s (plain file): not an hcomp file, passed through "
                "unchanged as ufs: would; nothing compressed\n", fd->filename);
}
#endif

/* ROMIO's create step opens the file on one process and broadcasts its error code; that
 * code (its message in that process's error ring) means nothing elsewhere: MPICH renders
 * it as "Invalid error code" or as another error's text. When the create step failed (the
 * creator ran one Open, the others none: every process sees it so), the creator
 * broadcasts the class and the message, and each other process makes its own code. */
static void share_create_error(ADIO_File fd, int rank, int opens, int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_OPENCOLL";
    int root = fd->hints->ranklist[0];
    if (!(rank == root ? opens == 1 : opens == 0))
        return;
    char msg[MPI_MAX_ERROR_STRING + 1];
    int cls_len[2] = {MPI_ERR_IO, 0};
    if (rank == root) {
        int len = 0;
        MPI_Error_class(*error_code, &cls_len[0]);
        MPI_Error_string(*error_code, msg, &len);
        msg[len < 0 ? 0 : len > MPI_MAX_ERROR_STRING ? MPI_MAX_ERROR_STRING : len] = '\0';
        /* the driver's own message (after its "hcomp: "), not the stack around it */
        const char *own = NULL;
        for (const char *p = strstr(msg, "hcomp: "); p != NULL; p = strstr(p + 1, "hcomp: "))
            own = p + 7;
        if (own != NULL)
            memmove(msg, own, strlen(own) + 1);
        cls_len[1] = (int) strlen(msg) + 1;
    }
    MPI_Bcast(cls_len, 2, MPI_INT, root, fd->comm);
    MPI_Bcast(msg, cls_len[1], MPI_CHAR, root, fd->comm);
    if (rank != root)
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           cls_len[0], "**hcomp", "**hcomp %s", msg);
}

void ADIOI_HCOMP_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
#ifdef ROMIO_UFS
    int kind = -1, share = 0;
    int root = fd->hints->ranklist[0];
    if (rank == root) {
        hcomp_error err;
        if (hcomp_file_kind(fd->filename, &kind, &err) != HCOMP_OK)
            kind = -1;          /* cannot tell: hcomp's open reports the cause */
        /* an empty file opened to be written (emptied by a library, as PnetCDF's create
         * does, or made by a script) is written as an hcomp file: nothing in it is lost.
         * Not under EXCL (the open fails on the existing file), nor when a hint is bad
         * (the open fails on it): the file is then left as it is; so it is when the
         * configuration or a tier fails the Opens, which write the header after those. */
        int adopted = 0;
        if (kind == HCOMP_FILE_KIND_PLAIN && (access_mode & (ADIO_WRONLY | ADIO_RDWR)) &&
            !(access_mode & ADIO_EXCL) && !(st != NULL && st->has_hint_error) &&
            hcomp_file_adoptable_empty(fd->filename, &adopted, &err) == HCOMP_OK && adopted)
            kind = HCOMP_FILE_KIND_HCOMP;
        /* an adopted file has nothing to replay (its header is written by the first Open) */
        share = kind == HCOMP_FILE_KIND_HCOMP && !adopted && replay_shared(fd);
    }
    int decided[2] = {kind, share};
    MPI_Bcast(decided, 2, MPI_INT, root, fd->comm);
    kind = decided[0];
    share = decided[1];
    if (kind == HCOMP_FILE_KIND_PLAIN && !(st != NULL && st->has_hint_error)) {
        pass_through(fd, rank, root);
        (*(fd->fns->ADIOI_xxx_OpenColl)) (fd, rank, access_mode, error_code);
        return;
    }
#endif
    if (fd->info != MPI_INFO_NULL)
        ADIOI_Info_set(fd->info, ADIOI_HCOMP_KIND_KEY, "hcomp");
    /* the create step's process (and, sharing a replay, every process) keeps a note in
     * its state before any Open: allocated here if SetInfo left none (an Open or Close
     * frees it) */
    int create_step = (access_mode & ADIO_CREATE) && rank == fd->hints->ranklist[0];
    shared_replay sr = {MPI_COMM_NULL, MPI_WIN_NULL, NULL, 0};
#ifdef ROMIO_UFS
    if (share && !(st != NULL && st->has_hint_error))
        share_replay(fd, rank, root, &sr);
#endif
    /* processes on several nodes: a file whose one log every writer appends to is not
     * opened to be written (HCOMP_O_NODES) */
    int several = 0, nprocs = 1;
    MPI_Comm_size(fd->comm, &nprocs);
    if (nprocs > 1 && (access_mode & (ADIO_WRONLY | ADIO_RDWR))) {
        MPI_Comm node;
        int here = nprocs;
        MPI_Comm_split_type(fd->comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &here);
        MPI_Comm_free(&node);
        several = here < nprocs;
    }
    if (st == NULL && (sr.state != NULL || create_step || several)) {
        st = ADIOI_Calloc(1, sizeof(*st));
        st->coll_dtype = -1;
        fd->fs_ptr = st;
    }
    if (sr.state != NULL) {
        st->replay_state = sr.state;
        st->replay_len = sr.len;
    }
    if (st != NULL) {
        st->create_step = create_step;
        st->several_nodes = several;
    }
    unsigned long opens = ADIOI_HCOMP_open_calls;
    ADIOI_GEN_OpenColl(fd, rank, access_mode, error_code);
    if ((access_mode & ADIO_CREATE) && *error_code != MPI_SUCCESS)
        share_create_error(fd, rank, (int) (ADIOI_HCOMP_open_calls - opens), error_code);
    /* Open may have replaced the state struct (a failed Open frees it): whichever is there
     * now must not point at the window freed here, nor take a later Open for a create */
    if (fd->fs_ptr != NULL) {
        ((ADIOI_HCOMP_State *) fd->fs_ptr)->replay_state = NULL;
        ((ADIOI_HCOMP_State *) fd->fs_ptr)->create_step = 0;
    }
    share_done(&sr);
}
