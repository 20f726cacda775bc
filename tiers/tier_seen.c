/* What this process last saw of each capacity-limited tier: the bytes taken on it
 * (segments on disk plus every writer's outstanding reservation), as the last
 * ledger read or reservation by any of the process's files found them.
 *
 * A file's first placement used to read the ledger and scan the tier's segment
 * directories itself (20-30 us a tier, every new file); a process writing a series
 * of files now takes the figure another of its files saw less than a second ago,
 * the same age a file already accepts from its own cache. The figure follows the
 * process's own changes: a write moves bytes from a reservation to disk (no change), a
 * release or a deletion by the process subtracts what it freed, and anything else that
 * frees space (draining, a segment removed) forgets every figure. It never shows more
 * room than the tier has, but for block rounding and other processes' changes in that
 * second (as a file's own cache); the reservation, under the ledger's lock, is what
 * keeps a tier from overfilling. */
#include "../engine/file_internal.h"
#include "../engine/util.h"

#include <pthread.h>
#include <string.h>

#define SEEN_MAX 16
#define SEEN_MAX_AGE 1.0        /* seconds, as hcomp_tier_available's own cache */

typedef struct tier_seen {
    char base[PATH_MAX];        /* the tier's directory, as the files name it */
    uint64_t taken;
    double time;                /* hcomp_now() of the observation, 0: free slot */
    unsigned gen;
} tier_seen;

static tier_seen seen[SEEN_MAX];
static unsigned seen_gen = 1;   /* bumped when space is freed without an account */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static tier_seen *find(const char *base)
{
    for (int i = 0; i < SEEN_MAX; i++)
        if (seen[i].time > 0 && strcmp(seen[i].base, base) == 0)
            return &seen[i];
    return NULL;
}

void hcomp_tier_seen_set(const char *base, uint64_t taken)
{
    double now = hcomp_now();
    pthread_mutex_lock(&seen_lock);
    tier_seen *s = find(base);
    for (int i = 0; s == NULL && i < SEEN_MAX; i++)
        if (seen[i].time == 0 || now - seen[i].time > SEEN_MAX_AGE)
            s = &seen[i];
    if (s == NULL)              /* all fresh: the oldest goes */
        for (int i = 0; i < SEEN_MAX; i++)
            if (s == NULL || seen[i].time < s->time)
                s = &seen[i];
    if (strlen(base) < sizeof(s->base)) {
        memcpy(s->base, base, strlen(base) + 1);
        s->taken = taken;
        s->time = now;
        s->gen = seen_gen;
    }
    pthread_mutex_unlock(&seen_lock);
}

int hcomp_tier_seen_get(const char *base, uint64_t *taken, double *when)
{
    double now = hcomp_now();
    int ok = 0;
    pthread_mutex_lock(&seen_lock);
    tier_seen *s = find(base);
    if (s && s->gen == seen_gen && now - s->time < SEEN_MAX_AGE) {
        *taken = s->taken;
        *when = s->time;
        ok = 1;
    }
    pthread_mutex_unlock(&seen_lock);
    return ok;
}

void hcomp_tier_seen_freed(const char *base, uint64_t bytes)
{
    pthread_mutex_lock(&seen_lock);
    tier_seen *s = find(base);
    if (s)
        s->taken = s->taken > bytes ? s->taken - bytes : 0;
    pthread_mutex_unlock(&seen_lock);
}

void hcomp_tier_seen_forget_all(void)
{
    pthread_mutex_lock(&seen_lock);
    seen_gen++;
    pthread_mutex_unlock(&seen_lock);
}
