/* The openers' lock (docs/FORMAT.md, "Openers and reclaiming"): every opener holds a
 * shared lock on one byte of the mapping file, far beyond any logical offset, for as long
 * as the file is open; reclaiming space (removing segments, rewriting the log) needs the
 * exclusive lock, so it runs only when no process has the file open.
 *
 * Open file description locks (F_OFD_*), not flock(2): flock is already used on the whole
 * mapping file by delete and close, and ROMIO's own byte-range locks (atomic mode, data
 * sieving) are process-associated fcntl locks on logical offsets below 2^48, so neither
 * meets this byte. An OFD lock also stays with its descriptor: closing another descriptor
 * of the same file in the process does not drop it. */
#include "file_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#define OPEN_LOCK_OFFSET (INT64_C(1) << 62)
/* The write-back lock: the byte after it, held (shared) by every closed handle whose
 * pieces are still being moved off node-local tiers (file/writeback.c). Readers on other
 * nodes test it to know whether waiting for the move can help. */
#define DRAIN_LOCK_OFFSET (OPEN_LOCK_OFFSET + 1)

static int ofd_lock_at(int fd, off_t at, short type, int wait)
{
    struct flock l;
    memset(&l, 0, sizeof(l));
    l.l_type = type;
    l.l_whence = SEEK_SET;
    l.l_start = at;
    l.l_len = 1;
    int rc;
    while ((rc = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &l)) != 0 && errno == EINTR)
        ;
    return rc;
}

static int ofd_lock(int fd, short type, int wait)
{
    return ofd_lock_at(fd, (off_t) OPEN_LOCK_OFFSET, type, wait);
}

int hcomp_drain_lock_take(int fd)
{
    return ofd_lock_at(fd, (off_t) DRAIN_LOCK_OFFSET, F_RDLCK, 0);
}

int hcomp_drain_lock_held(int fd)
{
    struct flock l;
    memset(&l, 0, sizeof(l));
    l.l_type = F_WRLCK;         /* conflicts with any other description's shared lock */
    l.l_whence = SEEK_SET;
    l.l_start = (off_t) DRAIN_LOCK_OFFSET;
    l.l_len = 1;
    if (fcntl(fd, F_OFD_GETLK, &l) != 0)
        return -1;
    return l.l_type != F_UNLCK;
}

int hcomp_open_lock_shared(int fd)
{
    if (ofd_lock(fd, F_RDLCK, 1) == 0)
        return 0;
    /* no locks on this file system (ENOLCK, EINVAL...): the file is usable, but no one can
     * know it is not open elsewhere, so reclaiming will not run (hcomp_open_lock_exclusive
     * fails the same way) */
    return -1;
}

int hcomp_open_lock_exclusive(int fd, int wait)
{
    return ofd_lock(fd, F_WRLCK, wait);
}

int hcomp_open_lock_to_shared(int fd)
{
    return ofd_lock(fd, F_RDLCK, 0);
}

void hcomp_open_unlock(int fd)
{
    (void) ofd_lock(fd, F_UNLCK, 0);
}
