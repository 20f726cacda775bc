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
    int probed;             /* 1: probe holds the probe's figures */
    int probe_wanted;       /* asked for: the thread runs it on its next pass */
    hcomp_probe_speeds probe;
} watched;

static pthread_mutex_t mon_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mon_wake;     /* a probe is wanted: the thread's pass starts now */
static int probe_asked;             /* a probe was wanted since the thread's last pass */
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
        /* the next pass in HCOMP_MONITOR_PERIOD_MS, or at once when a probe is wanted
         * (the plans meanwhile price the tier at a guess) */
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += HCOMP_MONITOR_PERIOD_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&mon_lock);
        while (!probe_asked && pthread_cond_timedwait(&mon_wake, &mon_lock, &until) == 0)
            ;
        probe_asked = 0;
        pthread_mutex_unlock(&mon_lock);
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
            memset(&mon[h].probe, 0, sizeof(mon[h].probe));
        }
    }
    if (h >= 0)
        mon[h].refs++;
    if (h >= 0 && !mon_started) {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&mon_wake, &ca);
        pthread_condattr_destroy(&ca);
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

/* One stream of a probe round: its own file, its PROBE_BYTES at base written and synced
 * (read 0), or read back (read 1); from a thread when the round has several streams. */
typedef struct probe_stream {
    int fd;
    off_t base;
    int read;
    int ok;
    unsigned char *buf;     /* PROBE_CHUNK bytes */
} probe_stream;

static void *stream_run(void *arg)
{
    probe_stream *s = arg;
    for (uint32_t off = 0; s->ok && off < PROBE_BYTES; off += PROBE_CHUNK)
        s->ok = (s->read ? pread(s->fd, s->buf, PROBE_CHUNK, s->base + off)
                         : pwrite(s->fd, s->buf, PROBE_CHUNK, s->base + off)) == (ssize_t) PROBE_CHUNK;
    s->ok = s->ok && (s->read || fdatasync(s->fd) == 0);
    return NULL;
}

/* Run n streams at once (the first on this thread); the seconds until the last is done,
 * or -1 when one failed. */
static double streams_run(probe_stream *s, int n, int read)
{
    pthread_t t[HCOMP_PROBE_STREAMS];
    int started[HCOMP_PROBE_STREAMS] = {0};
    double t0 = hcomp_now();
    for (int i = 0; i < n; i++) {
        s[i].read = read;
        s[i].ok = 1;
        if (i > 0)
            started[i] = pthread_create(&t[i], NULL, stream_run, &s[i]) == 0;
    }
    for (int i = 1; i < n; i++)
        if (!started[i])
            stream_run(&s[i]);
    stream_run(&s[0]);
    int ok = 1;
    for (int i = 0; i < n; i++) {
        if (started[i])
            pthread_join(t[i], NULL);
        ok = ok && s[i].ok;
    }
    double t1 = hcomp_now();
    return ok && t1 > t0 ? t1 - t0 : -1;
}

/* Write, sync, drop from the page cache and read back PROBE_BYTES in dir per stream, with
 * n streams at once (n files), PROBE_ROUNDS times (each round its own 4 MiB of each file,
 * so each write allocates as the first did); the median round's speeds of each direction,
 * all streams' bytes together: one round slowed by other I/O, or read back from a cache
 * the drop does not reach, does not decide the figure the node keeps. */
static int probe_speed(const char *dir, int n, double *r, double *w)
{
    probe_stream s[HCOMP_PROBE_STREAMS];
    int made = 0, ok = 1;
    for (; ok && made < n; made++) {
        char path[PATH_MAX];
        s[made].buf = NULL;
        s[made].fd = -1;
        ok = snprintf(path, sizeof(path), "%s/.hcomp-probe-%ld-%lx-%d", dir, (long) getpid(),
                      (unsigned long) pthread_self(), made) < (int) sizeof(path);
        if (ok)
            s[made].fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        ok = ok && s[made].fd >= 0;
        if (ok)
            unlink(path);   /* nothing is left behind, whatever happens next */
        s[made].buf = ok ? malloc(PROBE_CHUNK) : NULL;
        ok = ok && s[made].buf != NULL;
        for (size_t i = 0; ok && i < PROBE_CHUNK; i++)
            s[made].buf[i] = (unsigned char) ((i + (size_t) made * 977) * 2654435761u >> 13);
    }
    double rs[PROBE_ROUNDS], ws[PROBE_ROUNDS];
    for (int k = 0; ok && k < PROBE_ROUNDS; k++) {
        for (int i = 0; i < n; i++)
            s[i].base = (off_t) k * PROBE_BYTES;
        double tw = streams_run(s, n, 0);
        for (int i = 0; i < n; i++)
            (void) posix_fadvise(s[i].fd, s[i].base, PROBE_BYTES, POSIX_FADV_DONTNEED);
        double tr = tw > 0 ? streams_run(s, n, 1) : -1;
        ok = tw > 0 && tr > 0;
        if (ok) {
            ws[k] = (double) PROBE_BYTES * n / tw;
            rs[k] = (double) PROBE_BYTES * n / tr;
        }
    }
    for (int i = 0; i < made; i++) {
        if (s[i].fd >= 0)
            close(s[i].fd);
        free(s[i].buf);
    }
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
 * else probed here (one stream, then HCOMP_PROBE_STREAMS at once) and cached; while
 * another process of the node probes it, left for a later pass. */
static void probe_speed_into(int h, const char *dir)
{
    hcomp_probe_speeds p;
    memset(&p, 0, sizeof(p));
    int lock_fd = -1;
    int c = hcomp_probe_cache_begin(dir, &p, &lock_fd);
    if (c == HCOMP_PROBE_BUSY)
        return;
    if (c != HCOMP_PROBE_CACHED) {
        if (probe_speed(dir, 1, &p.read_Bps, &p.write_Bps) != 0)
            memset(&p, 0, sizeof(p));
        else if (probe_speed(dir, HCOMP_PROBE_STREAMS, &p.read_all_Bps, &p.write_all_Bps) != 0)
            p.read_all_Bps = p.write_all_Bps = 0;   /* one stream's figures still stand */
        hcomp_probe_cache_end(lock_fd, &p);
    }
    pthread_mutex_lock(&mon_lock);
    if (!mon[h].probed && strcmp(mon[h].dir, dir) == 0) {
        mon[h].probed = 1;      /* once, even if it failed: a directory we cannot write */
        mon[h].probe = p;
    }
    pthread_mutex_unlock(&mon_lock);
}

void hcomp_monitor_probe(int h, hcomp_probe_speeds *out)
{
    memset(out, 0, sizeof(*out));
    if (h < 0 || h >= MAX_WATCHED)
        return;
    pthread_mutex_lock(&mon_lock);
    if (!mon[h].probed && !mon[h].probe_wanted) {
        /* the first ask: a probe the node has cached is taken now, so that no plan of
         * this process prices the tier at a guess meanwhile (the thread's next pass was up
         * to HCOMP_MONITOR_PERIOD_MS away, a short job's first writes) */
        char dir[PATH_MAX];
        memcpy(dir, mon[h].dir, sizeof(dir));
        mon[h].probe_wanted = 1;
        pthread_mutex_unlock(&mon_lock);
        hcomp_probe_speeds p;
        int cached = hcomp_probe_cache_peek(dir, &p);
        pthread_mutex_lock(&mon_lock);
        if (cached && !mon[h].probed && strcmp(mon[h].dir, dir) == 0) {
            mon[h].probed = 1;
            mon[h].probe = p;
        } else if (!mon[h].probed) {
            probe_asked = 1;
            pthread_cond_signal(&mon_wake);
        }
    }
    *out = mon[h].probe;
    pthread_mutex_unlock(&mon_lock);
}
