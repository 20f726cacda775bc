/* Where this opener's pieces go on each tier: the tier's directory checks, the
 * per-file segment directory, the opener's share of the tier's capacity, and its
 * segment file. */
#include "tier_space.h"
#include "monitor.h"
#include "common/util.h"
#include "common/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

/* The directory a tier stands for, for this file. */
int hcomp_tier_base_dir(const hcomp_tier *t, const char *file_path, char *out, size_t n)
{
    if (strcmp(t->path, HCOMP_FILEDIR) != 0)
        return snprintf(out, n, "%s", t->path) >= (int) n ? -1 : 0;
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s", file_path) >= (int) sizeof(tmp))
        return -1;
    return snprintf(out, n, "%s", dirname(tmp)) >= (int) n ? -1 : 0;
}

int hcomp_tier_check(const hcomp_tier *t, const char *file_path, hcomp_error *err)
{
    char dir[PATH_MAX];
    struct stat st;
    if (hcomp_tier_base_dir(t, file_path, dir, sizeof(dir)) != 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" path is too long", file_path, t->name);
    if (t->private_dir) {
        hcomp_error e;
        int rc = hcomp_tier_ensure_private_dir(dir, &e);
        if (rc != HCOMP_OK)
            return hcomp_fail(err, rc, "%s: tier \"%s\": %s", file_path, t->name, e.msg);
        return HCOMP_OK;
    }
    if (stat(dir, &st) != 0)
        return hcomp_fail_errno(err, errno, "%s: tier \"%s\" directory %s", file_path, t->name, dir);
    if (!S_ISDIR(st.st_mode))
        return hcomp_fail(err, HCOMP_E_NOENT, "%s: tier \"%s\" path %s is not a directory",
                          file_path, t->name, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return hcomp_fail_errno(err, errno, "%s: tier \"%s\" directory %s is not writable",
                                file_path, t->name, dir);
    return HCOMP_OK;
}

int hcomp_tier_volatile(const hcomp_tier *t, const char *file_path)
{
    if (t->volatile_mode >= 0)
        return t->volatile_mode;
    char dir[PATH_MAX];
    struct statfs sf;
    if (hcomp_tier_base_dir(t, file_path, dir, sizeof(dir)) != 0 || statfs(dir, &sf) != 0)
        return 0;       /* not there yet: a writer checks it before it stores anything */
    return sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC;
}

/* Bytes held in a tier directory by hcomp (its files' segment directories). */
uint64_t hcomp_tier_usage(const char *dir)
{
    uint64_t used = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 4, ".hcd") != 0)
            continue;
        int sfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0)
            continue;
        DIR *s = fdopendir(sfd);
        if (s == NULL) {
            close(sfd);
            continue;
        }
        struct dirent *g;
        struct stat st;
        while ((g = readdir(s)) != NULL)
            if (fstatat(sfd, g->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                used += (uint64_t) st.st_blocks * 512;  /* space in use: drained holes free it */
        closedir(s);
    }
    closedir(d);
    return used;
}

int hcomp_tier_writer_prepare(hcomp_tier_writer *w, const hcomp_tier *tier, const char *file_path,
                              const char *file_id, hcomp_error *err)
{
    if (w->ready)
        return HCOMP_OK;
    char base[PATH_MAX], name[PATH_MAX];
    if (hcomp_tier_base_dir(tier, file_path, base, sizeof(base)) != 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" path is too long", file_path, tier->name);
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", file_path);
    const char *file_base = basename(tmp);
    /* the file's own directory gets a hidden entry; dedicated tier directories a plain one */
    int hidden = strcmp(tier->path, HCOMP_FILEDIR) == 0;
    snprintf(name, sizeof(name), "%s%.64s.%.16s.hcd", hidden ? "." : "", file_base, file_id);
    if (snprintf(w->dir, sizeof(w->dir), "%s/%s", base, name) >= (int) sizeof(w->dir))
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: segment directory path on tier \"%s\" is too long",
                          file_path, tier->name);
    snprintf(w->base, sizeof(w->base), "%s", base);
    w->mon = hcomp_monitor_watch(base);
    w->volatile_tier = hcomp_tier_volatile(tier, file_path);
    /* capacity is reserved from the tier's ledger when pieces need it */
    w->budget = tier->capacity == UINT64_MAX ? UINT64_MAX : 0;
    w->in_ledger = 0;
    if (hcomp_random_bytes(&w->ledger_id, sizeof(w->ledger_id)) != 0)
        return hcomp_fail_errno(err, errno, "%s: no random id", file_path);
    w->ledger_id &= 0x7fffffffffffffffull;
    w->seg_fd = -1;
    w->ready = 1;
    return HCOMP_OK;
}

int hcomp_tier_writer_segment(hcomp_tier_writer *w, const hcomp_tier *tier, const char *file_path,
                              mode_t perm, int *is_new, hcomp_error *err)
{
    *is_new = 0;
    if (w->seg_fd >= 0)
        return HCOMP_OK;
    /* the per-file segment directory appears with the first piece on this tier */
    mode_t dmode = perm | ((perm & 0444) >> 2) | 0700;
    /* writers on several nodes make it at once: on a distributed file system the loser
     * may get another error than EEXIST (GlusterFS), so a directory there now will do */
    struct stat made;
    /* the directory's own name is synced too, also when another process made it: that
     * process may not have synced it yet */
    w->names_unsynced = 2;
    if (mkdir(w->dir, dmode) != 0 && errno != EEXIST &&
        !(lstat(w->dir, &made) == 0 && S_ISDIR(made.st_mode)))
        return hcomp_fail_errno(err, errno, "%s: creating segment directory %s on tier \"%s\"",
                                file_path, w->dir, tier->name);
    struct stat st;
    if (lstat(w->dir, &st) != 0)
        return hcomp_fail_errno(err, errno, "%s: segment directory %s", file_path, w->dir);
    if (!S_ISDIR(st.st_mode))
        return hcomp_fail(err, HCOMP_E_ACCESS, "%s: segment directory %s on tier \"%s\" is not a "
                          "directory (a symbolic link?); refusing to use it", file_path, w->dir,
                          tier->name);
    for (int attempt = 0; attempt < 8; attempt++) {
        if (hcomp_random_bytes(&w->seg_id, sizeof(w->seg_id)) != 0)
            return hcomp_fail_errno(err, errno, "%s: no random segment id", file_path);
        snprintf(w->seg_name, sizeof(w->seg_name), "%016llx.seg", (unsigned long long) w->seg_id);
        char path[PATH_MAX];
        if (snprintf(path, sizeof(path), "%s/%s", w->dir, w->seg_name) >= (int) sizeof(path))
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: segment path in %s is too long", file_path,
                              w->dir);
        w->seg_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perm);
        if (w->seg_fd >= 0) {
            struct stat st;
            if (fstat(w->seg_fd, &st) != 0) {
                int e = errno;
                close(w->seg_fd);
                w->seg_fd = -1;
                return hcomp_fail_errno(err, e, "%s: segment %s on tier \"%s\"", file_path, path,
                                        tier->name);
            }
            w->seg_dev = st.st_dev;
            w->seg_ino = st.st_ino;
            w->seg_tail = 0;
            w->flush_from = 0;
            *is_new = 1;
            if (w->names_unsynced < 1)
                w->names_unsynced = 1;
            return HCOMP_OK;
        }
        if (errno != EEXIST)
            return hcomp_fail_errno(err, errno, "%s: creating segment %s on tier \"%s\"", file_path,
                                    path, tier->name);
    }
    return hcomp_fail(err, HCOMP_E_IO, "%s: could not create a unique segment in %s", file_path, w->dir);
}

uint64_t hcomp_tier_writer_flush_behind(hcomp_tier_writer *w, uint64_t after, double *seconds)
{
    *seconds = 0;
    if (after == 0 || w->volatile_tier || w->seg_fd < 0 || w->seg_tail < w->flush_from ||
        w->seg_tail - w->flush_from < after)
        return 0;
    uint64_t n = w->seg_tail - w->flush_from;
#ifdef SYNC_FILE_RANGE_WRITE
    /* advice: a file system that cannot (EINVAL, ENOSYS) leaves it all to the sync, and
     * errors of the write-back itself are the sync's to report */
    double t0 = hcomp_now();
    (void) sync_file_range(w->seg_fd, (off_t) w->flush_from, (off_t) n, SYNC_FILE_RANGE_WRITE);
    *seconds = hcomp_now() - t0;
#else
    n = 0;
#endif
    w->flush_from = w->seg_tail;
    return n;
}

void hcomp_tier_emulate(const hcomp_tier *tier, uint64_t bytes, int is_write, double t0)
{
    (void) is_write;    /* one bandwidth for both directions */
    if (!tier->emulate || !(tier->bandwidth > 0))
        return;
    double target = tier->latency + (double) bytes / tier->bandwidth;
    double left = target - (hcomp_now() - t0);
    if (left > 0) {
        struct timespec ts = {(time_t) left, (long) ((left - (double) (time_t) left) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

void hcomp_tier_writer_remove_segment(hcomp_tier_writer *w)
{
    if (!w->ready || w->seg_fd < 0)
        return;
    char path[PATH_MAX];
    int fits = snprintf(path, sizeof(path), "%s/%s", w->dir, w->seg_name) < (int) sizeof(path);
    close(w->seg_fd);
    w->seg_fd = -1;
    if (fits)               /* it was created by this name */
        unlink(path);
    rmdir(w->dir);          /* fails, harmlessly, while other openers' segments remain */
    w->seg_id = 0;          /* no segment here now: a drain passes it by, a write makes one */
}

void hcomp_tier_writer_close(hcomp_tier_writer *w, const hcomp_tier *tier)
{
    if (w->ready && w->seg_fd >= 0)
        close(w->seg_fd);
    hcomp_tier_release(w, tier);
    if (w->ready)
        hcomp_monitor_unwatch(w->mon);
    w->seg_fd = -1;
    w->ready = 0;
}
