/* Deleting a logical file: every segment the mapping file names (and whatever
 * else sits in those per-file segment directories), the directories, then the
 * mapping file. A file that is not an hcomp file is left alone. */
#include "file_internal.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* What hcomp puts in a per-file directory: segment files, and (format 3, in the hidden
 * one beside the file) writer logs and logs being made. */
static int hcomp_entry(const char *n)
{
    size_t l = strlen(n);
    return (l > 4 && (strcmp(n + l - 4, ".seg") == 0 || strcmp(n + l - 4, ".log") == 0)) ||
           (l > 5 && n[0] == '.' && strcmp(n + l - 4, ".new") == 0);
}

/* Remove hcomp's files in a per-file directory, then it. */
static int remove_segment_dir(const char *file, const char *dir, hcomp_error *err)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? HCOMP_OK
            : hcomp_fail_errno(err, errno, "%s: opening segment directory %s", file, dir);
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return hcomp_fail_errno(err, errno, "%s: reading segment directory %s", file, dir);
    }
    struct dirent *e;
    int rc = HCOMP_OK;
    while ((e = readdir(d)) != NULL) {
        if (hcomp_entry(e->d_name) && unlinkat(dfd, e->d_name, 0) != 0 && errno != ENOENT &&
            rc == HCOMP_OK)
            rc = hcomp_fail_errno(err, errno, "%s: removing %s/%s", file, dir, e->d_name);
    }
    closedir(d);
    if (rc == HCOMP_OK && rmdir(dir) != 0 && errno != ENOENT)
        rc = hcomp_fail_errno(err, errno, "%s: removing segment directory %s", file, dir);
    return rc;
}

int hcomp_file_delete(const char *path, hcomp_error *err)
{
    hcomp_ok(err);
    /* this process's own closed handles still moving the file's pieces stop first: what
     * they would move is deleted (other processes' are waited for, by the lock below) */
    hcomp_writeback_cancel(path);
    hcomp_file *f;
    int rc = hcomp_file_open_replay(path, &f, err);
    if (rc != HCOMP_OK)
        return rc;
    /* wait for openers that are closing (draining) to finish, then read what they wrote */
    while (flock(f->map_fd, LOCK_EX) != 0 && errno == EINTR)
        ;
    if ((rc = hcomp_log_refresh(f, err)) != HCOMP_OK) {
        hcomp_file_close(f, NULL);
        return rc;
    }
    /* segment files first, then each distinct directory, then (version 3) the writer logs'
     * directory beside the file, if no segment was in it */
    for (size_t i = 0; i < f->nsegs && rc == HCOMP_OK; i++) {
        const char *p = f->segs[i].path;
        if (p && unlink(p) != 0 && errno != ENOENT)
            rc = hcomp_fail_errno(err, errno, "%s: removing segment %s", path, p);
    }
    for (size_t i = 0; i < f->nsegs && rc == HCOMP_OK; i++) {
        if (f->segs[i].path == NULL)
            continue;
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", f->segs[i].path);
        char *slash = strrchr(dir, '/');
        if (slash == NULL)
            continue;
        *slash = '\0';
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) {
            const char *q = f->segs[j].path;
            seen = q && strncmp(q, dir, strlen(dir)) == 0 && q[strlen(dir)] == '/';
        }
        if (!seen)
            rc = remove_segment_dir(path, dir, err);
    }
    if (rc == HCOMP_OK && f->hdr.version >= HCOMP_MAP_VERSION_WLOGS)
        rc = remove_segment_dir(path, f->logdir, err);
    if (rc == HCOMP_OK && unlink(path) != 0)     /* still under the lock */
        rc = hcomp_fail_errno(err, errno, "%s: removing the mapping file", path);
    hcomp_error cerr;
    hcomp_file_close(f, &cerr);
    return rc;
}

int hcomp_is_hcomp_file(const char *path)
{
    unsigned char magic[8];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    long long got = hcomp_pread_full(fd, magic, sizeof(magic), 0);
    close(fd);
    return got == (long long) sizeof(magic) && memcmp(magic, HCOMP_MAP_MAGIC, 8) == 0;
}
