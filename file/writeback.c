/* Write-back after close (hcomp_drain=writeback): a closed handle whose pieces are still
 * on node-local tiers joins this process's queue, and one thread moves them to a shared
 * tier (file/drain.c), lets the last opener reclaim, and ends the close, while the
 * application goes on. The handle keeps its descriptors until then: the openers' lock
 * (no reclaim or compaction meanwhile), the flock a delete waits for, and the write-back
 * lock that tells readers on other nodes to wait for the move (file/open_lock.c).
 *
 * MPI_Finalize waits for the queue (the ROMIO driver's callback on MPI_COMM_SELF), and so
 * does the process's exit; hcomp_writeback_wait is the C API's way. A drain that fails
 * leaves its pieces where they are, readable on that node, and says so on stderr with the
 * command that finishes the move. */
#include "file_internal.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_mutex_t wb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wb_done = PTHREAD_COND_INITIALIZER;  /* a handle finished */
static pthread_cond_t wb_work = PTHREAD_COND_INITIALIZER;  /* a handle queued */
static hcomp_file *wb_head, *wb_tail;   /* queued, oldest first */
static hcomp_file *wb_busy;             /* being drained (freed by the thread: others look
                                           only at the copies below, under wb_lock) */
static dev_t wb_busy_dev;
static ino_t wb_busy_ino;
static atomic_int wb_busy_cancel;       /* a delete of its file stops its moves */
static int wb_thread_up;
static pid_t wb_pid;                    /* a forked child owns none of the queue */
static unsigned wb_failures;            /* drains that failed since the last wait */
static char wb_first_failure[HCOMP_ERROR_MSG_MAX];
static int wb_atexit_set;

/* Whether the mapping file at the path is as the close left it. The last opener's
 * reclaim may rewrite it whole; after the close, the program (or another one) may have
 * written the path itself (a plain file in its place, a truncate, damage): then nothing
 * of hcomp's may replace it. In format 3 nothing else of hcomp's changes the mapping file
 * while this handle holds the openers' lock (writers append to logs of their own). */
int hcomp_writeback_map_unchanged(const hcomp_file *f)
{
    if (!f->wb_queued)
        return 1;
    struct stat now;
    unsigned char hdr[HCOMP_MAP_HEADER_SIZE];
    int fd = open(f->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int same = fstat(fd, &now) == 0 && now.st_dev == f->wb_map_st.st_dev &&
               now.st_ino == f->wb_map_st.st_ino &&
               pread(fd, hdr, sizeof(hdr), 0) == (ssize_t) sizeof(hdr) &&
               memcmp(hdr, f->wb_map_hdr, sizeof(hdr)) == 0;
    close(fd);
    if (same && f->hdr.version >= HCOMP_MAP_VERSION_WLOGS)
        same = now.st_size == f->wb_map_st.st_size &&
               now.st_mtim.tv_sec == f->wb_map_st.st_mtim.tv_sec &&
               now.st_mtim.tv_nsec == f->wb_map_st.st_mtim.tv_nsec;
    return same;
}

int hcomp_writeback_cancelled(const hcomp_file *f)
{
    /* a queued handle is moved by the write-back thread alone, one at a time */
    return atomic_load(&f->drain_cancel) || (f->wb_queued && atomic_load(&wb_busy_cancel));
}

static void finish_one(hcomp_file *f)
{
    hcomp_error e;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s", f->path);
    int rc = HCOMP_OK;
    struct stat now;
    if (!hcomp_writeback_cancelled(f) && fstat(f->map_fd, &now) == 0 &&
        (now.st_nlink == 0 || (now.st_size == 0 && f->wb_map_st.st_size > 0))) {
        /* removed, or emptied by the program (`: > file`, PnetCDF's ncmpi_create) since
         * the close: its data was thrown away, and so are this handle's pieces */
        hcomp_file_remove_own_segments(f, 0);
        atomic_store(&f->drain_cancel, 1);
    }
    if (!hcomp_writeback_cancelled(f)) {
        rc = hcomp_drain_node_local(f, &e);
        /* a file changed behind hcomp's back is left to `hcomp fsck` and `compact` */
        if (rc == HCOMP_OK && !hcomp_writeback_cancelled(f) && hcomp_writeback_map_unchanged(f))
            hcomp_reclaim_at_close(f);
    }
    if (rc != HCOMP_OK) {
        fprintf(stderr, "hcomp: %s: the write-back after close failed: %s; the pieces stay on "
                "node %s's node-local tier, readable there: `hcomp drain %s` on that node "
                "moves them\n", path, e.msg, f->node, path);
        pthread_mutex_lock(&wb_lock);
        if (wb_failures++ == 0)
            snprintf(wb_first_failure, sizeof(wb_first_failure), "%s", e.msg);
        pthread_mutex_unlock(&wb_lock);
    }
    hcomp_error ce;
    if (hcomp_file_close_finish(f, HCOMP_OK, f->stats_printed, &ce) != HCOMP_OK)
        fprintf(stderr, "hcomp: %s: closing after the write-back: %s\n", path, ce.msg);
}

static void *wb_main(void *arg)
{
    (void) arg;
    pthread_mutex_lock(&wb_lock);
    for (;;) {
        while (wb_head == NULL)
            pthread_cond_wait(&wb_work, &wb_lock);
        hcomp_file *f = wb_head;
        wb_head = f->wb_next;
        if (wb_head == NULL)
            wb_tail = NULL;
        wb_busy = f;
        wb_busy_dev = f->wb_dev;
        wb_busy_ino = f->wb_ino;
        atomic_store(&wb_busy_cancel, 0);
        pthread_mutex_unlock(&wb_lock);
        finish_one(f);          /* frees f */
        pthread_mutex_lock(&wb_lock);
        wb_busy = NULL;
        pthread_cond_broadcast(&wb_done);
    }
    return NULL;
}

/* A child of fork owns none of its parent's queue, and may have been forked while the
 * thread held the lock: it starts afresh (its exit then waits for nothing). */
static void wb_atfork_child(void)
{
    pthread_mutex_init(&wb_lock, NULL);
    pthread_cond_init(&wb_done, NULL);
    pthread_cond_init(&wb_work, NULL);
    wb_head = wb_tail = wb_busy = NULL;
    wb_thread_up = 0;
    wb_failures = 0;
    wb_pid = getpid();
}

static void wait_at_exit(void)
{
    hcomp_error e;
    (void) hcomp_writeback_wait(&e);    /* a failure was said on stderr as it happened */
}

void hcomp_writeback_adopt(hcomp_file *f)
{
    f->wb_next = NULL;
    struct stat sb;     /* the mapping file a delete names (the log's rewrite keeps it) */
    if (fstat(f->map_fd, &sb) == 0) {
        f->wb_dev = sb.st_dev;
        f->wb_ino = sb.st_ino;
    }
    f->wb_queued = 1;
    memset(&f->wb_map_st, 0, sizeof(f->wb_map_st));
    if (stat(f->path, &f->wb_map_st) != 0 ||
        pread(f->map_fd, f->wb_map_hdr, sizeof(f->wb_map_hdr), 0) != (ssize_t) sizeof(f->wb_map_hdr))
        memset(f->wb_map_hdr, 0, sizeof(f->wb_map_hdr));   /* then no reclaim after the move */
    pthread_mutex_lock(&wb_lock);
    if (wb_pid == 0)                    /* first use */
        wb_pid = getpid();
    if (!wb_thread_up) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        wb_thread_up = pthread_create(&t, &a, wb_main, NULL) == 0;
        pthread_attr_destroy(&a);
        if (wb_thread_up && !wb_atexit_set) {
            wb_atexit_set = atexit(wait_at_exit) == 0;
            (void) pthread_atfork(NULL, NULL, wb_atfork_child);
        }
    }
    if (!wb_thread_up) {
        /* no thread: the close drains now, as hcomp_drain=close would */
        pthread_mutex_unlock(&wb_lock);
        finish_one(f);
        return;
    }
    if (wb_tail)
        wb_tail->wb_next = f;
    else
        wb_head = f;
    wb_tail = f;
    pthread_cond_signal(&wb_work);
    pthread_mutex_unlock(&wb_lock);
}

int hcomp_writeback_pending(void)
{
    pthread_mutex_lock(&wb_lock);
    int n = 0;
    if (wb_pid == getpid()) {
        for (hcomp_file *f = wb_head; f; f = f->wb_next)
            n++;
        n += wb_busy != NULL;
    }
    pthread_mutex_unlock(&wb_lock);
    return n;
}

int hcomp_writeback_wait(hcomp_error *err)
{
    hcomp_ok(err);
    pthread_mutex_lock(&wb_lock);
    if (wb_pid != getpid()) {
        pthread_mutex_unlock(&wb_lock);
        return HCOMP_OK;
    }
    while (wb_head != NULL || wb_busy != NULL)
        pthread_cond_wait(&wb_done, &wb_lock);
    unsigned failed = wb_failures;
    wb_failures = 0;
    int rc = HCOMP_OK;
    if (failed > 0)
        rc = hcomp_fail(err, HCOMP_E_IO, "the write-back after close of %u file%s failed, the "
                        "first: %s; their pieces stay on node %s's node-local tiers (`hcomp "
                        "drain FILE` on that node moves them)", failed, failed == 1 ? "" : "s",
                        wb_first_failure, hcomp_node_name());
    pthread_mutex_unlock(&wb_lock);
    return rc;
}

static int same_file(const hcomp_file *f, const struct stat *sb)
{
    return f->wb_dev == sb->st_dev && f->wb_ino == sb->st_ino;
}

static void wait_for_file(const char *path, int cancel)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return;
    pthread_mutex_lock(&wb_lock);
    if (wb_pid != getpid()) {
        pthread_mutex_unlock(&wb_lock);
        return;
    }
    for (;;) {
        int left = 0;
        for (hcomp_file *f = wb_head; f; f = f->wb_next)
            if (same_file(f, &sb)) {
                if (cancel)
                    atomic_store(&f->drain_cancel, 1);
                left = 1;
            }
        if (wb_busy && wb_busy_dev == sb.st_dev && wb_busy_ino == sb.st_ino) {
            if (cancel)
                atomic_store(&wb_busy_cancel, 1);
            left = 1;
        }
        if (!left)
            break;
        pthread_cond_wait(&wb_done, &wb_lock);
    }
    pthread_mutex_unlock(&wb_lock);
}

void hcomp_writeback_cancel(const char *path)
{
    wait_for_file(path, 1);
}

void hcomp_writeback_finish(const char *path)
{
    wait_for_file(path, 0);
}
