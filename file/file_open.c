/* Opening, creating, closing, syncing and resizing logical files. */
#include "file_internal.h"
#include "engine/engine.h"
#include "common/util.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void id_to_hex(const uint8_t id[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
}

int hcomp_map_new_header(unsigned char out[HCOMP_MAP_HEADER_SIZE], unsigned version,
                         hcomp_error *err, const char *path)
{
    hcomp_map_header h;
    struct timespec ts;
    memset(&h, 0, sizeof(h));
    h.version = version >= HCOMP_MAP_VERSION_MIN && version <= HCOMP_MAP_VERSION ? version
                                                                                  : HCOMP_MAP_VERSION;
    if (hcomp_random_bytes(h.file_id, sizeof(h.file_id)) != 0)
        return hcomp_fail_errno(err, errno, "%s: no random file id", path);
    clock_gettime(CLOCK_REALTIME, &ts);
    h.created_ns = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
    hcomp_map_header_encode(&h, out);
    return HCOMP_OK;
}

int hcomp_map_header_if_empty(int fd, const char *path, unsigned version, int *wrote,
                              hcomp_error *err)
{
    *wrote = 0;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return hcomp_fail_errno(err, errno, "%s: cannot look at the mapping file", path);
    if (st.st_size != 0)
        return HCOMP_OK;
    unsigned char hdr[HCOMP_MAP_HEADER_SIZE];
    int rc = hcomp_map_new_header(hdr, version, err, path);
    if (rc != HCOMP_OK)
        return rc;
    /* offset 0, also through an O_APPEND descriptor: the file is empty */
    if (pwrite(fd, hdr, sizeof(hdr), 0) != (ssize_t) sizeof(hdr)) {
        rc = hcomp_fail_errno(err, errno ? errno : EIO, "%s: writing the mapping file header",
                              path);
        if (ftruncate(fd, 0) != 0) {
            /* a partial header stays: the next open fails on it and says so */
        }
        return rc;
    }
    *wrote = 1;
    return HCOMP_OK;
}

/* Create the mapping file with its header in one step: write a temporary file
 * and link(2) it into place, so no other opener ever sees a file without a
 * header, and exclusive creation is decided by the link. Returns HCOMP_OK,
 * HCOMP_E_EXIST, or another error. */
static int create_mapping_file(const char *path, mode_t perm, unsigned version,
                               hcomp_error *err)
{
    unsigned char hdr[HCOMP_MAP_HEADER_SIZE];
    int rc = hcomp_map_new_header(hdr, version, err, path);
    if (rc != HCOMP_OK)
        return rc;
    char dir[PATH_MAX], base[PATH_MAX], tmp[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    snprintf(base, sizeof(base), "%s", path);
    uint32_t r;
    hcomp_random_bytes(&r, sizeof(r));
    if (snprintf(tmp, sizeof(tmp), "%s/.%.100s.hcomp-new-%08x", dirname(dir), basename(base), r)
        >= (int) sizeof(tmp))
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perm);
    if (fd < 0)
        return hcomp_fail_errno(err, errno, "%s: cannot create the mapping file", path);
    if (hcomp_write_full(fd, hdr, sizeof(hdr)) != 0) {
        rc = hcomp_fail_errno(err, errno, "%s: writing the mapping file header", path);
        close(fd);
        unlink(tmp);
        return rc;
    }
    close(fd);
    if (link(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        if (e == EEXIST)
            return HCOMP_E_EXIST;
        if (e != EPERM && e != ENOTSUP && e != EOPNOTSUPP)
            return hcomp_fail_errno(err, e, "%s: cannot create the mapping file", path);
        /* no hard links here: fall back to O_EXCL and write the header after, under the
         * flock load_header takes, unless an opener that found the new file empty has
         * written one meanwhile */
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, perm);
        if (fd < 0)
            return errno == EEXIST ? HCOMP_E_EXIST
                : hcomp_fail_errno(err, errno, "%s: cannot create the mapping file", path);
        while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
            ;
        int wrote;
        rc = hcomp_map_header_if_empty(fd, path, version, &wrote, err);
        close(fd);      /* lets go of the flock */
        return rc;
    }
    unlink(tmp);
    return HCOMP_OK;
}

/* Read and check the header of an open mapping file. An empty file opened for
 * writing becomes an empty hcomp file (nothing in it can be lost). */
static int load_header(hcomp_file *f, hcomp_error *err)
{
    unsigned char hdr[HCOMP_MAP_HEADER_SIZE];
    long long got = hcomp_pread_full(f->map_fd, hdr, sizeof(hdr), 0);
    if (got < 0)
        return hcomp_fail_errno(err, errno, "%s: reading the mapping file", f->path);
    if (got == 0 && f->writable) {
        /* an empty file opened to be written: one header, written by the first of the
         * openers that come at once (all hold the openers' lock shared; flock is apart
         * from it, as hcomp_file_adopt_empty and close use it) */
        while (flock(f->map_fd, LOCK_EX) != 0 && errno == EINTR)
            ;
        int wrote, rc = hcomp_map_header_if_empty(f->map_fd, f->path, f->opts.format, &wrote, err);
        if (rc == HCOMP_OK && (got = hcomp_pread_full(f->map_fd, hdr, sizeof(hdr), 0)) < 0)
            rc = hcomp_fail_errno(err, errno, "%s: reading the mapping file", f->path);
        flock(f->map_fd, LOCK_UN);
        if (rc != HCOMP_OK)
            return rc;
    }
    int rc = hcomp_map_header_decode(hdr, (size_t) got, &f->hdr, f->path, err);
    if (rc != HCOMP_OK)
        return rc;
    id_to_hex(f->hdr.file_id, f->id_hex);
    f->consumed = HCOMP_MAP_HEADER_SIZE;
    return HCOMP_OK;
}

static void file_free(hcomp_file *f)
{
    if (f->eng.pred)
        hcomp_engine_close(&f->eng, NULL);
    for (size_t j = 0; j < f->njobs_cap; j++) {
        free(f->jobs[j].out);
        free(f->jobs[j].tmp);
        free(f->jobs[j].table);
        free(f->jobs[j].alt_out);
        free(f->jobs[j].alt_table);
    }
    free(f->jobs);
    hcomp_wbuf_free(f);
    hcomp_file_writers_close(f);
    hcomp_log_free(f);
    hcomp_wlog_forget(f);
    if (f->map_fd >= 0)
        close(f->map_fd);
    free(f->scratch);
    free(f->rbuf);
    free(f->unfilter);
    free(f->scan_out);
    hcomp_read_cache_clear(f, 1);
    hcomp_bytes_free(&f->batch);
    pthread_cond_destroy(&f->drain_wake);
    pthread_mutex_destroy(&f->lock);
    free(f->path);
    free(f);
}

/* The mapping file was deleted (or replaced) while this opener had it open. */
static int mapping_file_gone(const hcomp_file *f)
{
    struct stat a, b;
    if (fstat(f->map_fd, &a) != 0)
        return 0;
    if (stat(f->path, &b) != 0)
        return errno == ENOENT;
    return a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

/* open_file's flag for hcomp_file_create: stop once the mapping file exists */
#define OPEN_CREATE_ONLY (1 << 20)

static int open_file(const char *path, int flags, mode_t perm, int sharers,
                     const hcomp_options *opts, const void *state, size_t state_len,
                     hcomp_file **out, hcomp_error *err);

int hcomp_file_open(const char *path, int flags, mode_t perm, int sharers,
                    const hcomp_options *opts, hcomp_file **out, hcomp_error *err)
{
    return open_file(path, flags & ~OPEN_CREATE_ONLY, perm, sharers, opts, NULL, 0, out, err);
}

int hcomp_file_create(const char *path, int flags, mode_t perm, const hcomp_options *opts,
                      hcomp_error *err)
{
    hcomp_file *f = NULL;
    flags &= HCOMP_O_EXCL;
    return open_file(path, flags | HCOMP_O_WRONLY | HCOMP_O_CREAT | OPEN_CREATE_ONLY, perm, 1,
                     opts, NULL, 0, &f, err);
}

int hcomp_file_open_with_state(const char *path, int flags, mode_t perm, int sharers,
                               const hcomp_options *opts, const void *state, size_t state_len,
                               hcomp_file **out, hcomp_error *err)
{
    return open_file(path, flags & ~OPEN_CREATE_ONLY, perm, sharers, opts, state, state_len, out,
                     err);
}

int hcomp_file_export_state(hcomp_file *f, void **state, size_t *len, hcomp_error *err)
{
    *state = NULL;
    *len = 0;
    pthread_mutex_lock(&f->lock);
    int rc = hcomp_log_refresh(f, err);
    hcomp_bytes b = {NULL, 0, 0};
    if (rc == HCOMP_OK && hcomp_log_state_export(f, &b) != 0) {
        hcomp_bytes_free(&b);
        rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    }
    pthread_mutex_unlock(&f->lock);
    if (rc == HCOMP_OK) {
        *state = b.p;
        *len = b.len;
    }
    return rc;
}

static int open_file(const char *path, int flags, mode_t perm, int sharers,
                     const hcomp_options *opts, const void *state, size_t state_len,
                     hcomp_file **out, hcomp_error *err)
{
    *out = NULL;
    hcomp_ok(err);
    if (path == NULL || path[0] == '\0')
        return hcomp_fail(err, HCOMP_E_INVAL, "empty file name");
    if (strlen(path) >= PATH_MAX)   /* before anything derives other names from it */
        return hcomp_fail(err, HCOMP_E_NAME, "%.200s...: file name too long (%zu bytes; at most "
                          "%d)", path, strlen(path), PATH_MAX - 1);
    int nmodes = !!(flags & HCOMP_O_RDONLY) + !!(flags & HCOMP_O_WRONLY) + !!(flags & HCOMP_O_RDWR);
    if (nmodes != 1)
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: open needs exactly one of read-only, "
                          "write-only, read-write", path);
    if ((flags & HCOMP_O_RDONLY) && (flags & (HCOMP_O_CREAT | HCOMP_O_EXCL)))
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: cannot create a file opened read-only", path);

    /* segment paths are recorded absolute, so the file reads from any directory */
    char abs[PATH_MAX];
    if (hcomp_abs_path(path, abs, sizeof(abs)) != 0)
        return hcomp_fail_errno(err, errno, "%s: cannot make the name absolute", path);
    path = abs;
    hcomp_file *f = calloc(1, sizeof(*f));
    if (f == NULL || (f->path = strdup(path)) == NULL) {
        free(f);
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
    }
    f->map_fd = -1;
    f->own_wlog = -1;
    snprintf(f->node, sizeof(f->node), "%s", hcomp_node_name());
    hcomp_read_cache_clear(f, 0);
    hcomp_engine_init(&f->eng, f->path, &f->cfg, f->tw, &f->stats);
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->drain_wake, NULL);
    f->perm = perm & 0777;
    f->sharers = sharers > 0 ? sharers : 1;
    f->writable = !(flags & HCOMP_O_RDONLY);
    /* the mapping file's name and its segment and log directory's name live in the file's
     * directory: a writer's first sync makes them durable (docs/FORMAT.md, "Durable
     * steps"), whoever created them, since the creator may never sync */
    f->dir_unsynced = f->writable;
    hcomp_extent_map_init(&f->map);
    if (opts)
        f->opts = *opts;
    else {
        hcomp_options *d = hcomp_options_new();
        if (d == NULL) {
            file_free(f);
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
        }
        f->opts = *d;
        hcomp_options_free(d);
    }
    int rc = hcomp_options_check(&f->opts, err);
    if (rc != HCOMP_OK) {
        char msg[HCOMP_ERROR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
        file_free(f);
        return hcomp_fail(err, rc, "%s: %s", path, msg);
    }
    hcomp_engine_settings set;
    hcomp_options_engine_settings(&f->opts, &set);
    hcomp_engine_set(&f->eng, &set);

    rc = hcomp_tier_config_load(f->opts.config, &f->cfg, err);
    if (rc != HCOMP_OK) {
        char msg[HCOMP_ERROR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
        hcomp_fail(err, rc, "%s: %s", path, msg);
        file_free(f);
        return rc;
    }
    if (f->writable) {
        for (int t = 0; t < f->cfg.ntiers; t++) {
            if ((rc = hcomp_tier_check(&f->cfg.tier[t], path, err)) != HCOMP_OK) {
                file_free(f);
                return rc;
            }
        }
    }
    /* a writer predicts; a reader only learns decompression costs, which are kept only
     * when they can be written back: to a seed the user named. A create alone needs no
     * predictions, but a seed the user named is loaded to be checked */
    int named_seed = hcomp_options_seed_path(&f->opts)[0] != '\0';
    if ((f->writable && (named_seed || !(flags & OPEN_CREATE_ONLY))) ||
        (named_seed && f->opts.feedback_interval > 0)) {
        if ((rc = hcomp_engine_open(&f->eng, err)) != HCOMP_OK) {
            file_free(f);
            return rc;
        }
    }

    if (flags & HCOMP_O_CREAT) {
        rc = create_mapping_file(path, f->perm, f->opts.format, err);
        if (rc == HCOMP_E_EXIST && (flags & HCOMP_O_EXCL)) {
            file_free(f);
            return hcomp_fail(err, HCOMP_E_EXIST, "%s: file exists (exclusive create)", path);
        }
        if (rc != HCOMP_OK && rc != HCOMP_E_EXIST) {
            file_free(f);
            return rc;
        }
    }
    if (flags & OPEN_CREATE_ONLY) {     /* what was there is checked by the open that follows */
        file_free(f);
        return HCOMP_OK;
    }
    for (int attempt = 0;; attempt++) {
        /* O_NONBLOCK: a FIFO given as the file must be refused, not wait for a writer */
        f->map_fd = open(path, (f->writable ? O_RDWR | O_APPEND : O_RDONLY) | O_CLOEXEC | O_NONBLOCK);
        /* the mapping file was replaced (a fold, a compaction) on another node: this
         * client's cached name may still lead to the old file for a moment (NFS, GlusterFS
         * within their entry timeouts) */
        for (int stale = 0; f->map_fd < 0 && errno == ESTALE && stale < 40; stale++) {
            struct timespec nap = {0, 50 * 1000 * 1000};
            nanosleep(&nap, NULL);
            f->map_fd = open(path, (f->writable ? O_RDWR | O_APPEND : O_RDONLY) | O_CLOEXEC |
                                   O_NONBLOCK);
        }
        if (f->map_fd < 0) {
            rc = hcomp_fail_errno(err, errno, "%s: cannot open", path);
            file_free(f);
            return rc;
        }
        struct stat st;
        if (fstat(f->map_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            /* a directory's name is a bad file name (EISDIR, as a writable open finds) */
            rc = S_ISDIR(st.st_mode)
                ? hcomp_fail(err, HCOMP_E_NAME, "%s: cannot open: Is a directory", path)
                : hcomp_fail(err, HCOMP_E_NOTHCOMP, "%s is not a regular file, so not an hcomp file",
                             path);
            file_free(f);
            return rc;
        }
        fcntl(f->map_fd, F_SETFL, fcntl(f->map_fd, F_GETFL) & ~O_NONBLOCK);
        /* the segments and writer log this opener creates get the file's permissions (an
         * opener of an existing file, as `hcomp compact`, may name none: they were 0) */
        f->perm = st.st_mode & 0777;
        /* held until close; it waits while another process reclaims space, which may
         * put a new mapping file (a snapshot of the log) in place: then open that one */
        f->open_locked = hcomp_open_lock_shared(f->map_fd) == 0;
        if (!f->open_locked || !mapping_file_gone(f) || attempt == 16)
            break;
        close(f->map_fd);
    }
    if ((rc = load_header(f, err)) == HCOMP_OK)
        rc = hcomp_wlog_dir_init(f, err);
    if (rc == HCOMP_OK && f->writable && (flags & HCOMP_O_NODES) &&
        f->hdr.version < HCOMP_MAP_VERSION_WLOGS)
        rc = hcomp_fail(err, HCOMP_E_UNSUPPORTED, "%s: a file of format version %u has one "
                        "mapping log that every writer appends to, and appends from several "
                        "nodes tear on many file systems (docs/DEPLOY.md): write it from one "
                        "node's processes, or make it version 3 first with `hcomp compact "
                        "--hint hcomp_format=3 %s` (hcomp before version 3 cannot read it "
                        "then)%s", f->path, (unsigned) f->hdr.version, f->path,
                        f->opts.format == 2 ? "; new files get version 2 only with "
                        "hcomp_format=2, which is for one node's writers" : "");
    if (rc == HCOMP_OK && state != NULL)
        (void) hcomp_log_state_import(f, state, state_len);    /* refused: replayed here */
    /* every call that reads the replayed state refreshes it first (a lazy reader's first
     * one replays the whole log); writers need it for what their writes overwrite */
    int lazy = (flags & HCOMP_O_LAZY) && !f->writable;
    if (rc != HCOMP_OK || (!lazy && (rc = hcomp_log_refresh(f, err)) != HCOMP_OK)) {
        file_free(f);
        return rc;
    }
    if (f->writable && (f->opts.drain == HCOMP_DRAIN_BACKGROUND ||
                        f->opts.drain == HCOMP_DRAIN_WRITEBACK))
        hcomp_drain_start(f);
    *out = f;
    return HCOMP_OK;
}

/* Whether this opener has a segment on a node-local tier: what a drain would move. */
static int has_node_local_segments(const hcomp_file *f)
{
    for (int t = 0; t < f->cfg.ntiers; t++)
        if (f->cfg.tier[t].node_local && f->tw[t].ready && f->tw[t].seg_id != 0)
            return 1;
    return 0;
}

int hcomp_file_close_locked(hcomp_file *f, hcomp_error *err)
{
    hcomp_ok(err);
    if (f == NULL)
        return HCOMP_OK;
    /* buffered small writes first: an error here is the close's (MPI_File_close reports
     * it); the rest of the close goes on */
    int rc = hcomp_wbuf_flush(f, err);
    /* a delete (which locks exclusively) either sees everything this close appends, or
     * happens before it and this opener finds the file gone */
    if (f->writable)
        while (flock(f->map_fd, LOCK_SH) != 0 && errno == EINTR)
            ;
    int gone = f->writable && mapping_file_gone(f);
    if (gone)       /* deleted under us (e.g. ROMIO's shared-pointer file): leave nothing */
        hcomp_file_remove_own_segments(f, 0);
    /* write-back: the drain goes on after this close returns, under the write-back lock
     * that tells readers on other nodes to wait for it; where there are no locks they
     * could not tell, so the close drains as with hcomp_drain=close */
    int handoff = f->writable && !gone && rc == HCOMP_OK && f->opts.drain == HCOMP_DRAIN_WRITEBACK
                  && has_node_local_segments(f) && hcomp_drain_lock_take(f->map_fd) == 0;
    if (f->writable && !gone && f->opts.drain && !handoff) {
        int drc = hcomp_drain_node_local(f, rc == HCOMP_OK ? err : NULL);
        if (rc == HCOMP_OK)
            rc = drc;
    }
    if (f->writable && !gone && f->stats.tasks > 0) {
        /* the engine's statistics stay with the file (a STATS record) */
        char *json = hcomp_stats_json(&f->stats, &f->cfg);
        f->batch.len = 0;
        if (json && hcomp_map_encode_stats(&f->batch, json) == 0 && rc == HCOMP_OK)
            rc = hcomp_log_append(f, &f->batch, err);
        free(json);
    }
    if (handoff && rc == HCOMP_OK) {
        /* printed now, at the close the caller sees, not at a random time later */
        int printed = f->stats.tasks > 0 && hcomp_options_stats_on(&f->opts);
        if (printed)
            hcomp_stats_print(stderr, f->path, &f->stats, &f->cfg);
        f->stats_printed = printed;
        hcomp_writeback_adopt(f);
        return HCOMP_OK;
    }
    if (f->writable && !gone && rc == HCOMP_OK)
        hcomp_reclaim_at_close(f);
    return hcomp_file_close_finish(f, rc, 0, err);
}

int hcomp_file_close_finish(hcomp_file *f, int rc, int printed, hcomp_error *err)
{
    int gone = f->writable && mapping_file_gone(f);
    if (!printed && f->writable && !gone && f->stats.tasks > 0 && hcomp_options_stats_on(&f->opts))
        hcomp_stats_print(stderr, f->path, &f->stats, &f->cfg);
    else if (!printed && f->stats.reads > 0 && hcomp_options_stats_on(&f->opts))
        hcomp_stats_print_reads(stderr, f->path, &f->stats);
    if (f->eng.pred) {
        int erc = hcomp_engine_close(&f->eng, rc == HCOMP_OK ? err : NULL);
        if (rc == HCOMP_OK)
            rc = erc;
    }
    for (int t = 0; t < HCOMP_MAX_TIERS; t++)
        if (f->tw[t].ready && f->tw[t].seg_fd >= 0 && close(f->tw[t].seg_fd) != 0 && rc == HCOMP_OK)
            rc = hcomp_fail_errno(err, errno, "%s: closing segment in %s", f->path, f->tw[t].dir);
    for (int t = 0; t < HCOMP_MAX_TIERS; t++)
        f->tw[t].seg_fd = -1;
    if (f->map_fd >= 0 && close(f->map_fd) != 0 && rc == HCOMP_OK)
        rc = hcomp_fail_errno(err, errno, "%s: closing the mapping file", f->path);
    f->map_fd = -1;
    file_free(f);
    return rc;
}

int hcomp_file_open_replay(const char *path, hcomp_file **out, hcomp_error *err)
{
    *out = NULL;
    hcomp_options *opts = hcomp_options_new();
    if (opts == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
    /* a read-only replay of the log needs no tiers: the embedded configuration will do */
    hcomp_options_set(opts, "hcomp_config", "embedded", NULL);
    int rc = hcomp_file_open(path, HCOMP_O_RDONLY, 0, 1, opts, out, err);
    hcomp_options_free(opts);
    return rc;
}

void hcomp_file_set_dtype(hcomp_file *f, int dtype)
{
    f->eng.dtype_hint = dtype >= 0 && dtype < HCOMP_DTYPE_COUNT ? dtype : -1;
}

void hcomp_file_set_model_owner(hcomp_file *f, int owner)
{
    f->eng.model_owner = owner != 0;
}

int hcomp_file_fd(const hcomp_file *f)
{
    return f->map_fd;
}

int hcomp_file_set_options_locked(hcomp_file *f, const hcomp_options *opts, hcomp_error *err)
{
    hcomp_ok(err);
    char now[PATH_MAX], want[PATH_MAX];
    hcomp_options_get(&f->opts, "hcomp_config", now, sizeof(now));
    hcomp_options_get(opts, "hcomp_config", want, sizeof(want));
    if (strcmp(now, want) != 0)
        return hcomp_fail(err, HCOMP_E_UNSUPPORTED, "%s: hcomp_config cannot change while the file "
                          "is open (open it with the new configuration instead)", f->path);
    int rc = hcomp_options_check(opts, err);
    if (rc != HCOMP_OK)
        return rc;
    rc = hcomp_wbuf_flush(f, err);          /* written with the options they came with */
    if (rc != HCOMP_OK)
        return rc;
    f->opts = *opts;
    hcomp_engine_settings set;
    hcomp_options_engine_settings(&f->opts, &set);
    hcomp_engine_set(&f->eng, &set);
    return HCOMP_OK;
}

/* fsync a directory: 0, or -1 with errno */
int hcomp_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;    /* removed (drained): nothing left to keep */
    int rc = fsync(fd) == 0 || errno == EINVAL ? 0 : -1;   /* EINVAL: cannot be synced */
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int hcomp_file_dir_sync(hcomp_file *f, hcomp_error *err)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", f->path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == dir)
        slash[1] = 0;
    else
        *slash = 0;
    if (hcomp_sync_dir(dir) != 0)
        return hcomp_fail_errno(err, errno, "%s: sync of its directory %s", f->path, dir);
    return HCOMP_OK;
}

int hcomp_segment_names_sync(hcomp_file *f, int t, hcomp_error *err)
{
    hcomp_tier_writer *w = &f->tw[t];
    if (!w->ready || !w->names_unsynced)
        return HCOMP_OK;
    int rc = hcomp_sync_dir(w->dir);
    if (rc == 0 && w->names_unsynced == 2)
        rc = hcomp_sync_dir(w->base);
    if (rc != 0)
        return hcomp_fail_errno(err, errno, "%s: sync of segment directory %s on tier \"%s\"",
                                f->path, w->dir, f->cfg.tier[t].name);
    w->names_unsynced = 0;
    return HCOMP_OK;
}

int hcomp_file_sync_locked(hcomp_file *f, hcomp_error *err)
{
    hcomp_ok(err);
    if (!f->writable)       /* a reader's sync: it sees what was synced before it */
        return hcomp_order_advance(f, err);
    int wrc = hcomp_wbuf_flush(f, err);
    if (wrc != HCOMP_OK)
        return wrc;
    if (!f->opts.sync_tiers) {
        /* MPI-4.0 14.6.1: what was written survives the node, so nothing this opener
         * wrote may be left only on a tier in the node's memory */
        double t0 = hcomp_now();
        uint64_t moved = 0;
        int rc = hcomp_drain_volatile(f, &moved, err);
        f->stats.sync_moved_bytes += moved;
        f->stats.t_sync_move += hcomp_now() - t0;
        if (rc != HCOMP_OK)
            return rc;
    }
    for (int t = 0; t < f->cfg.ntiers; t++) {
        if (f->tw[t].ready) {
            /* a new segment's name (and a new segment directory's) survives a crash only
             * once its directory is synced */
            int rc = hcomp_segment_names_sync(f, t, err);
            if (rc != HCOMP_OK)
                return rc;
        }
        if (!f->tw[t].ready || f->tw[t].seg_fd < 0)
            continue;
        double t0 = hcomp_now();
        if (fsync(f->tw[t].seg_fd) != 0)
            return hcomp_fail_errno(err, errno, "%s: sync of segment %s/%s on tier \"%s\"", f->path,
                                    f->tw[t].dir, f->tw[t].seg_name, f->cfg.tier[t].name);
        /* the time the written bytes took to become durable counts as writing */
        hcomp_monitor_observe(f->tw[t].mon, 1, 0, hcomp_now() - t0);
    }
    if (fsync(f->map_fd) != 0)
        return hcomp_fail_errno(err, errno, "%s: sync of the mapping file", f->path);
    int rc = hcomp_log_durable(f, err);
    if (rc == HCOMP_OK && f->hdr.version >= HCOMP_MAP_VERSION_WLOGS)
        rc = hcomp_wlog_confirm(f, err);
    /* sync-barrier-sync: what any process synced before this one's sync is read now, so
     * what this one writes after it is ordered later */
    return rc == HCOMP_OK ? hcomp_order_advance(f, err) : rc;
}

int hcomp_file_size_locked(hcomp_file *f, uint64_t *size, hcomp_error *err)
{
    hcomp_ok(err);
    int rc = hcomp_log_refresh(f, err);
    if (rc == HCOMP_OK)
        rc = hcomp_log_check_lost(f, err);     /* a lost SIZE or PIECE record changes it */
    if (rc == HCOMP_OK)     /* this handle's buffered writes count (file/write_buffer.c) */
        *size = f->size > hcomp_wbuf_end(f) ? f->size : hcomp_wbuf_end(f);
    return rc;
}

static int append_size(hcomp_file *f, uint64_t size, int mode, hcomp_error *err)
{
    hcomp_ok(err);
    if (!f->writable)
        return hcomp_fail(err, HCOMP_E_RDONLY, "%s: opened read-only", f->path);
    if (size > HCOMP_PIECE_MAX_OFFSET_BYTES)
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: size %llu is beyond hcomp's limit of 256 TiB",
                          f->path, (unsigned long long) size);
    int rc = hcomp_wbuf_flush(f, err);     /* a truncation drops what was written before it */
    if (rc != HCOMP_OK)
        return rc;
    /* after every record this process can see, and before what it writes next: the
     * driver's callers on other processes order themselves after it (hcomp_file_order) */
    if ((rc = hcomp_order_advance(f, err)) != HCOMP_OK)
        return rc;
    f->batch.len = 0;
    if (hcomp_map_encode_size(&f->batch, size, mode) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    rc = hcomp_log_append(f, &f->batch, err);
    if (rc == HCOMP_OK)
        rc = hcomp_wlog_sync(f, err);
    return rc == HCOMP_OK ? hcomp_log_refresh(f, err) : rc;
}

int hcomp_file_truncate_locked(hcomp_file *f, uint64_t size, hcomp_error *err)
{
    return append_size(f, size, HCOMP_SIZE_SET, err);
}

int hcomp_file_extend_locked(hcomp_file *f, uint64_t size, hcomp_error *err)
{
    return append_size(f, size, HCOMP_SIZE_GROW, err);
}
