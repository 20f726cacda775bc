/* hcomp orphans: the segment directories in a directory that no hcomp file there uses.
 *
 * A file's pieces on the tier of its own directory live in ".NAME.ID.hcd" beside it
 * (docs/FORMAT.md). When the mapping file goes without hcomp (rm, or truncate(2) as
 * PnetCDF's ncmpi_create does before writing a file anew), they stay, and nothing in the
 * directory uses them any more. hcomp cannot remove them by itself: a file renamed with
 * mv keeps using the directories of its old name (its records hold absolute paths). This
 * tool lists the directories whose ID is no hcomp file's of the directory (so renames
 * within it are safe) and, asked to, removes them; a file moved to another directory is
 * what the user must rule out, and the tool says so.
 *
 * The directories are listed before the mapping files are read: a file's mapping file
 * exists before its first segment directory, so a file created meanwhile is never
 * taken for gone. */
#include "file_internal.h"
#include "tools.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct candidate {
    char *name;                 /* ".NAME.ID.hcd" */
    char hex[17];               /* ID */
} candidate;

/* ".<name>.<16 hex>.hcd" with a non-empty name: copy the hex */
static int segment_dir_name(const char *n, char hex[17])
{
    size_t l = strlen(n);
    if (l < 1 + 1 + 1 + 16 + 4 || n[0] != '.' || strcmp(n + l - 4, ".hcd") != 0 ||
        n[l - 4 - 16 - 1] != '.' || !hcomp_is_hex16(n + l - 4 - 16))
        return 0;
    memcpy(hex, n + l - 4 - 16, 16);
    hex[16] = '\0';
    return 1;
}

static void say(const hcomp_tool_io *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const hcomp_tool_io *io, const char *fmt, ...)
{
    if (io == NULL || io->say == NULL)
        return;
    char line[PATH_MAX + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    io->say(io->ctx, line);
}

/* The file id (first 16 hex digits) of the mapping file dir/name, into hex: 1; not a
 * mapping file: 0; cannot be read: -1 (errno). A header whose checksum is wrong still
 * names its id: such a file is damaged, not gone, and keeps its directories. */
static int mapping_file_id(int dfd, const char *name, char hex[17])
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return errno == ELOOP || errno == ENOENT ? 0 : -1;
    int kind = -1;
    hcomp_error e;
    unsigned char h[HCOMP_MAP_HEADER_SIZE];
    int rc = 0;
    if (hcomp_file_kind_fd(fd, &kind, &e) != HCOMP_OK) {
        rc = -1;
    } else if (kind == HCOMP_FILE_KIND_HCOMP) {
        if (hcomp_pread_full(fd, h, sizeof(h), 0) != (long long) sizeof(h)) {
            rc = -1;    /* a mapping file cut inside its header: its id is unknown */
            errno = EIO;
        } else {
            for (int i = 0; i < 8; i++)
                snprintf(hex + 2 * i, 3, "%02x", h[16 + i]);
            rc = 1;
        }
    }
    int e2 = errno;
    close(fd);
    errno = e2;
    return rc;
}

/* Bytes allocated to the directory's entries, and how many there are of *.seg (and
 * writer logs, *.log) and others. */
static void measure(int dfd, const char *name, uint64_t *bytes, uint64_t *segs, uint64_t *other)
{
    *bytes = *segs = *other = 0;
    int sfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *s = sfd >= 0 ? fdopendir(sfd) : NULL;
    if (s == NULL) {
        if (sfd >= 0)
            close(sfd);
        return;
    }
    struct dirent *g;
    struct stat st;
    while ((g = readdir(s)) != NULL) {
        if (strcmp(g->d_name, ".") == 0 || strcmp(g->d_name, "..") == 0)
            continue;
        size_t l = strlen(g->d_name);
        int seg = l > 4 && (strcmp(g->d_name + l - 4, ".seg") == 0 ||
                            strcmp(g->d_name + l - 4, ".log") == 0) &&
            fstatat(sfd, g->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
        if (seg) {
            (*segs)++;
            *bytes += (uint64_t) st.st_blocks * 512;
        } else {
            (*other)++;
        }
    }
    closedir(s);
}

/* Remove the *.seg files (and format 3's writer logs, *.log) of dir/name, then it (it
 * must then be empty). */
static int remove_dir(int dfd, const char *dir, const char *name, hcomp_error *err)
{
    int sfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd < 0)
        return hcomp_fail_errno(err, errno, "%s/%s: cannot open it", dir, name);
    DIR *s = fdopendir(sfd);
    if (s == NULL) {
        close(sfd);
        return hcomp_fail_errno(err, errno, "%s/%s: cannot read it", dir, name);
    }
    struct dirent *g;
    struct stat st;
    int rc = HCOMP_OK;
    while ((g = readdir(s)) != NULL && rc == HCOMP_OK) {
        size_t l = strlen(g->d_name);
        if (l > 4 && (strcmp(g->d_name + l - 4, ".seg") == 0 ||
                      strcmp(g->d_name + l - 4, ".log") == 0) &&
            fstatat(sfd, g->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            unlinkat(sfd, g->d_name, 0) != 0 && errno != ENOENT)
            rc = hcomp_fail_errno(err, errno, "%s/%s/%s: cannot remove it", dir, name, g->d_name);
    }
    closedir(s);
    if (rc == HCOMP_OK && unlinkat(dfd, name, AT_REMOVEDIR) != 0)
        rc = hcomp_fail_errno(err, errno, "%s/%s: cannot remove it", dir, name);
    return rc;
}

int hcomp_orphans(const char *dir, int remove, const hcomp_tool_io *io,
                  hcomp_orphans_result *res, hcomp_error *err)
{
    hcomp_ok(err);
    memset(res, 0, sizeof(*res));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return hcomp_fail_errno(err, errno, "%s: cannot open the directory", dir);
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        int e = errno;
        close(dfd);
        return hcomp_fail_errno(err, e, "%s: cannot read the directory", dir);
    }
    candidate *c = NULL;
    size_t nc = 0, cap = 0;
    char (*ids)[17] = NULL;
    size_t nids = 0, idcap = 0;
    int rc = HCOMP_OK;
    struct dirent *e;
    struct stat st;

    /* 1. the segment directories (before the mapping files: see the top) */
    while ((e = readdir(d)) != NULL && rc == HCOMP_OK) {
        char hex[17];
        if (!segment_dir_name(e->d_name, hex) ||
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (hcomp_grow_array(&c, &cap, nc + 1, sizeof(*c)) != 0) {
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", dir);
            break;
        }
        c[nc].name = strdup(e->d_name);
        memcpy(c[nc].hex, hex, sizeof(hex));
        if (c[nc].name == NULL)
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", dir);
        else
            nc++;
    }
    /* 2. the ids of the hcomp files there (counted also when no directory needs them:
     * the count is reported) */
    rewinddir(d);
    while (rc == HCOMP_OK && (e = readdir(d)) != NULL) {
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        char hex[17];
        int got = mapping_file_id(dfd, e->d_name, hex);
        if (got < 0) {
            /* its directories cannot be told: nothing may be removed */
            res->unreadable++;
            say(io, "%s/%s: cannot read it (%s): the segment directories it may use cannot "
                "be told", dir, e->d_name, strerror(errno));
            continue;
        }
        if (got == 0)
            continue;
        if (hcomp_grow_array(&ids, &idcap, nids + 1, sizeof(*ids)) != 0) {
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", dir);
            break;
        }
        memcpy(ids[nids++], hex, 17);
        res->files++;
    }
    closedir(d);        /* dfd with it */
    dfd = -1;

    if (rc == HCOMP_OK && remove && res->unreadable > 0)
        rc = hcomp_fail(err, HCOMP_E_ACCESS, "%s: %llu files cannot be read, so which segment "
                        "directories they use cannot be told; nothing removed", dir,
                        (unsigned long long) res->unreadable);
    int keep_fd = rc == HCOMP_OK ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (rc == HCOMP_OK && keep_fd < 0)
        rc = hcomp_fail_errno(err, errno, "%s: cannot open the directory", dir);
    for (size_t i = 0; i < nc && rc == HCOMP_OK; i++) {
        int used = 0;
        for (size_t j = 0; j < nids && !used; j++)
            used = strcmp(ids[j], c[i].hex) == 0;
        if (used)
            continue;
        uint64_t bytes, segs, other;
        measure(keep_fd, c[i].name, &bytes, &segs, &other);
        res->orphans++;
        res->orphan_bytes += bytes;
        if (!remove) {
            say(io, "%s/%s: %llu segment files, %llu bytes: no hcomp file here has id %s",
                dir, c[i].name, (unsigned long long) segs, (unsigned long long) bytes, c[i].hex);
            continue;
        }
        if (other > 0) {
            res->kept++;
            say(io, "%s/%s: kept: it holds %llu entries that are not segment files", dir,
                c[i].name, (unsigned long long) other);
            continue;
        }
        hcomp_error rerr;
        if (remove_dir(keep_fd, dir, c[i].name, &rerr) != HCOMP_OK) {
            res->kept++;
            say(io, "%s", rerr.msg);
            continue;
        }
        res->removed++;
        res->removed_bytes += bytes;
        say(io, "%s/%s: removed %llu segment files, %llu bytes", dir, c[i].name,
            (unsigned long long) segs, (unsigned long long) bytes);
    }
    if (keep_fd >= 0)
        close(keep_fd);
    for (size_t i = 0; i < nc; i++)
        free(c[i].name);
    free(c);
    free(ids);
    return rc;
}
