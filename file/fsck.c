/* `hcomp fsck`: check a file's mapping file, segments and live pieces, and repair what
 * can be repaired without guessing (docs/FORMAT.md, docs/TESTING.md "Reliability"). Rebuilding
 * a lost mapping file from the pieces is in fsck_rebuild.c. */
#include "fsck_internal.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

void hcomp_fsck_say(const hcomp_tool_io *io, const char *fmt, ...)
{
    if (io == NULL || io->say == NULL)
        return;
    char line[2 * HCOMP_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    io->say(io->ctx, line);
}

int hcomp_fsck_read_all(const char *path, unsigned char **out, size_t *len, struct stat *st,
                        hcomp_error *err)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return hcomp_fail_errno(err, errno, "%s: cannot open", path);
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return hcomp_fail(err, HCOMP_E_NOTHCOMP, "%s is not a regular file, so not an hcomp file",
                          path);
    }
    size_t n = (size_t) st->st_size;
    unsigned char *buf = malloc(n ? n : 1);
    if (buf == NULL) {
        close(fd);
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory reading the mapping file", path);
    }
    long long got = hcomp_pread_full(fd, buf, n, 0);
    close(fd);
    if (got < 0) {
        free(buf);
        return hcomp_fail_errno(err, errno, "%s: reading the mapping file", path);
    }
    *out = buf;
    *len = (size_t) got;
    return HCOMP_OK;
}

/* Walk the log: count records, damage and a torn tail; copy the valid records to
 * valid (if not NULL) in their order. */
void hcomp_fsck_scan_log(const unsigned char *buf, size_t len, size_t from, hcomp_bytes *valid,
                         hcomp_fsck_result *res, int *oom)
{
    size_t pos = from;
    while (pos < len) {
        hcomp_map_record rec;
        size_t start = pos;
        int lost = 0;
        int r = hcomp_map_next_checked(buf, len, &pos, &rec, &res->damaged_bytes, &lost);
        if (r == HCOMP_MAP_INCOMPLETE) {
            res->torn_bytes = len - pos;
            break;
        }
        if (r == HCOMP_MAP_DAMAGED) {
            res->lost_records += lost != 0;
            continue;
        }
        res->records++;
        if (valid) {
            if (hcomp_bytes_reserve(valid, pos - start) != 0) {
                *oom = 1;
                return;
            }
            memcpy(valid->p + valid->len, buf + start, pos - start);
            valid->len += pos - start;
        }
    }
}

/* Keep a copy of the damaged mapping file beside it before it is replaced. */
int hcomp_fsck_backup(const char *path, const unsigned char *buf, size_t len, mode_t mode,
                      hcomp_fsck_result *res, hcomp_error *err)
{
    for (int i = 0; i < 100; i++) {
        char name[sizeof(res->backup)];
        if (snprintf(name, sizeof(name), i ? "%s.hcomp-damaged.%d" : "%s.hcomp-damaged", path, i)
            >= (int) sizeof(name))
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: path too long", path);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0666);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            return hcomp_fail_errno(err, errno, "%s: keeping a copy as %s", path, name);
        int bad = hcomp_write_full(fd, buf, len) != 0 || fsync(fd) != 0;
        bad |= close(fd) != 0;
        if (bad) {
            unlink(name);
            return hcomp_fail_errno(err, errno, "%s: keeping a copy as %s", path, name);
        }
        snprintf(res->backup, sizeof(res->backup), "%s", name);
        return HCOMP_OK;
    }
    return hcomp_fail(err, HCOMP_E_EXIST, "%s: too many earlier copies (%s.hcomp-damaged.*)", path,
                      path);
}

/* Segment files in the file's segment directories that no record names. */
static void find_orphans(hcomp_file *f, int repair, const hcomp_tool_io *io,
                         hcomp_fsck_result *res)
{
    for (size_t i = 0; i < f->nsegs; i++) {
        if (f->segs[i].path == NULL)
            continue;
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", f->segs[i].path);
        char *slash = strrchr(dir, '/');
        if (slash == NULL)
            continue;
        *slash = '\0';
        int seen = 0;       /* each directory once */
        for (size_t j = 0; j < i && !seen; j++)
            seen = f->segs[j].path && strncmp(f->segs[j].path, dir, strlen(dir)) == 0 &&
                f->segs[j].path[strlen(dir)] == '/';
        DIR *d = seen ? NULL : opendir(dir);
        if (d == NULL)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t l = strlen(e->d_name);
            if (l < 5 || strcmp(e->d_name + l - 4, ".seg") != 0)
                continue;
            char p[PATH_MAX];
            if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int) sizeof(p))
                continue;
            int named = 0;
            for (size_t k = 0; k < f->nsegs && !named; k++)
                named = f->segs[k].path && strcmp(f->segs[k].path, p) == 0;
            struct stat st;
            if (named || lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            res->orphan_files++;
            res->orphan_bytes += (uint64_t) st.st_size;
            if (repair && unlink(p) == 0) {
                res->orphans_removed++;
                hcomp_fsck_say(io, "removed %s: a segment file no record names (%llu bytes, "
                               "never part of the file)", p, (unsigned long long) st.st_size);
            } else
                hcomp_fsck_say(io, "note: %s is a segment file no record names (%llu bytes, left "
                               "by a writer that stopped before recording it; --repair removes it)",
                               p, (unsigned long long) st.st_size);
        }
        closedir(d);
    }
}

/* Temporary mapping files beside path that a compaction or a repair killed before its
 * rename left (<name>.hcomp-compact-*, <name>.hcomp-fsck-*): never the file itself. */
static void find_temporaries(const char *path, int repair, const hcomp_tool_io *io,
                             hcomp_fsck_result *res)
{
    char dir[PATH_MAX];
    const char *base;
    hcomp_split_path(path, dir, sizeof(dir), &base);
    DIR *d = opendir(dir[0] ? dir : "/");
    if (d == NULL)
        return;
    static const char *const tags[] = {".hcomp-compact-", ".hcomp-fsck-"};
    size_t bl = strlen(base);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int ours = 0;
        for (size_t t = 0; t < 2 && !ours; t++)
            ours = strncmp(e->d_name, base, bl) == 0 &&
                   strncmp(e->d_name + bl, tags[t], strlen(tags[t])) == 0;
        char p[PATH_MAX];
        struct stat st;
        if (!ours || snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int) sizeof(p) ||
            lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        res->temporaries++;
        if (repair && unlink(p) == 0) {
            res->temporaries_removed++;
            hcomp_fsck_say(io, "removed %s: the unfinished new mapping file of an interrupted "
                           "compaction or repair (the file never used it)", p);
        } else
            hcomp_fsck_say(io, "note: %s is the unfinished new mapping file of an interrupted "
                           "compaction or repair (--repair removes it)", p);
    }
    closedir(d);
}

/* The live bytes of piece idx held by [a, b) of its logical bytes. */
static uint64_t live_in(const hcomp_file *f, uint32_t idx, uint64_t a, uint64_t b)
{
    uint64_t n = 0;
    for (size_t i = 0; i < f->map.n; i++) {
        const hcomp_extent *x = &f->map.v[i];
        if (x->piece != idx)
            continue;
        uint64_t lo = x->piece_off > a ? x->piece_off : a;
        uint64_t hi = x->piece_off + x->len < b ? x->piece_off + x->len : b;
        n += hi > lo ? hi - lo : 0;
    }
    return n;
}

/* A framed piece that failed to load: its blocks one by one, each run of damaged blocks
 * said with its logical range and live bytes, since only the reads that touch them fail.
 * 1 and *lost the live bytes they hold, or 0 when the blocks cannot be told apart (the
 * piece's header or table is damaged: the caller says the whole piece). */
static int damaged_blocks(hcomp_file *f, uint32_t idx, const hcomp_tool_io *io, uint64_t *lost)
{
    const hcomp_piece *p = &f->pieces[idx];
    uint32_t bs = hcomp_frame_block_size(p->frame);
    uint32_t n = hcomp_frame_blocks(p->raw_len, bs), nbad = 0;
    unsigned char *damaged = malloc(n ? n : 1);
    hcomp_error e;
    if (damaged == NULL || hcomp_piece_scan_blocks(f, idx, damaged, &nbad, &e) != HCOMP_OK ||
        nbad == 0) {
        free(damaged);
        return 0;
    }
    uint64_t total = 0;
    uint32_t dead = 0;
    for (uint32_t k = 0; k < n;) {
        if (!damaged[k]) {
            k++;
            continue;
        }
        uint32_t j = k;
        int crc = 1;
        while (j < n && damaged[j])
            crc &= damaged[j++] == 1;
        uint64_t a = (uint64_t) k * bs, b = (uint64_t) j * bs < p->raw_len ? (uint64_t) j * bs
                                                                          : p->raw_len;
        uint64_t live = live_in(f, idx, a, b);
        total += live;
        if (live)
            hcomp_fsck_say(io, "DAMAGED: %llu live bytes in logical bytes [%llu, %llu) cannot be "
                           "read: %s in %u block(s) of %u bytes of the piece at %llu of %s (tier "
                           "\"%s\"); the rest of the piece reads", (unsigned long long) live,
                           (unsigned long long) (p->start + a), (unsigned long long) (p->start + b),
                           crc ? "checksum mismatch" : "decoding fails", j - k, bs,
                           (unsigned long long) p->seg_off, f->segs[p->seg].path,
                           f->segs[p->seg].tier);
        else
            dead += j - k;
        k = j;
    }
    if (dead)   /* overwritten since: no read fails, but the medium damaged them */
        hcomp_fsck_say(io, "DAMAGED: %u blocks of the piece at %llu of %s (tier \"%s\") that "
                       "hold no live byte are damaged", dead,
                       (unsigned long long) p->seg_off, f->segs[p->seg].path,
                       f->segs[p->seg].tier);
    free(damaged);
    *lost = total;
    return 1;
}

/* Read every live piece back (header, checksum, decoding). */
static int check_pieces(hcomp_file *f, const hcomp_tool_io *io, hcomp_fsck_result *res,
                        hcomp_error *err)
{
    uint64_t *live = calloc(f->npieces ? f->npieces : 1, sizeof(*live));
    unsigned char *seg_used = calloc(f->nsegs ? f->nsegs : 1, 1);
    if (live == NULL || seg_used == NULL) {
        free(live);
        free(seg_used);
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    }
    for (size_t i = 0; i < f->map.n; i++) {
        live[f->map.v[i].piece] += f->map.v[i].len;
        res->live_bytes += f->map.v[i].len;
    }
    res->pieces = f->npieces;
    res->segments = f->nsegs;
    res->logical_size = f->size;
    unsigned char *buf = NULL;
    size_t cap = 0;
    uint64_t done = 0;
    int rc = HCOMP_OK;
    for (size_t i = 0; i < f->npieces && rc == HCOMP_OK; i++) {
        if (live[i] == 0)
            continue;
        const hcomp_piece *p = &f->pieces[i];
        hcomp_segment *s = &f->segs[p->seg];
        res->live_pieces++;
        seg_used[p->seg] = 1;
        hcomp_error e;
        int sane = hcomp_piece_size_ok(f, p, &e) == HCOMP_OK;  /* before allocating for it */
        if (s->node_local && strcmp(s->node, f->node) != 0) {
            res->remote_pieces++;   /* readable on its node only: fsck it there */
        } else if (sane && hcomp_grow(&buf, &cap, p->raw_len ? p->raw_len : 1) != 0) {
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
        } else {
            if (!sane || hcomp_piece_load(f, (uint32_t) i, buf, &e) != HCOMP_OK) {
                res->bad_pieces++;
                uint64_t lost = 0;
                if (!sane || !p->frame || !damaged_blocks(f, (uint32_t) i, io, &lost)) {
                    /* unframed, or its header or table is damaged: the whole piece */
                    lost = live[i];
                    hcomp_fsck_say(io, "DAMAGED: %llu live bytes from logical offset %llu "
                                   "cannot be read: %s", (unsigned long long) live[i],
                                   (unsigned long long) p->start, e.msg);
                }
                res->unreadable_bytes += lost;
            }
        }
        done += p->raw_len;
        if (io && io->progress)
            io->progress(io->ctx, "fsck", done, f->size);
    }
    for (size_t s = 0; s < f->nsegs; s++) {
        struct stat st;
        if (f->segs[s].path == NULL || lstat(f->segs[s].path, &st) == 0)
            continue;
        if (seg_used[s])
            res->segments_missing++;
        else if (!f->segs[s].node_local)    /* node-local ones go when drained at close */
            hcomp_fsck_say(io, "note: segment %s is gone; none of the file's live data was in it",
                           f->segs[s].path);
    }
    if (res->remote_pieces)
        hcomp_fsck_say(io, "note: %llu live pieces are on node-local tiers of other nodes and were "
                       "not checked (run hcomp fsck on those nodes)",
                       (unsigned long long) res->remote_pieces);
    free(buf);
    free(live);
    free(seg_used);
    return rc;
}

static int check_file(const char *path, int repair, const hcomp_tool_io *io,
                      hcomp_fsck_result *res, hcomp_error *err);

/* Format 3: every writer log of the mapping file's generation, checked as the mapping
 * file's log is (a damaged one written again with its valid records, the damaged one kept
 * beside the mapping file); a log whose header is damaged cannot be trusted at all and is
 * moved aside by --repair (its records are lost, and said so); unfinished logs of writers
 * that died while creating them (".<writer>.new") are removed. */
static int fsck_wlogs(const char *path, const hcomp_map_header *h, int repair,
                      const hcomp_tool_io *io, hcomp_fsck_result *res, hcomp_error *err)
{
    char dir[PATH_MAX], logdir[PATH_MAX + 96], hex[33];
    const char *base;
    hcomp_split_path(path, dir, sizeof(dir), &base);
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", h->file_id[i]);
    snprintf(logdir, sizeof(logdir), "%s/.%.64s.%.16s.hcd", dir, base, hex);
    DIR *d = opendir(logdir);
    if (d == NULL)
        return HCOMP_OK;
    char want[20];
    snprintf(want, sizeof(want), "%016llx-", (unsigned long long) h->log_gen);
    struct dirent *e;
    int rc = HCOMP_OK;
    while (rc == HCOMP_OK && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        char lp[PATH_MAX + 2 * NAME_MAX];
        snprintf(lp, sizeof(lp), "%s/%s", logdir, e->d_name);
        if (e->d_name[0] == '.' && l > 5 && strcmp(e->d_name + l - 4, ".new") == 0) {
            res->temporaries++;
            if (repair && unlink(lp) == 0) {
                res->temporaries_removed++;
                hcomp_fsck_say(io, "removed %s: a writer log its writer never finished making", lp);
            } else
                hcomp_fsck_say(io, "note: %s is a writer log its writer never finished making "
                               "(--repair removes it)", lp);
            continue;
        }
        if (l != 37 || strcmp(e->d_name + 33, ".log") != 0 || strncmp(e->d_name, want, 17) != 0)
            continue;
        unsigned char *buf;
        size_t len;
        struct stat st;
        if ((rc = hcomp_fsck_read_all(lp, &buf, &len, &st, err)) != HCOMP_OK)
            break;
        hcomp_wlog_header wh;
        hcomp_error herr;
        char aside[PATH_MAX + 2 * NAME_MAX];
        snprintf(aside, sizeof(aside), "%s.%s", path, e->d_name);
        res->map_bytes += len;
        if (hcomp_wlog_header_decode(buf, len, &wh, lp, &herr) != HCOMP_OK ||
            memcmp(wh.file_id, h->file_id, 16) != 0) {
            res->lost_records++;
            res->damaged_bytes += len;
            hcomp_fsck_say(io, "DAMAGED: writer log %s: its header is damaged or not this file's: "
                           "the writes it recorded are lost", lp);
            if (repair && (rc = hcomp_fsck_backup(aside, buf, len, st.st_mode, res, err)) == HCOMP_OK &&
                unlink(lp) == 0) {
                res->rewritten = 1;
                hcomp_fsck_say(io, "repaired: writer log %s moved aside as %s", lp, res->backup);
            }
            free(buf);
            continue;
        }
        hcomp_fsck_result one;
        memset(&one, 0, sizeof(one));
        hcomp_bytes valid = {0};
        int oom = 0;
        hcomp_fsck_scan_log(buf, len, HCOMP_WLOG_HEADER_SIZE, &valid, &one, &oom);
        res->records += one.records;
        res->damaged_bytes += one.damaged_bytes;
        res->lost_records += one.lost_records;
        res->torn_bytes += one.torn_bytes;
        if (oom)
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
        if (one.lost_records)
            hcomp_fsck_say(io, "DAMAGED: %llu records of writer log %s were written whole and fail "
                           "their checksums: the writes, sizes or segments they recorded are lost "
                           "(reads of the file fail until --repair drops them)",
                           (unsigned long long) one.lost_records, lp);
        else if (one.damaged_bytes)
            hcomp_fsck_say(io, "DAMAGED: %llu bytes of writer log %s are no valid record",
                           (unsigned long long) one.damaged_bytes, lp);
        if (one.torn_bytes)
            hcomp_fsck_say(io, "DAMAGED: writer log %s ends in %llu bytes of an incomplete record "
                           "(an append cut short by a crash: that write never completed)", lp,
                           (unsigned long long) one.torn_bytes);
        if (rc == HCOMP_OK && repair && (one.damaged_bytes || one.torn_bytes)) {
            rc = hcomp_fsck_backup(aside, buf, len, st.st_mode, res, err);
            if (rc == HCOMP_OK)
                rc = hcomp_map_replace(lp, buf, &valid, st.st_mode, "hcomp-fsck", err);
            if (rc == HCOMP_OK) {
                res->rewritten = 1;
                hcomp_fsck_say(io, "repaired: writer log %s was written again with its %llu valid "
                               "records (the damaged one is kept as %s)", lp,
                               (unsigned long long) one.records, res->backup);
            }
        }
        hcomp_bytes_free(&valid);
        free(buf);
    }
    closedir(d);
    return rc;
}

/* The header is good: check the log and the data; rewrite a damaged log. */
static int fsck_with_header(const char *path, const unsigned char *buf, size_t len,
                            const struct stat *st, int repair, const hcomp_tool_io *io,
                            hcomp_fsck_result *res, hcomp_error *err)
{
    hcomp_bytes valid = {0};
    int oom = 0;
    hcomp_fsck_scan_log(buf, len, HCOMP_MAP_HEADER_SIZE, &valid, res, &oom);
    if (oom) {
        hcomp_bytes_free(&valid);
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
    }
    if (res->lost_records)
        hcomp_fsck_say(io, "DAMAGED: %llu records of the mapping file were written whole and "
                       "fail their checksums: the writes, sizes or segments they recorded are "
                       "lost (reads of the file fail until --repair drops them)",
                       (unsigned long long) res->lost_records);
    if (res->damaged_bytes)
        hcomp_fsck_say(io, "DAMAGED: %llu bytes of the mapping file are no valid record (the "
                       "records around them are used)", (unsigned long long) res->damaged_bytes);
    if (res->torn_bytes)
        hcomp_fsck_say(io, "DAMAGED: the mapping file ends in %llu bytes of an incomplete record "
                       "(an append cut short by a crash: that write never completed)",
                       (unsigned long long) res->torn_bytes);
    int rc = HCOMP_OK;
    if (repair && (res->damaged_bytes || res->torn_bytes)) {
        rc = hcomp_fsck_backup(path, buf, len, st->st_mode, res, err);
        if (rc == HCOMP_OK)
            rc = hcomp_map_replace(path, buf, &valid, st->st_mode, "hcomp-fsck", err);
        if (rc == HCOMP_OK) {
            res->rewritten = 1;
            hcomp_fsck_say(io, "repaired: the mapping file was written again with its %llu valid "
                           "records (the damaged one is kept as %s)",
                           (unsigned long long) res->records, res->backup);
        }
    }
    hcomp_bytes_free(&valid);
    hcomp_map_header h;
    if (rc == HCOMP_OK && hcomp_map_header_decode(buf, len, &h, path, NULL) == HCOMP_OK &&
        h.version >= HCOMP_MAP_VERSION_WLOGS)
        rc = fsck_wlogs(path, &h, repair, io, res, err);
    return rc == HCOMP_OK ? check_file(path, repair, io, res, err) : rc;
}

/* Open the file as its log says and check the data it maps. */
static int check_file(const char *path, int repair, const hcomp_tool_io *io,
                      hcomp_fsck_result *res, hcomp_error *err)
{
    hcomp_file *f;
    int rc = hcomp_file_open_replay(path, &f, err);
    if (rc != HCOMP_OK)
        return rc;
    rc = check_pieces(f, io, res, err);
    res->unconfirmed = f->nunconfirmed;
    if (rc == HCOMP_OK && f->nunconfirmed > 0)
        hcomp_fsck_say(io, "note: %zu writes that no sync of their writer confirmed name pieces "
                       "that are not there (a crash before the sync lost them, or their writer is "
                       "still writing them): set aside, the bytes under them read "
                       "(docs/FORMAT.md, \"Durable steps\")", f->nunconfirmed);
    if (rc == HCOMP_OK) {
        find_orphans(f, repair, io, res);
        find_temporaries(path, repair, io, res);
    }
    hcomp_file_close(f, NULL);
    return rc;
}

int hcomp_fsck(const char *path, const char *config, int repair, const hcomp_tool_io *io,
               hcomp_fsck_result *res, hcomp_error *err)
{
    memset(res, 0, sizeof(*res));
    hcomp_ok(err);
    char abs[PATH_MAX];     /* a rebuild records segment paths absolute */
    if (hcomp_abs_path(path, abs, sizeof(abs)) != 0)
        return hcomp_fail_errno(err, errno, "%s: cannot make the name absolute", path);
    path = abs;
    unsigned char *buf = NULL;
    size_t len = 0;
    struct stat st;
    memset(&st, 0, sizeof(st));
    struct stat lst;
    int rc = HCOMP_OK;
    if (lstat(path, &lst) != 0 && errno == ENOENT)
        res->map_missing = 1;
    else if ((rc = hcomp_fsck_read_all(path, &buf, &len, &st, err)) != HCOMP_OK)
        return rc;
    res->map_bytes = len;
    hcomp_map_header h;
    hcomp_error herr;
    hcomp_ok(&herr);
    res->header_code = res->map_missing ? HCOMP_E_NOENT
        : hcomp_map_header_decode(buf, len, &h, path, &herr);
    if (res->header_code == HCOMP_E_VERSION) {
        *err = herr;
        free(buf);
        return HCOMP_E_VERSION;     /* a newer hcomp's file: never rewrite it */
    }
    if (res->header_code == HCOMP_OK) {
        rc = fsck_with_header(path, buf, len, &st, repair, io, res, err);
    } else {
        if (!res->map_missing)
            hcomp_fsck_say(io, "DAMAGED: %s", herr.msg);
        else
            hcomp_fsck_say(io, "DAMAGED: %s: the mapping file is missing", path);
        rc = hcomp_fsck_rebuild(path, config, buf, len, res->map_missing ? 0600 : st.st_mode,
                                repair, io, res, err);
        if (rc == HCOMP_OK && res->rebuilt)
            rc = check_file(path, repair, io, res, err);
    }
    free(buf);
    if (rc != HCOMP_OK)
        return rc;
    res->problems = res->bad_pieces || res->segments_missing ||
        (!res->rewritten && !res->rebuilt &&
         (res->damaged_bytes || res->torn_bytes || res->header_code != HCOMP_OK)) ||
        res->lost_segment_bytes;
    return HCOMP_OK;
}
