/* Telling an hcomp file from any other, and libhcomp's own calls from the program's.
 *
 * libhcomp opens and reads mapping files itself: those calls must see the files as
 * they are. They come from this object (its own copy of libhcomp, linked in with
 * hidden symbols) or from a libhcomp.so the program loaded (MPICH's hcomp driver in an
 * MPI program run under the adapter). The first is an address-range test; the second
 * (asked only when the file is an hcomp file) finds the object that exports
 * hcomp_file_open. */
#include "adapter.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

static uintptr_t own_lo, own_hi;
static pthread_once_t own_once = PTHREAD_ONCE_INIT;

static int find_own(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    uintptr_t me = (uintptr_t) data, lo = UINTPTR_MAX, hi = 0;
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
    if (me >= lo && me < hi) {
        own_lo = lo;
        own_hi = hi;
        return 1;
    }
    return 0;
}

static void own_init(void)
{
    dl_iterate_phdr(find_own, (void *) (uintptr_t) &own_init);
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

int hp_from_hcomp(const void *caller)
{
    if (hp_from_self(caller))
        return 1;
    /* a libhcomp.so of the program's: the object defining the exported hcomp_file_open
     * (this object's copy is hidden, so dlsym cannot find it) */
    void *sym = dlsym(RTLD_DEFAULT, "hcomp_file_open");
    Dl_info lib, at;
    return sym && dladdr(sym, &lib) && dladdr(caller, &at) && lib.dli_fbase == at.dli_fbase;
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
