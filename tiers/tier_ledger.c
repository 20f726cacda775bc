/* Capacity reservations on a tier shared by many writers (processes, files).
 *
 * A tier's capacity is shared through a ledger file, <tier dir>/.hcomp-ledger,
 * locked with flock(2): each live writer has one line "host pid id bytes" with
 * the bytes it has reserved and not yet written. Room for a new reservation is
 * capacity - bytes on disk in the tier's segment directories - every other
 * writer's outstanding reservation. Writers reserve in chunks, so the lock is
 * taken rarely. Lines of writers that died (same host, pid gone) are dropped;
 * the file is removed when its last line goes. */
#include "tier_space.h"
#include "common/util.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LEDGER_NAME ".hcomp-ledger"
#define LEDGER_MAX_LINES 4096

typedef struct ledger_line {
    char host[64];
    long pid;
    unsigned long long id, bytes;
} ledger_line;

typedef struct ledger {
    int fd;
    char path[PATH_MAX];
    ledger_line *v;
    size_t n;
} ledger;

/* Open and lock the ledger, making sure the locked file is still the one at the
 * path (another writer may have removed it while we waited). A reader (shared
 * lock) does not create it: no ledger means no reservations, HCOMP_E_NOENT. */
static int ledger_lock(ledger *l, const char *dir, int shared, hcomp_error *err)
{
    snprintf(l->path, sizeof(l->path), "%s/%s", dir, LEDGER_NAME);
    for (int attempt = 0; attempt < 100; attempt++) {
        l->fd = open(l->path, shared ? O_RDONLY | O_NOFOLLOW | O_CLOEXEC
                                     : O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (l->fd < 0 && shared && errno == ENOENT)
            return HCOMP_E_NOENT;
        if (l->fd < 0)
            return hcomp_fail_errno(err, errno, "capacity ledger %s", l->path);
        while (flock(l->fd, shared ? LOCK_SH : LOCK_EX) != 0) {
            if (errno != EINTR) {
                int e = errno;
                close(l->fd);
                return hcomp_fail_errno(err, e, "locking capacity ledger %s", l->path);
            }
        }
        struct stat a, b;
        if (fstat(l->fd, &a) == 0 && lstat(l->path, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino)
            return HCOMP_OK;
        close(l->fd);
    }
    return hcomp_fail(err, HCOMP_E_IO, "capacity ledger %s keeps changing under us", l->path);
}

static int ledger_read(ledger *l, hcomp_error *err)
{
    struct stat st;
    if (fstat(l->fd, &st) != 0)
        return hcomp_fail_errno(err, errno, "capacity ledger %s", l->path);
    size_t size = (size_t) st.st_size;
    if (size > (size_t) LEDGER_MAX_LINES * 128)
        size = (size_t) LEDGER_MAX_LINES * 128;
    char *buf = malloc(size + 1);
    size_t cap = size / 8 + 2;      /* a line is at least 8 bytes */
    l->v = calloc(cap, sizeof(*l->v));
    l->n = 0;
    if (buf == NULL || l->v == NULL) {
        free(buf);
        return hcomp_fail(err, HCOMP_E_NOMEM, "out of memory");
    }
    long long got = hcomp_pread_full(l->fd, buf, size, 0);
    if (got < 0) {
        free(buf);
        return hcomp_fail_errno(err, errno, "reading capacity ledger %s", l->path);
    }
    buf[got] = '\0';
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line && l->n + 1 < cap;
         line = strtok_r(NULL, "\n", &save)) {
        ledger_line *e = &l->v[l->n];
        if (sscanf(line, "%63s %ld %llu %llu", e->host, &e->pid, &e->id, &e->bytes) == 4)
            l->n++;     /* a damaged line is dropped: at worst a reservation is forgotten */
    }
    free(buf);
    return HCOMP_OK;
}

static int ledger_write_unlock(ledger *l, hcomp_error *err)
{
    int rc = HCOMP_OK;
    if (l->n == 0) {
        unlink(l->path);    /* under the lock: waiters see the inode change and retry */
    } else {
        char *buf = malloc(l->n * 128 + 1);
        size_t len = 0;
        if (buf == NULL)
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "out of memory");
        for (size_t i = 0; buf && i < l->n; i++)
            len += (size_t) snprintf(buf + len, 128, "%s %ld %llu %llu\n", l->v[i].host,
                                     l->v[i].pid, l->v[i].id, l->v[i].bytes);
        if (buf && (ftruncate(l->fd, 0) != 0 || pwrite(l->fd, buf, len, 0) != (ssize_t) len))
            rc = hcomp_fail_errno(err, errno, "writing capacity ledger %s", l->path);
        free(buf);
    }
    free(l->v);
    close(l->fd);   /* releases the lock */
    return rc;
}

static void self_key(char host[64], long *pid)
{
    if (gethostname(host, 64) != 0)
        snprintf(host, 64, "localhost");
    host[63] = '\0';
    for (char *c = host; *c; c++)
        if (*c == ' ')
            *c = '_';
    *pid = (long) getpid();
}

/* A line of a writer on this host whose process is gone. */
static int line_dead(const ledger_line *e, const char *host, long pid)
{
    return strcmp(e->host, host) == 0 && e->pid != pid && kill((pid_t) e->pid, 0) != 0 &&
        errno == ESRCH;
}

static int line_mine(const ledger_line *e, const char *host, long pid, uint64_t id)
{
    return e->pid == pid && e->id == id && strcmp(e->host, host) == 0;
}

/* Set this writer's line to bytes (0 removes it), dropping dead writers' lines,
 * and return the sum of the other lines. */
static unsigned long long ledger_set(ledger *l, uint64_t id, uint64_t bytes)
{
    char host[64];
    long pid;
    self_key(host, &pid);
    unsigned long long others = 0;
    size_t k = 0;
    int found = 0;
    for (size_t i = 0; i < l->n; i++) {
        ledger_line *e = &l->v[i];
        if (line_dead(e, host, pid))
            continue;
        if (line_mine(e, host, pid, id)) {
            found = 1;
            if (bytes == 0)
                continue;
            e->bytes = bytes;
        } else
            others += e->bytes;
        l->v[k++] = *e;
    }
    l->n = k;
    if (!found && bytes > 0) {
        ledger_line *e = &l->v[l->n++];
        snprintf(e->host, sizeof(e->host), "%s", host);
        e->pid = pid;
        e->id = id;
        e->bytes = bytes;
    }
    return others;
}

/* The sum of the other live writers' lines, the ledger left as it is; *dead: whether
 * it holds lines of dead writers. */
static unsigned long long ledger_others(const ledger *l, uint64_t id, int *dead)
{
    char host[64];
    long pid;
    self_key(host, &pid);
    unsigned long long others = 0;
    *dead = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (line_dead(&l->v[i], host, pid))
            *dead = 1;
        else if (!line_mine(&l->v[i], host, pid, id))
            others += l->v[i].bytes;
    }
    return others;
}

/* Set this writer's line to bytes (0: remove it) and drop dead writers' lines (a killed
 * process's reservation), removing the ledger if none is left; best effort: 0 if the
 * ledger could not be locked and read (nothing changed), else 1. */
static int ledger_rewrite(const char *dir, uint64_t id, uint64_t bytes)
{
    ledger l;
    hcomp_error err;
    if (ledger_lock(&l, dir, 0, &err) != HCOMP_OK)
        return 0;
    if (ledger_read(&l, &err) != HCOMP_OK) {
        close(l.fd);
        free(l.v);
        return 0;
    }
    ledger_set(&l, id, bytes);
    ledger_write_unlock(&l, &err);
    return 1;
}

int hcomp_tier_reserve(hcomp_tier_writer *w, const hcomp_tier *tier, int sharers, uint64_t want,
                       hcomp_error *err)
{
    if (tier->capacity == UINT64_MAX || w->full)
        return HCOMP_OK;
    ledger l;
    int rc = ledger_lock(&l, w->base, 0, err);
    if (rc != HCOMP_OK)
        return rc;
    if ((rc = ledger_read(&l, err)) != HCOMP_OK) {
        close(l.fd);
        free(l.v);
        return rc;
    }
    uint64_t used = hcomp_tier_usage(w->base);
    unsigned long long others = ledger_set(&l, w->ledger_id, w->budget);
    uint64_t taken = used + others + w->budget;
    uint64_t avail = tier->capacity > taken ? tier->capacity - taken : 0;
    /* reserve in chunks (an eighth of the capacity per expected writer, at most
     * 16 MiB) so the lock is rare but no writer hoards a small tier */
    uint64_t chunk = tier->capacity / 8 / (uint64_t) sharers;
    if (chunk > (16u << 20))
        chunk = 16u << 20;
    uint64_t grant = want > chunk ? want : chunk;
    if (grant > avail)
        grant = avail;
    w->budget += grant;
    /* what hcomp_tier_available would read now: cache it rather than read it again */
    w->avail_cache = avail - grant;
    w->avail_time = hcomp_now();
    w->exhausted_at = grant == 0 ? hcomp_now() : 0;
    ledger_set(&l, w->ledger_id, w->budget);
    w->in_ledger = w->budget > 0;
    return ledger_write_unlock(&l, err);
}

uint64_t hcomp_tier_available(hcomp_tier_writer *w, const hcomp_tier *tier)
{
    if (tier->capacity == UINT64_MAX)
        return UINT64_MAX / 4;
    double now = hcomp_now();
    if (w->avail_time > 0 && now - w->avail_time < 1.0)
        return w->budget + w->avail_cache;
    /* a query: the ledger is read under a shared lock and left as it is unless it holds
     * dead writers' lines, and not created where there is none (creating and removing a
     * file costs 80-100 us on a disk file system, every new file) */
    ledger l;
    hcomp_error err;
    unsigned long long others = 0;
    int dead = 0;
    int rc = ledger_lock(&l, w->base, 1, &err);
    if (rc == HCOMP_OK) {
        rc = ledger_read(&l, &err);
        if (rc == HCOMP_OK)
            others = ledger_others(&l, w->ledger_id, &dead);
        free(l.v);
        close(l.fd);
        if (rc != HCOMP_OK)
            return w->budget;
        if (dead)   /* rare: a writer was killed; its line goes now, not at the next reservation */
            (void) ledger_rewrite(w->base, w->ledger_id, w->budget);
    } else if (rc != HCOMP_E_NOENT)
        return w->budget;
    uint64_t taken = hcomp_tier_usage(w->base) + others + w->budget;
    w->avail_cache = tier->capacity > taken ? tier->capacity - taken : 0;
    w->avail_time = now;
    return w->budget + w->avail_cache;
}

void hcomp_tier_release(hcomp_tier_writer *w, const hcomp_tier *tier)
{
    if (!w->ready || tier->capacity == UINT64_MAX || !w->in_ledger)
        return;
    if (!ledger_rewrite(w->base, w->ledger_id, 0))
        return;     /* the line goes when this process is found dead */
    w->budget = 0;
    w->in_ledger = 0;
}
