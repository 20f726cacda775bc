/* The POSIX read adapter (libhcomp_posix.so, loaded with LD_PRELOAD): a serial
 * program that opens an hcomp file by its name sees the plain file it stands for.
 * What it does and does not cover: docs/TOOLS.md "Reading hcomp files with serial tools";
 * how: docs/POSIX.md.
 *
 * An hcomp file opened for reading is held as an hcomp_file of libhcomp (this object's
 * own copy, hidden) behind an O_PATH descriptor of its mapping file: the number the
 * program gets is a real descriptor (close, dup, fcntl, poll work on it), but any call
 * the adapter does not handle (write, io_uring, a raw syscall) fails on it with EBADF
 * instead of returning the mapping file's bytes. Never wrong bytes. */
#ifndef HCOMP_POSIX_ADAPTER_H
#define HCOMP_POSIX_ADAPTER_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include "hcomp.h"

/* the functions this object puts in front of the C library's */
#define HP_EXPORT __attribute__((visibility("default")))
/* where the wrapper was called from: libhcomp's own calls pass straight through */
#define HP_CALLER __builtin_return_address(0)

/* ---- the C library's functions (real.c) --------------------------------- */
struct hp_real {
    int (*openat)(int, const char *, int, ...);
    ssize_t (*read)(int, void *, size_t);
    ssize_t (*pread)(int, void *, size_t, off_t);
    ssize_t (*readv)(int, const struct iovec *, int);
    ssize_t (*preadv)(int, const struct iovec *, int, off_t);
    ssize_t (*preadv2)(int, const struct iovec *, int, off_t, int);
    off_t (*lseek)(int, off_t, int);
    int (*close)(int);
    int (*close_range)(unsigned, unsigned, int);
    void (*closefrom)(int);
    int (*dup)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    int (*fcntl)(int, int, ...);
    int (*flock)(int, int);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    ssize_t (*sendfile)(int, int, off_t *, size_t);
    ssize_t (*copy_file_range)(int, off_t *, int, off_t *, size_t, unsigned);
    ssize_t (*splice)(int, off_t *, int, off_t *, size_t, unsigned);
    int (*fstat)(int, struct stat *);
    int (*fstatat)(int, const char *, struct stat *, int);
    int (*statx)(int, const char *, int, unsigned, struct statx *);
    FILE *(*fopen)(const char *, const char *);
    FILE *(*fdopen)(int, const char *);
    FILE *(*freopen)(const char *, const char *, FILE *);
};
extern struct hp_real hp_real;
/* Resolves hp_real (once; every wrapper calls it first). */
void hp_real_init(void);

/* ---- open hcomp files and the descriptor table (fd_table.c) -------------- */
struct hp_open {                 /* one open file description of an hcomp file */
    hcomp_file *file;            /* NULL in a forked child until first use */
    char *path;                  /* the mapping file's absolute name, for messages */
    pthread_mutex_t lock;        /* the offset, and reopening after fork */
    uint64_t offset;
    int status_flags;            /* what F_GETFL reports (O_RDONLY and O_NONBLOCK ...) */
    int refs;                    /* descriptors sharing it, plus calls using it */
};
/* The open description behind fd with a reference held, or NULL if fd is not one of
 * ours (the common case costs one load). */
struct hp_open *hp_get(int fd);
void hp_put(struct hp_open *o);
int hp_is_ours(int fd);
/* fd (open on an hcomp mapping file for reading) becomes ours: libhcomp opens the
 * file, fd is turned into an O_PATH descriptor of it. Returns fd, or -1 with errno
 * and a message (fd is then closed). */
int hp_adopt(int fd, int open_flags);
/* Descriptor newfd now refers to what oldfd does (after a successful dup of it);
 * an entry newfd had is dropped (it was closed by the dup). */
void hp_dup_entry(int oldfd, int newfd);
/* Forget fd (closed, or reused by a descriptor the adapter did not make). */
void hp_forget(int fd);
/* libhcomp's read-only open of the hcomp file at path (absolute); 0, or -1 with errno
 * and a message. */
int hp_open_file(const char *path, hcomp_file **out);
/* The file of o, reopened if this process is a fork child (NULL on failure, with
 * errno and a message). */
hcomp_file *hp_file(struct hp_open *o);

/* ---- reading (read.c) ---------------------------------------------------- */
ssize_t hp_pread(struct hp_open *o, void *buf, size_t len, uint64_t off);
ssize_t hp_read(struct hp_open *o, void *buf, size_t len);
off_t hp_lseek(struct hp_open *o, off_t off, int whence);
int hp_close(int fd);

/* ---- deciding (detect.c) ------------------------------------------------- */
/* True if the call came from libhcomp: this object's own copy (hp_from_self, one
 * comparison), or a libhcomp.so the program loaded (MPI's ROMIO driver; a lookup, so
 * asked only about hcomp files), whose opens of mapping files must see them as they
 * are. */
int hp_from_self(const void *caller);
/* Around every call of the adapter into libhcomp: the C library calls libhcomp makes
 * meanwhile on this thread pass straight through, even when another interposer (a
 * sanitizer, Darshan) sits between them and the adapter and hides the caller. */
void hp_lib_enter(void);
void hp_lib_leave(void);
int hp_from_hcomp(const void *caller);
/* 1 if fd (open for reading) is an hcomp mapping file, 0 if not (or unreadable). */
int hp_fd_is_hcomp(int fd);
/* 1 if dirfd/path names an existing hcomp file, 0 if not. */
int hp_path_is_hcomp(int dirfd, const char *path, int nofollow);
/* A message on standard error: "hcomp (LD_PRELOAD adapter): ...". */
void hp_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* errno for a libhcomp error code */
int hp_errno_of(int code);

/* ---- opening (open.c) ---------------------------------------------------- */
int hp_openat(int dirfd, const char *path, int flags, mode_t mode, const void *caller);

/* ---- sizes (stat.c) ------------------------------------------------------- */
/* The logical size of the hcomp file open for reading at probe_fd (cached by the
 * inode, size and times of its mapping file). 0, or -1 with errno and a message. */
int hp_logical_size(int probe_fd, uint64_t *size);

#endif
