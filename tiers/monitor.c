/* The system monitor thread. */
#include "monitor.h"
#include "probe_cache.h"
#include "common/clock.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define MAX_WATCHED 64

/* Decayed sums of the bytes and seconds of this process's I/O in a directory. */
typedef struct io_speed {
    double bytes, seconds;
    uint64_t n;
} io_speed;

typedef struct watched {
    char dir[PATH_MAX];
    int refs;
    hcomp_tier_status st;
    io_speed io[2];         /* [0] reads, [1] writes */
    int probed;             /* 1: probe_* hold the probe's figures */
    int probe_wanted;       /* asked for: the thread runs it on its next pass */
    double probe_read, probe_write;
} watched;

static pthread_mutex_t mon_lock = PTHREAD_MUTEX_INITIALIZER;
static watched mon[MAX_WATCHED];
static int mon_started;

static void probe(const char *dir, hcomp_tier_status *st)
{
    struct stat sb;
    struct statvfs vfs;
    st->available = stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) && access(dir, W_OK | X_OK) == 0;
    st->free_bytes = st->available && statvfs(dir, &vfs) == 0
        ? (uint64_t) vfs.f_bavail * (uint64_t) vfs.f_frsize : 0;
    st->updated = hcomp_now();
}

static void probe_speed_into(int h, const char *dir);

static void *monitor_thread(void *arg)
{
    (void) arg;
    for (;;) {
        char dirs[MAX_WATCHED][PATH_MAX];
        int which[MAX_WATCHED], n = 0;
        pthread_mutex_lock(&mon_lock);
        for (int i = 0; i < MAX_WATCHED; i++)
            if (mon[i].refs > 0) {
                memcpy(dirs[n], mon[i].dir, sizeof(dirs[n]));
                which[n++] = i;
            }
        pthread_mutex_unlock(&mon_lock);
        for (int k = 0; k < n; k++) {   /* probe outside the lock: stat may block */
            hcomp_tier_status st;
            probe(dirs[k], &st);
            pthread_mutex_lock(&mon_lock);
            watched *w = &mon[which[k]];
            int speed = 0;
            if (w->refs > 0 && strcmp(w->dir, dirs[k]) == 0) {
                w->st.available = st.available;
                w->st.free_bytes = st.free_bytes;
                w->st.updated = st.updated;
                speed = w->probe_wanted && !w->probed;
            }
            pthread_mutex_unlock(&mon_lock);
            if (speed)
                probe_speed_into(which[k], dirs[k]);
        }
        struct timespec ts = {0, HCOMP_MONITOR_PERIOD_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int hcomp_monitor_watch(const char *dir)
{
    int h = -1;
    pthread_mutex_lock(&mon_lock);
    /* a directory watched before keeps its slot and its last status (a series of files
     * on one tier would otherwise look it up again at every open; a status more than a
     * second old is refreshed at its first use anyway) */
    for (int i = 0; i < MAX_WATCHED && h < 0; i++)
        if ((mon[i].refs > 0 || mon[i].st.updated > 0) && strcmp(mon[i].dir, dir) == 0)
            h = i;
    if (h < 0) {    /* a free slot, the one whose last status is oldest (never used: 0) */
        for (int i = 0; i < MAX_WATCHED; i++)
            if (mon[i].refs == 0 && (h < 0 || mon[i].st.updated < mon[h].st.updated))
                h = i;
        if (h >= 0) {
            snprintf(mon[h].dir, sizeof(mon[h].dir), "%s", dir);
            memset(&mon[h].st, 0, sizeof(mon[h].st));
            memset(mon[h].io, 0, sizeof(mon[h].io));
            mon[h].probed = 0;
            mon[h].probe_wanted = 0;
        }
    }
    if (h >= 0)
        mon[h].refs++;
    if (h >= 0 && !mon_started) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        mon_started = pthread_create(&t, &a, monitor_thread, NULL) == 0;
        pthread_attr_destroy(&a);
    }
    pthread_mutex_unlock(&mon_lock);
    return h;
}

void hcomp_monitor_unwatch(int h)
{
    if (h < 0 || h >= MAX_WATCHED)
        return;
    pthread_mutex_lock(&mon_lock);
    if (mon[h].refs > 0)
        mon[h].refs--;
    pthread_mutex_unlock(&mon_lock);
}

void hcomp_monitor_status(int h, hcomp_tier_status *out)
{
    if (h < 0 || h >= MAX_WATCHED) {
        memset(out, 0, sizeof(*out));
        return;
    }
    pthread_mutex_lock(&mon_lock);
    *out = mon[h].st;
    /* a loaded machine may delay the thread; only a status never taken or a second old
     * is refreshed here, on the write path (a failing write takes a tier out anyway) */
    int stale = out->updated == 0 || hcomp_now() - out->updated > 1.0;
    char dir[PATH_MAX];
    if (stale)
        memcpy(dir, mon[h].dir, sizeof(dir));
    pthread_mutex_unlock(&mon_lock);
    if (stale) {
        uint64_t queued = out->queued;
        probe(dir, out);        /* stale (the thread has not run yet): look now */
        out->queued = queued;
        pthread_mutex_lock(&mon_lock);
        if (mon[h].refs > 0 && strcmp(mon[h].dir, dir) == 0) {
            mon[h].st.available = out->available;
            mon[h].st.free_bytes = out->free_bytes;
            mon[h].st.updated = out->updated;
        }
        pthread_mutex_unlock(&mon_lock);
    }
}

void hcomp_monitor_queue(int h, int64_t delta)
{
    if (h < 0 || h >= MAX_WATCHED)
        return;
    pthread_mutex_lock(&mon_lock);
    if (delta < 0 && (uint64_t) (-delta) > mon[h].st.queued)
        mon[h].st.queued = 0;
    else
        mon[h].st.queued += (uint64_t) delta;
    pthread_mutex_unlock(&mon_lock);
}

#define DECAY 0.9

static double speed_of(const io_speed *s)
{
    return s->n >= HCOMP_MONITOR_MIN_OBS && s->seconds > 0 && s->bytes > 0 ? s->bytes / s->seconds : 0;
}

void hcomp_monitor_observe(int h, int is_write, uint64_t bytes, double seconds)
{
    if (h < 0 || h >= MAX_WATCHED || !(seconds >= 0) || (bytes > 0 && bytes < HCOMP_MONITOR_MIN_BYTES))
        return;
    pthread_mutex_lock(&mon_lock);
    io_speed *s = &mon[h].io[is_write ? 1 : 0];
    s->bytes = s->bytes * DECAY + (double) bytes;
    s->seconds = s->seconds * DECAY + seconds;
    s->n += bytes > 0;
    mon[h].st.read_Bps = speed_of(&mon[h].io[0]);
    mon[h].st.write_Bps = speed_of(&mon[h].io[1]);
    pthread_mutex_unlock(&mon_lock);
}

#define PROBE_BYTES (4u << 20)
#define PROBE_CHUNK (1u << 20)
#define PROBE_ROUNDS 3

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* Write, sync, drop from the page cache and read back PROBE_BYTES in dir, PROBE_ROUNDS
 * times (each round its own 4 MiB of the file, so each write allocates as the first did);
 * the median round's speeds of each direction: one round slowed by other I/O, or read
 * back from a cache the drop does not reach, does not decide the figure the node keeps. */
static int probe_speed(const char *dir, double *r, double *w)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/.hcomp-probe-%ld-%lx", dir, (long) getpid(),
                 (unsigned long) pthread_self()) >= (int) sizeof(path))
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    unlink(path);           /* nothing is left behind, whatever happens next */
    static unsigned char buf[PROBE_CHUNK];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char) (i * 2654435761u >> 13);
    int ok = 1;
    double rs[PROBE_ROUNDS], ws[PROBE_ROUNDS];
    for (int k = 0; ok && k < PROBE_ROUNDS; k++) {
        off_t base = (off_t) k * PROBE_BYTES;
        double t0 = hcomp_now();
        for (uint32_t off = 0; ok && off < PROBE_BYTES; off += PROBE_CHUNK)
            ok = pwrite(fd, buf, PROBE_CHUNK, base + off) == (ssize_t) PROBE_CHUNK;
        ok = ok && fdatasync(fd) == 0;
        double t1 = hcomp_now();
        (void) posix_fadvise(fd, base, PROBE_BYTES, POSIX_FADV_DONTNEED);
        double t2 = hcomp_now();
        for (uint32_t off = 0; ok && off < PROBE_BYTES; off += PROBE_CHUNK)
            ok = pread(fd, buf, PROBE_CHUNK, base + off) == (ssize_t) PROBE_CHUNK;
        double t3 = hcomp_now();
        ok = ok && t1 > t0 && t3 > t2;
        if (ok) {
            ws[k] = PROBE_BYTES / (t1 - t0);
            rs[k] = PROBE_BYTES / (t3 - t2);
        }
    }
    close(fd);
    if (!ok)
        return -1;
    qsort(rs, PROBE_ROUNDS, sizeof(rs[0]), cmp_double);
    qsort(ws, PROBE_ROUNDS, sizeof(ws[0]), cmp_double);
    *w = ws[PROBE_ROUNDS / 2];
    *r = rs[PROBE_ROUNDS / 2];
    return 0;
}

/* The probe of slot h's directory dir, its figures kept (run by the monitor thread): from
 * the node's cache when a process probed dir's file system within HCOMP_PROBE_MAX_AGE,
 * else probed here and cached; while another process of the node probes it, left for a
 * later pass. */
static void probe_speed_into(int h, const char *dir)
{
    double r = 0, w = 0;
    int lock_fd = -1;
    int c = hcomp_probe_cache_begin(dir, &r, &w, &lock_fd);
    if (c == HCOMP_PROBE_BUSY)
        return;
    if (c != HCOMP_PROBE_CACHED) {
        if (probe_speed(dir, &r, &w) != 0)
            r = w = 0;
        hcomp_probe_cache_end(lock_fd, r, w);
    }
    pthread_mutex_lock(&mon_lock);
    if (!mon[h].probed && strcmp(mon[h].dir, dir) == 0) {
        mon[h].probed = 1;      /* once, even if it failed: a directory we cannot write */
        mon[h].probe_read = r;
        mon[h].probe_write = w;
    }
    pthread_mutex_unlock(&mon_lock);
}

void hcomp_monitor_probe(int h, double *read_Bps, double *write_Bps)
{
    *read_Bps = *write_Bps = 0;
    if (h < 0 || h >= MAX_WATCHED)
        return;
    pthread_mutex_lock(&mon_lock);
    if (!mon[h].probed)
        mon[h].probe_wanted = 1;
    *read_Bps = mon[h].probe_read;
    *write_Bps = mon[h].probe_write;
    pthread_mutex_unlock(&mon_lock);
}
