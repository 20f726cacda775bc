/*
 * A second LD_PRELOAD interposer, as Darshan's runtime or a sanitizer's is: it wraps the
 * calls that open, stat and read files, forwards each to the next definition
 * (dlsym(RTLD_NEXT): the hcomp adapter when it is preloaded after this one) and counts
 * them. Forwarding from here hides the original caller's address from the adapter,
 * which is what this test needs.
 *
 * build: gcc -shared -fPIC -o libinterposer.so interposer.c -ldl
 * At exit it prints "interposer: N calls" to standard error when HCOMP_TEST_INTERPOSER_SAY
 * is set, so that a test can tell that it was in the chain.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_long calls;

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
        fprintf(stderr, "interposer: %s not found\n", name);
        abort();
    }
    return f;
}

/* the count after the call keeps it from being a tail call, which would leave the
 * caller's address in place */
#define FORWARD(type, name, params, args)                   \
    type name params                                        \
    {                                                       \
        static type (*real) params;                         \
        if (real == NULL)                                   \
            real = (type (*) params) next(#name);           \
        type r = real args;                                 \
        atomic_fetch_add(&calls, 1);                        \
        return r;                                           \
    }

#define MODE_ARG(flags)                                     \
    mode_t mode = 0;                                        \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                  \
        va_list ap;                                         \
        va_start(ap, flags);                                \
        mode = (mode_t) va_arg(ap, int);                    \
        va_end(ap);                                         \
    }

#define FORWARD_OPEN(name)                                  \
    int name(const char *path, int flags, ...)              \
    {                                                       \
        static int (*real)(const char *, int, ...);         \
        if (real == NULL)                                   \
            real = (int (*)(const char *, int, ...)) next(#name); \
        MODE_ARG(flags);                                    \
        int r = real(path, flags, mode);                    \
        atomic_fetch_add(&calls, 1);                        \
        return r;                                           \
    }

#define FORWARD_OPENAT(name)                                \
    int name(int dirfd, const char *path, int flags, ...)   \
    {                                                       \
        static int (*real)(int, const char *, int, ...);    \
        if (real == NULL)                                   \
            real = (int (*)(int, const char *, int, ...)) next(#name); \
        MODE_ARG(flags);                                    \
        int r = real(dirfd, path, flags, mode);             \
        atomic_fetch_add(&calls, 1);                        \
        return r;                                           \
    }

FORWARD_OPEN(open)
FORWARD_OPEN(open64)
FORWARD_OPENAT(openat)
FORWARD_OPENAT(openat64)
FORWARD(int, stat, (const char *p, struct stat *st), (p, st))
FORWARD(int, lstat, (const char *p, struct stat *st), (p, st))
FORWARD(int, stat64, (const char *p, struct stat64 *st), (p, st))
FORWARD(int, lstat64, (const char *p, struct stat64 *st), (p, st))
FORWARD(int, fstatat, (int d, const char *p, struct stat *st, int fl), (d, p, st, fl))
FORWARD(int, fstatat64, (int d, const char *p, struct stat64 *st, int fl), (d, p, st, fl))
FORWARD(ssize_t, read, (int fd, void *b, size_t n), (fd, b, n))
FORWARD(ssize_t, pread, (int fd, void *b, size_t n, off_t o), (fd, b, n, o))
FORWARD(ssize_t, pread64, (int fd, void *b, size_t n, off_t o), (fd, b, n, o))
FORWARD(FILE *, fopen, (const char *p, const char *m), (p, m))
FORWARD(FILE *, fopen64, (const char *p, const char *m), (p, m))

__attribute__((destructor)) static void say(void)
{
    if (getenv("HCOMP_TEST_INTERPOSER_SAY"))
        fprintf(stderr, "interposer: %ld calls\n", (long) atomic_load(&calls));
}
