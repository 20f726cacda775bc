/* The C library's versions of the functions the adapter wraps, found once with
 * dlsym(RTLD_NEXT): whatever comes after this object (libc, or another interposer
 * preloaded after it). */
#include "adapter.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

struct hp_real hp_real;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define FIND(name) (*(void **) &hp_real.name = dlsym(RTLD_NEXT, #name))

static void resolve(void)
{
    FIND(openat);
    FIND(read);
    FIND(pread);
    FIND(readv);
    FIND(preadv);
    FIND(preadv2);
    FIND(lseek);
    FIND(close);
    FIND(close_range);
    FIND(closefrom);
    FIND(dup);
    FIND(dup2);
    FIND(dup3);
    FIND(fcntl);
    FIND(flock);
    FIND(mmap);
    FIND(sendfile);
    FIND(copy_file_range);
    FIND(splice);
    FIND(fstat);
    FIND(fstatat);
    FIND(statx);
    FIND(fopen);
    FIND(fdopen);
    FIND(freopen);
    /* without these the adapter cannot pass calls on: better to stop at once, saying
     * why, than to break the program later */
    if (!hp_real.openat || !hp_real.read || !hp_real.pread || !hp_real.close ||
        !hp_real.fstat || !hp_real.fstatat || !hp_real.lseek || !hp_real.fcntl ||
        !hp_real.dup || !hp_real.dup3 || !hp_real.mmap || !hp_real.fopen) {
        static const char msg[] = "hcomp (LD_PRELOAD adapter): the C library's open, read, "
                                  "close, fstat... were not found; unset LD_PRELOAD\n";
        ssize_t w = write(2, msg, sizeof(msg) - 1);
        (void) w;
        abort();
    }
}

void hp_real_init(void)
{
    pthread_once(&once, resolve);
}
