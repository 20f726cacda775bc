/* Which descriptors are hcomp files opened through the adapter, and what they share.
 *
 * A table indexed by descriptor number, as large as the hard limit on descriptors
 * (calloc'ed: pages never touched cost nothing): a call on any other descriptor costs
 * one load. Entries change under one mutex; an open description is freed when its
 * last descriptor is closed and no call is using it. */
#include "adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define TABLE_CAP (1 << 20)

static _Atomic(struct hp_open *) *table;
static int table_size;
static int high_water;           /* one past the highest descriptor ever ours */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void fork_child(void);

static void table_init(void)
{
    struct rlimit rl;
    rlim_t n = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max > n)
        n = rl.rlim_max;
    if (n > TABLE_CAP)
        n = TABLE_CAP;
    table = calloc((size_t) n, sizeof(*table));
    table_size = table ? (int) n : 0;
    pthread_atfork(NULL, NULL, fork_child);
}

static int in_table(int fd)
{
    pthread_once(&table_once, table_init);
    return fd >= 0 && fd < table_size;
}

int hp_is_ours(int fd)
{
    return in_table(fd) && atomic_load_explicit(&table[fd], memory_order_acquire) != NULL;
}

struct hp_open *hp_get(int fd)
{
    if (!in_table(fd) || atomic_load_explicit(&table[fd], memory_order_acquire) == NULL)
        return NULL;
    pthread_mutex_lock(&table_lock);
    struct hp_open *o = atomic_load_explicit(&table[fd], memory_order_relaxed);
    if (o)
        o->refs++;
    pthread_mutex_unlock(&table_lock);
    return o;
}

static void release(struct hp_open *o)
{
    if (o->file) {
        hp_lib_enter();
        hcomp_file_close(o->file, NULL);    /* read-only: nothing to lose */
        hp_lib_leave();
    }
    pthread_mutex_destroy(&o->lock);
    free(o->path);
    free(o);
}

void hp_put(struct hp_open *o)
{
    if (o == NULL)
        return;
    pthread_mutex_lock(&table_lock);
    int last = --o->refs == 0;
    pthread_mutex_unlock(&table_lock);
    if (last)
        release(o);
}

/* Swap fd's entry for o (NULL: none) and drop the reference the old entry held. */
static void set_entry(int fd, struct hp_open *o)
{
    if (!in_table(fd))
        return;
    pthread_mutex_lock(&table_lock);
    struct hp_open *old = atomic_load_explicit(&table[fd], memory_order_relaxed);
    if (o) {
        o->refs++;
        if (fd >= high_water)
            high_water = fd + 1;
    }
    atomic_store_explicit(&table[fd], o, memory_order_release);
    int last = old && --old->refs == 0;
    pthread_mutex_unlock(&table_lock);
    if (last)
        release(old);
}

void hp_forget(int fd)
{
    if (hp_is_ours(fd))
        set_entry(fd, NULL);
}

void hp_dup_entry(int oldfd, int newfd)
{
    struct hp_open *o = hp_get(oldfd);
    if (o || hp_is_ours(newfd))
        set_entry(newfd, o);
    hp_put(o);
}

int hp_open_file(const char *path, hcomp_file **out)
{
    hcomp_options *opts = hcomp_options_new();
    if (opts == NULL) {
        errno = ENOMEM;
        return -1;
    }
    /* reading needs no tiers: the segments' names are in the mapping file */
    hcomp_options_set(opts, "hcomp_config", "embedded", NULL);
    hcomp_error err;
    hp_lib_enter();
    int rc = hcomp_file_open(path, HCOMP_O_RDONLY, 0, 1, opts, out, &err);
    hp_lib_leave();
    hcomp_options_free(opts);
    if (rc != HCOMP_OK) {
        hp_say("%s", err.msg);
        errno = hp_errno_of(rc);
        return -1;
    }
    return 0;
}

int hp_adopt(int fd, int open_flags)
{
    int e;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0 || (size_t) n >= sizeof(path) - 1 || path[0] != '/') {
        e = errno ? errno : ENAMETOOLONG;
        hp_say("descriptor %d is an hcomp file, but its name cannot be found in /proc/self/fd (%s); "
               "it is not opened", fd, strerror(e));
        hp_real.close(fd);
        errno = EIO;
        return -1;
    }
    path[n] = '\0';
    if (!in_table(fd)) {
        hp_say("%s: descriptor %d is beyond what the adapter can track (%d); it is not opened",
               path, fd, table_size);
        hp_real.close(fd);
        errno = EMFILE;
        return -1;
    }
    struct hp_open *o = calloc(1, sizeof(*o));
    if (o == NULL || (o->path = strdup(path)) == NULL) {
        free(o);
        hp_real.close(fd);
        errno = ENOMEM;
        return -1;
    }
    pthread_mutex_init(&o->lock, NULL);
    o->status_flags = O_RDONLY | O_LARGEFILE | (open_flags & (O_NONBLOCK | O_NOATIME | O_DIRECT | O_SYNC | O_DSYNC));
    if (hp_open_file(path, &o->file) != 0)
        goto fail;
    /* the number stays the program's, but now names an O_PATH descriptor of the file */
    int pfd = hp_real.openat(AT_FDCWD, link, O_PATH | O_CLOEXEC);
    if (pfd < 0 || hp_real.dup3(pfd, fd, open_flags & O_CLOEXEC) < 0) {
        e = errno;
        if (pfd >= 0)
            hp_real.close(pfd);
        hp_say("%s: cannot make a descriptor for it (%s)", path, strerror(e));
        errno = e;
        goto fail;
    }
    hp_real.close(pfd);
    set_entry(fd, o);
    return fd;
fail:
    e = errno;
    hp_real.close(fd);
    o->refs = 1;
    hp_put(o);
    errno = e;
    return -1;
}

hcomp_file *hp_file(struct hp_open *o)
{
    if (o->file)
        return o->file;
    pthread_mutex_lock(&o->lock);
    if (o->file == NULL)
        hp_open_file(o->path, &o->file);
    pthread_mutex_unlock(&o->lock);
    if (o->file == NULL)
        errno = EIO;
    return o->file;
}

/* A forked child has the table and the descriptors but none of libhcomp's threads, and
 * its locks may have been held by threads that are gone: each file is opened anew on
 * first use (the parent's handles are left as they are, never touched). */
static void fork_child(void)
{
    pthread_mutex_init(&table_lock, NULL);
    for (int fd = 0; fd < high_water; fd++) {
        struct hp_open *o = atomic_load_explicit(&table[fd], memory_order_relaxed);
        if (o && o->file) {
            pthread_mutex_init(&o->lock, NULL);
            o->file = NULL;
        }
    }
}
