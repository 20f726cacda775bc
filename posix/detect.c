/* Telling an hcomp file from any other, and libhcomp's own calls from the program's.
 *
 * libhcomp opens and reads mapping files itself: those calls must see the files as
 * they are. They come from this object (its own copy of libhcomp, linked in with
 * hidden symbols) or from a libhcomp.so the program loaded (MPICH's hcomp driver in an
 * MPI program run under the adapter). The first is an address-range test; the second
 * (asked only when the file is an hcomp file) finds the object that exports
 * hcomp_file_open, and looks for it among all the callers when another interposer
 * stands between. */
#include "adapter.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static uintptr_t own_lo, own_hi;
static pthread_once_t own_once = PTHREAD_ONCE_INIT;

/* the PT_LOAD range of the loaded object holding address `at` */
struct range {
    uintptr_t at, lo, hi;
};

static int find_range(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    struct range *r = data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (r->at >= lo && r->at < hi) {
        r->lo = lo;
        r->hi = hi;
        return 1;
    }
    return 0;
}

static void own_init(void)
{
    struct range r = {(uintptr_t) &own_init, 0, 0};
    dl_iterate_phdr(find_range, &r);
    own_lo = r.lo;
    own_hi = r.hi;
}

static __thread int lib_depth;

void hp_lib_enter(void)
{
    lib_depth++;
}

void hp_lib_leave(void)
{
    lib_depth--;
}

int hp_from_self(const void *caller)
{
    if (lib_depth > 0)
        return 1;
    pthread_once(&own_once, own_init);
    uintptr_t a = (uintptr_t) caller;
    return a >= own_lo && a < own_hi;
}

/* A libhcomp.so of the program's (MPICH's hcomp driver links it): the object defining
 * the exported hcomp_file_open (this object's copy is hidden, so dlsym cannot find it).
 * Looked for until found: Python's mpi4py, for one, loads libmpi late. */
static _Atomic uintptr_t lib_lo, lib_hi;

static int lib_range(uintptr_t *lo, uintptr_t *hi)
{
    *lo = atomic_load(&lib_lo);
    *hi = atomic_load(&lib_hi);
    if (*hi != 0)
        return 1;
    void *sym = dlsym(RTLD_DEFAULT, "hcomp_file_open");
    struct range r = {(uintptr_t) sym, 0, 0};
    if (sym == NULL || !dl_iterate_phdr(find_range, &r))
        return 0;
    atomic_store(&lib_lo, r.lo);
    atomic_store(&lib_hi, r.hi);
    *lo = r.lo;
    *hi = r.hi;
    return 1;
}

#define HP_FRAMES 64
#define OWN(a) ((uintptr_t) (a) >= own_lo && (uintptr_t) (a) < own_hi)

int hp_from_hcomp(const void *caller)
{
    if (hp_from_self(caller))
        return 1;
    uintptr_t lo, hi;
    int lib = lib_range(&lo, &hi);
    if (lib && (uintptr_t) caller >= lo && (uintptr_t) caller < hi)
        return 1;
    /* Another interposer (Darshan's runtime, a sanitizer's) between libhcomp and this
     * object calls us itself, hiding the caller's address; so do libhcomp's own worker
     * threads' calls through it. A call is libhcomp's if libhcomp is anywhere among its
     * callers: libhcomp calls no code of the program's. Asked only of calls on hcomp
     * files. */
    void *frames[HP_FRAMES];
    int n = backtrace(frames, HP_FRAMES), i = 0;
    /* on top: this wrapper's frames, under a sanitizer after the frame of its own
     * backtrace */
    while (i < n && !OWN(frames[i]))
        i++;
    while (i < n && OWN(frames[i]))
        i++;
    for (; i < n; i++)
        if (OWN(frames[i]) || (lib && (uintptr_t) frames[i] >= lo && (uintptr_t) frames[i] < hi))
            return 1;
    return 0;
}

/* the first backtrace loads the unwinder (dlopen): done at start, rather than inside
 * a wrapped call */
__attribute__((constructor)) static void detect_init(void)
{
    pthread_once(&own_once, own_init);
    void *frames[2];
    (void) backtrace(frames, 2);
}

int hp_fd_is_hcomp(int fd)
{
    int kind;
    hcomp_error err;
    hp_lib_enter();
    int rc = hcomp_file_kind_fd(fd, &kind, &err);
    hp_lib_leave();
    return rc == HCOMP_OK && kind == HCOMP_FILE_KIND_HCOMP;
}

int hp_path_is_hcomp(int dirfd, const char *path, int nofollow)
{
    int fd = hp_real.openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
                            (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0)
        return 0;
    int is = hp_fd_is_hcomp(fd);
    hp_real.close(fd);
    return is;
}

void hp_say(const char *fmt, ...)
{
    char buf[2048];
    int n = snprintf(buf, sizeof(buf), "hcomp (LD_PRELOAD adapter): ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof(buf) - (size_t) n - 1, fmt, ap);
    va_end(ap);
    n = m < 0 ? n : (n + m < (int) sizeof(buf) - 1 ? n + m : (int) sizeof(buf) - 2);
    buf[n++] = '\n';
    int saved = errno;
    for (ssize_t off = 0, w; off < n; off += w)
        if ((w = write(2, buf + off, (size_t) (n - off))) <= 0)
            break;
    errno = saved;
}

int hp_errno_of(int code)
{
    switch (code) {
    case HCOMP_E_NOENT:
        return ENOENT;
    case HCOMP_E_ACCESS:
        return EACCES;
    case HCOMP_E_NOMEM:
        return ENOMEM;
    case HCOMP_E_NAME:
        return ENAMETOOLONG;
    case HCOMP_E_INVAL:
        return EINVAL;
    default:            /* damaged, unreadable, a version this library cannot read */
        return EIO;
    }
}
