/* The node's cache of tier speed probes (probe_cache.h). */
#include "probe_cache.h"
#include "tier_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The cache directory into buf, made private if it was not there; 0, or -1: no cache. */
static int cache_dir(char *buf, size_t n)
{
    const char *env = getenv("HCOMP_CACHE_DIR");
    struct stat st;
    int w;
    if (env != NULL && env[0] != '\0') {
        if (strcmp(env, "off") == 0)
            return -1;
        w = snprintf(buf, n, "%s", env);
    } else if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode)) {
        w = snprintf(buf, n, "/dev/shm/hcomp-%u.cache", (unsigned) geteuid());
    } else {
        const char *tmp = getenv("TMPDIR");
        w = snprintf(buf, n, "%s/hcomp-%u.cache", tmp && tmp[0] ? tmp : "/tmp", (unsigned) geteuid());
    }
    if (w < 0 || (size_t) w >= n)
        return -1;
    /* a real directory of ours that no one else can enter: a planted one is not used */
    return hcomp_tier_ensure_private_dir(buf, NULL) == HCOMP_OK ? 0 : -1;
}

/* A fresh "hcomp-probe 2 R W RA WA T" line: 1 and the speeds, else 0 (version 1, whose
 * line had no aggregate figures, is taken as stale: probed again) */
static int parse(const char *text, double now, hcomp_probe_speeds *out)
{
    int version = 0;
    double rr = 0, ww = 0, ra = 0, wa = 0, t = 0;
    if (sscanf(text, "hcomp-probe %d %lf %lf %lf %lf %lf", &version, &rr, &ww, &ra, &wa, &t) != 6 ||
        version != 2 || !isfinite(rr) || !isfinite(ww) || !isfinite(ra) || !isfinite(wa) ||
        !isfinite(t) || rr <= 0 || ww <= 0 || ra < 0 || wa < 0 || t > now + 60 ||
        now - t > HCOMP_PROBE_MAX_AGE)
        return 0;
    out->read_Bps = rr;
    out->write_Bps = ww;
    out->read_all_Bps = ra;
    out->write_all_Bps = wa;
    return 1;
}

/* The cache entry of dir's file system into path; 0, or -1: no cache. */
static int entry_path(const char *dir, char *path, size_t n)
{
    char base[PATH_MAX];
    struct stat st;
    if (cache_dir(base, sizeof(base)) != 0 || stat(dir, &st) != 0)
        return -1;
    int w = snprintf(path, n, "%s/probe-%llx", base, (unsigned long long) st.st_dev);
    return w < 0 || (size_t) w >= n ? -1 : 0;
}

/* An entry's descriptor is used only when it is a regular file of this user. */
static int entry_ours(int fd)
{
    struct stat fs;
    return fstat(fd, &fs) == 0 && S_ISREG(fs.st_mode) && fs.st_uid == geteuid();
}

int hcomp_probe_cache_peek(const char *dir, hcomp_probe_speeds *out)
{
    char path[PATH_MAX + 64], text[160];
    if (entry_path(dir, path, sizeof(path)) != 0)
        return 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = entry_ours(fd) ? pread(fd, text, sizeof(text) - 1, 0) : -1;
    close(fd);
    text[got > 0 ? got : 0] = '\0';
    return parse(text, (double) time(NULL), out);
}

int hcomp_probe_cache_begin(const char *dir, hcomp_probe_speeds *out, int *lock_fd)
{
    *lock_fd = -1;
    char path[PATH_MAX + 64];
    if (entry_path(dir, path, sizeof(path)) != 0)
        return HCOMP_PROBE_NO_CACHE;
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return HCOMP_PROBE_NO_CACHE;
    if (!entry_ours(fd)) {
        close(fd);
        return HCOMP_PROBE_NO_CACHE;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK;
        close(fd);
        return busy ? HCOMP_PROBE_BUSY : HCOMP_PROBE_NO_CACHE;
    }
    char text[160];
    ssize_t got = pread(fd, text, sizeof(text) - 1, 0);
    text[got > 0 ? got : 0] = '\0';
    if (parse(text, (double) time(NULL), out)) {
        close(fd);          /* and with it the lock */
        return HCOMP_PROBE_CACHED;
    }
    *lock_fd = fd;
    return HCOMP_PROBE_MINE;
}

/* Entries older than a cached probe may be (file systems probed once and gone, and the
 * per-directory entries of earlier versions) are removed when a probe is stored, so the
 * cache holds no more than a probe stands for (HCOMP_PROBE_MAX_AGE). */
static void prune(int keep_fd)
{
    struct stat keep;
    if (fstat(keep_fd, &keep) != 0)
        return;
    char base[PATH_MAX], path[PATH_MAX + 300];
    if (cache_dir(base, sizeof(base)) != 0)
        return;
    DIR *d = opendir(base);
    if (d == NULL)
        return;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (strncmp(e->d_name, "probe-", 6) != 0 ||
            snprintf(path, sizeof(path), "%s/%s", base, e->d_name) >= (int) sizeof(path))
            continue;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            st.st_ino != keep.st_ino && difftime(now, st.st_mtime) > HCOMP_PROBE_MAX_AGE)
            (void) unlink(path);
    }
    closedir(d);
}

void hcomp_probe_cache_end(int lock_fd, const hcomp_probe_speeds *p)
{
    if (lock_fd < 0)
        return;
    prune(lock_fd);     /* not the entry being written, however old */
    if (p != NULL && p->read_Bps > 0 && p->write_Bps > 0) {
        char text[160];
        int n = snprintf(text, sizeof(text), "hcomp-probe 2 %.6e %.6e %.6e %.6e %.0f\n",
                         p->read_Bps, p->write_Bps, p->read_all_Bps > 0 ? p->read_all_Bps : 0,
                         p->write_all_Bps > 0 ? p->write_all_Bps : 0, (double) time(NULL));
        if (ftruncate(lock_fd, 0) == 0 && n > 0)
            (void) !pwrite(lock_fd, text, (size_t) n, 0);
    }
    close(lock_fd);
}
