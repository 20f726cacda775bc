/* The writer logs of a version-3 file (docs/FORMAT.md, "Writer logs").
 *
 * Appends of several clients to one file are not atomic on every file system (GlusterFS,
 * NFS): records of writers on two nodes tore each other. So every writing opener appends
 * to a log of its own, `<gen>-<writer>.log` in the hidden segment directory beside the
 * mapping file, and readers apply the records of all logs in one order (file/file_log.c).
 * A log appears whole: it is written under a temporary name with its header, then renamed,
 * so a reader never finds a log without one. */
#include "file_internal.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int hcomp_wlog_dir_init(hcomp_file *f, hcomp_error *err)
{
    char dir[PATH_MAX];
    const char *base;
    hcomp_split_path(f->path, dir, sizeof(dir), &base);
    /* the segment directory of the tier "@filedir" (tiers/tier_space.c names it alike) */
    if (snprintf(f->logdir, sizeof(f->logdir), "%s/.%.64s.%.16s.hcd", dir, base, f->id_hex) >=
        (int) sizeof(f->logdir))
        return hcomp_fail(err, HCOMP_E_NAME, "%s: the path of its log directory is too long",
                          f->path);
    return HCOMP_OK;
}

/* "<16 hex gen>-<16 hex writer>.log": the generation and writer, or -1 */
static int parse_name(const char *n, uint64_t *gen, uint64_t *writer)
{
    if (strlen(n) != 16 + 1 + 16 + 4 || n[16] != '-' || strcmp(n + 33, ".log") != 0)
        return -1;
    char a[17], b[17], *end;
    memcpy(a, n, 16);
    memcpy(b, n + 17, 16);
    a[16] = b[16] = '\0';
    *gen = strtoull(a, &end, 16);
    if (*end)
        return -1;
    *writer = strtoull(b, &end, 16);
    return *end ? -1 : 0;
}

static int known(const hcomp_file *f, const char *name)
{
    for (size_t i = 0; i < f->nwlogs; i++)
        if (strcmp(f->wlogs[i].name, name) == 0)
            return 1;
    return 0;
}

/* A new entry at the end of f->wlogs for the log name (fd is closed when there is no
 * room); NULL with err set. Not counted in f->nwlogs yet. */
static hcomp_wlog *new_wlog(hcomp_file *f, const char *name, int fd, hcomp_error *err)
{
    if (hcomp_grow_array(&f->wlogs, &f->capwlogs, f->nwlogs + 1, sizeof(*f->wlogs)) == 0) {
        hcomp_wlog *w = &f->wlogs[f->nwlogs];
        memset(w, 0, sizeof(*w));
        if ((w->name = strdup(name)) != NULL)
            return w;
    }
    close(fd);
    hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    return NULL;
}

/* Open a log found in the directory and check its header; 1 if added, 0 if not one of
 * this file's (or not readable yet), -1 on error */
static int add_log(hcomp_file *f, const char *name, uint64_t writer, hcomp_error *err)
{
    char path[PATH_MAX + NAME_MAX + 2];
    snprintf(path, sizeof(path), "%s/%s", f->logdir, name);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;       /* folded away meanwhile */
        hcomp_fail_errno(err, errno, "%s: opening writer log %s", f->path, path);
        return -1;
    }
    unsigned char h[HCOMP_WLOG_HEADER_SIZE];
    long long got = hcomp_pread_full(fd, h, sizeof(h), 0);
    hcomp_wlog_header wh;
    hcomp_error herr;
    int bad = got < 0 || hcomp_wlog_header_decode(h, (size_t) (got < 0 ? 0 : got), &wh, path,
                                                  &herr) != HCOMP_OK ||
              memcmp(wh.file_id, f->hdr.file_id, 16) != 0 || wh.log_gen != f->hdr.log_gen ||
              wh.writer != writer;
    hcomp_wlog *w = new_wlog(f, name, fd, err);
    if (w == NULL)
        return -1;
    w->writer = writer;
    if (bad) {
        /* a log named as this file's whose header is not: what it recorded is lost (it
         * is never written in place, so this is damage, not a log being made) */
        close(fd);
        w->fd = -1;
        w->consumed = UINT64_MAX;
        if (f->lost_records++ == 0) {
            f->lost_at = 0;
            snprintf(f->lost_log, sizeof(f->lost_log), "%s", name);
        }
    } else {
        w->fd = fd;
        w->consumed = HCOMP_WLOG_HEADER_SIZE;
    }
    f->nwlogs++;
    return 1;
}

int hcomp_wlog_scan(hcomp_file *f, int force, hcomp_error *err)
{
    if (f->hdr.version < HCOMP_MAP_VERSION_WLOGS)
        return HCOMP_OK;
    struct stat st;
    if (stat(f->logdir, &st) != 0)
        return errno == ENOENT || errno == ENOTDIR ? HCOMP_OK
            : hcomp_fail_errno(err, errno, "%s: its log directory %s", f->path, f->logdir);
    if (!force && st.st_ino == f->logdir_ino &&
        st.st_mtim.tv_sec == f->logdir_mtime.tv_sec &&
        st.st_mtim.tv_nsec == f->logdir_mtime.tv_nsec &&
        st.st_ctim.tv_sec == f->logdir_ctime.tv_sec &&
        st.st_ctim.tv_nsec == f->logdir_ctime.tv_nsec)
        return HCOMP_OK;
    int dfd = open(f->logdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? HCOMP_OK
            : hcomp_fail_errno(err, errno, "%s: opening its log directory %s", f->path, f->logdir);
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return hcomp_fail_errno(err, errno, "%s: reading its log directory %s", f->path, f->logdir);
    }
    int rc = HCOMP_OK;
    struct dirent *e;
    while (rc == HCOMP_OK && (e = readdir(d)) != NULL) {
        uint64_t gen, writer;
        if (parse_name(e->d_name, &gen, &writer) != 0 || gen != f->hdr.log_gen ||
            known(f, e->d_name))
            continue;
        if (add_log(f, e->d_name, writer, err) < 0)
            rc = err ? err->code : HCOMP_E_IO;
    }
    closedir(d);
    if (rc == HCOMP_OK) {
        f->logdir_ino = st.st_ino;
        f->logdir_mtime = st.st_mtim;
        f->logdir_ctime = st.st_ctim;
    }
    return rc;
}

/* This opener's log: created under a temporary name with its header, synced, renamed
 * into place and the directory synced, so that readers (and a crash) see it whole. */
static int create_own(hcomp_file *f, hcomp_error *err)
{
    mode_t dmode = f->perm | ((f->perm & 0444) >> 2) | 0700;
    struct stat st;
    /* several nodes' writers make it at once: the loser may see another error than EEXIST
     * on a distributed file system, so a directory there now will do */
    if (mkdir(f->logdir, dmode) != 0 && errno != EEXIST &&
        !(lstat(f->logdir, &st) == 0 && S_ISDIR(st.st_mode)))
        return hcomp_fail_errno(err, errno, "%s: creating its log directory %s", f->path,
                                f->logdir);
    if (lstat(f->logdir, &st) != 0)
        return hcomp_fail_errno(err, errno, "%s: its log directory %s", f->path, f->logdir);
    if (!S_ISDIR(st.st_mode))
        return hcomp_fail(err, HCOMP_E_ACCESS, "%s: its log directory %s is not a directory (a "
                          "symbolic link?); refusing to use it", f->path, f->logdir);
    if (f->writer_id == 0 && hcomp_random_bytes(&f->writer_id, sizeof(f->writer_id)) != 0)
        return hcomp_fail_errno(err, errno, "%s: no random writer id", f->path);
    f->writer_id |= 1;      /* never 0: the mapping file's own records have writer 0 */
    char name[64], tmp[PATH_MAX], path[PATH_MAX];
    snprintf(name, sizeof(name), "%016" PRIx64 "-%016" PRIx64 ".log", f->hdr.log_gen,
             f->writer_id);
    if (snprintf(path, sizeof(path), "%s/%s", f->logdir, name) >= (int) sizeof(path) ||
        snprintf(tmp, sizeof(tmp), "%s/.%016" PRIx64 ".new", f->logdir, f->writer_id) >=
            (int) sizeof(tmp))
        return hcomp_fail(err, HCOMP_E_NAME, "%s: the path of its writer log is too long",
                          f->path);
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f->perm);
    if (fd < 0)
        return hcomp_fail_errno(err, errno, "%s: creating writer log %s", f->path, tmp);
    hcomp_wlog_header wh;
    memcpy(wh.file_id, f->hdr.file_id, 16);
    wh.log_gen = f->hdr.log_gen;
    wh.writer = f->writer_id;
    unsigned char h[HCOMP_WLOG_HEADER_SIZE];
    hcomp_wlog_header_encode(&wh, h);
    if (hcomp_write_full(fd, h, sizeof(h)) != 0 || fsync(fd) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return hcomp_fail_errno(err, e, "%s: writing writer log %s", f->path, path);
    }
    int dfd = open(f->logdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {         /* the log's name survives a crash once its directory is synced */
        (void) fsync(dfd);
        close(dfd);
    }
    /* appends go at the end; reads (this opener's refresh) use pread */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_APPEND);
    hcomp_wlog *w = new_wlog(f, name, fd, err);
    if (w == NULL)
        return err ? err->code : HCOMP_E_NOMEM;
    w->fd = fd;
    w->writer = f->writer_id;
    w->consumed = HCOMP_WLOG_HEADER_SIZE;
    f->own_wlog = (int) f->nwlogs++;
    f->wlog_durable = f->wlog_marked_end = HCOMP_WLOG_HEADER_SIZE;
    return HCOMP_OK;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* One order per append, a Lamport clock read off the real-time one: later than this
 * writer's last and than every record it has read, so that what it saw before it wrote
 * (after a sync, an open, ROMIO's lock in atomic mode) is older; writers that saw
 * nothing of each other are ordered by the clock. */
static uint64_t next_stamp(hcomp_file *f)
{
    uint64_t stamp = now_ns();
    if (stamp <= f->last_stamp)
        stamp = f->last_stamp + 1;
    if (stamp <= f->stamp_seen)
        stamp = f->stamp_seen + 1;
    f->last_stamp = stamp;
    return stamp;
}

int hcomp_wlog_confirm(hcomp_file *f, hcomp_error *err)
{
    if (f->own_wlog < 0)
        return HCOMP_OK;
    hcomp_wlog *w = &f->wlogs[f->own_wlog];
    struct stat st;
    if (fstat(w->fd, &st) != 0)
        return hcomp_fail_errno(err, errno, "%s: stat of writer log %s/%s", f->path, f->logdir,
                                w->name);
    if ((uint64_t) st.st_size == f->wlog_marked_end)
        return HCOMP_OK;        /* nothing appended since the last one */
    unsigned char order[HCOMP_MAP_FRAME_SIZE + 16];
    hcomp_bytes ob = {order, 0, sizeof(order)};
    (void) hcomp_map_encode_order(&ob, next_stamp(f), HCOMP_ORDER_DURABLE | (uint64_t) st.st_size);
    ssize_t n;
    do
        n = write(w->fd, order, ob.len);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t) ob.len)  /* the sync itself succeeded: only the hint is missing */
        return HCOMP_OK;
    f->wlog_durable = (uint64_t) st.st_size;
    f->wlog_marked_end = (uint64_t) st.st_size + ob.len;
    return HCOMP_OK;
}

int hcomp_wlog_append(hcomp_file *f, const hcomp_bytes *records, hcomp_error *err)
{
    int rc;
    if (f->own_wlog < 0 && (rc = create_own(f, err)) != HCOMP_OK)
        return rc;
    unsigned char order[HCOMP_MAP_FRAME_SIZE + 16];
    hcomp_bytes ob = {order, 0, sizeof(order)};
    /* fits: never grows */
    (void) hcomp_map_encode_order(&ob, next_stamp(f), HCOMP_ORDER_DURABLE | f->wlog_durable);
    struct iovec iov[2] = {{order, ob.len}, {records->p, records->len}};
    size_t want = ob.len + records->len;
    ssize_t n;
    do
        n = writev(f->wlogs[f->own_wlog].fd, iov, 2);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return hcomp_fail_errno(err, errno, "%s: appending to writer log %s/%s", f->path,
                                f->logdir, f->wlogs[f->own_wlog].name);
    if ((size_t) n != want)
        return hcomp_fail(err, HCOMP_E_NOSPC, "%s: the file system of writer log %s/%s took only "
                          "%zd of %zu bytes (full?); the write is not recorded", f->path, f->logdir,
                          f->wlogs[f->own_wlog].name, n, want);
    return HCOMP_OK;
}

int hcomp_wlog_sync(hcomp_file *f, hcomp_error *err)
{
    if (f->own_wlog < 0)
        return HCOMP_OK;
    if (fsync(f->wlogs[f->own_wlog].fd) != 0)
        return hcomp_fail_errno(err, errno, "%s: sync of writer log %s/%s", f->path, f->logdir,
                                f->wlogs[f->own_wlog].name);
    return HCOMP_OK;
}

void hcomp_wlog_forget(hcomp_file *f)
{
    for (size_t i = 0; i < f->nwlogs; i++) {
        if (f->wlogs[i].fd >= 0)
            close(f->wlogs[i].fd);
        free(f->wlogs[i].name);
        free(f->wlogs[i].buf);
    }
    free(f->wlogs);
    f->wlogs = NULL;
    f->nwlogs = f->capwlogs = 0;
    f->own_wlog = -1;
    f->logdir_ino = 0;
    memset(&f->logdir_mtime, 0, sizeof(f->logdir_mtime));
    memset(&f->logdir_ctime, 0, sizeof(f->logdir_ctime));
}

int hcomp_wlog_remove_other_gens(const char *logdir, uint64_t gen)
{
    int dfd = open(logdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return 0;
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return 0;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t g, w;
        if (parse_name(e->d_name, &g, &w) == 0 && g != gen && unlinkat(dfd, e->d_name, 0) == 0)
            n++;
    }
    closedir(d);
    return n;
}

uint64_t hcomp_wlog_bytes(const hcomp_file *f)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < f->nwlogs; i++) {
        struct stat st;
        if (f->wlogs[i].fd >= 0 && fstat(f->wlogs[i].fd, &st) == 0)
            sum += (uint64_t) st.st_size;
    }
    return sum;
}

int hcomp_order_advance(hcomp_file *f, hcomp_error *err)
{
    if (f->hdr.version < HCOMP_MAP_VERSION_WLOGS)
        return HCOMP_OK;
    int rc = hcomp_wlog_scan(f, 1, err);
    return rc == HCOMP_OK ? hcomp_log_refresh(f, err) : rc;
}
