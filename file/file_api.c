/* The public file operations: each holds the file's lock, so that the background
 * drain (file/drain.c) never sees the file half-updated. */
#include "file_internal.h"
#include "engine/manager.h"
#include "common/clock.h"
#include "common/util.h"

/* callers announce themselves first: the drain's steps stop for them (file/drain.c) */
#define LOCKED(f, call)                      \
    do {                                     \
        atomic_fetch_add(&(f)->callers, 1);  \
        pthread_mutex_lock(&(f)->lock);      \
        atomic_fetch_sub(&(f)->callers, 1);  \
        int rc_ = (call);                    \
        (f)->last_io = hcomp_now();          \
        pthread_mutex_unlock(&(f)->lock);    \
        return rc_;                          \
    } while (0)

/* the number compiled into the library, for a caller built against another header */
int hcomp_version_number(void)
{
    return HCOMP_VERSION_NUMBER;
}

int hcomp_file_pwrite(hcomp_file *f, const void *buf, uint64_t len, uint64_t off,
                      hcomp_error *err)
{
    LOCKED(f, hcomp_file_pwrite_locked(f, buf, len, off, err));
}

int hcomp_file_pwrite_buffered(hcomp_file *f, const void *buf, uint64_t len, uint64_t off,
                               hcomp_error *err)
{
    LOCKED(f, hcomp_file_pwrite_buffered_locked(f, buf, len, off, err));
}

int hcomp_file_flush(hcomp_file *f, hcomp_error *err)
{
    LOCKED(f, hcomp_wbuf_flush(f, err));
}

/* a read sees this handle's own buffered writes: they are written out first */
static int pread_flushed(hcomp_file *f, void *buf, uint64_t len, uint64_t off, uint64_t *nread,
                         hcomp_error *err)
{
    int rc = hcomp_wbuf_flush(f, err);
    if (rc != HCOMP_OK) {
        *nread = 0;
        return rc;
    }
    return hcomp_file_pread_locked(f, buf, len, off, nread, err);
}

int hcomp_file_pread(hcomp_file *f, void *buf, uint64_t len, uint64_t off, uint64_t *nread,
                     hcomp_error *err)
{
    LOCKED(f, pread_flushed(f, buf, len, off, nread, err));
}

int hcomp_file_size(hcomp_file *f, uint64_t *size, hcomp_error *err)
{
    LOCKED(f, hcomp_file_size_locked(f, size, err));
}

static int order_locked(hcomp_file *f, hcomp_error *err)
{
    hcomp_ok(err);
    int rc = hcomp_wlog_sync(f, err);
    return rc == HCOMP_OK ? hcomp_order_advance(f, err) : rc;
}

int hcomp_file_order(hcomp_file *f, hcomp_error *err)
{
    LOCKED(f, order_locked(f, err));
}

void hcomp_file_set_atomic(hcomp_file *f, int on)
{
    pthread_mutex_lock(&f->lock);
    f->atomic = on != 0;
    pthread_mutex_unlock(&f->lock);
}

int hcomp_file_truncate(hcomp_file *f, uint64_t size, hcomp_error *err)
{
    LOCKED(f, hcomp_file_truncate_locked(f, size, err));
}

int hcomp_file_extend(hcomp_file *f, uint64_t size, hcomp_error *err)
{
    LOCKED(f, hcomp_file_extend_locked(f, size, err));
}

int hcomp_file_sync(hcomp_file *f, hcomp_error *err)
{
    LOCKED(f, hcomp_file_sync_locked(f, err));
}

int hcomp_file_set_options(hcomp_file *f, const hcomp_options *opts, hcomp_error *err)
{
    LOCKED(f, hcomp_file_set_options_locked(f, opts, err));
}

int hcomp_file_close(hcomp_file *f, hcomp_error *err)
{
    if (f == NULL)
        return hcomp_file_close_locked(f, err);
    hcomp_drain_stop(f);        /* joins the drain thread: nobody else uses f now */
    return hcomp_file_close_locked(f, err);
}
