/* "zstd": one standard zstd frame per piece (content size recorded in the frame).
 * Levels 1..19, default 1: the "ultra" levels 20..22 need hundreds of MiB per
 * context and negative levels are what lz4 is for.
 *
 * Creating a ZSTD_CCtx/ZSTD_DCtx costs more than compressing a small piece, so each
 * thread keeps one of each. The thread-local pointer is the fast path; a pthread key
 * is registered only for its destructor, which frees the contexts when the thread
 * exits (otherwise every short-lived thread would leak them). */
#include <pthread.h>
#include <stdlib.h>
#include <zstd.h>
#include <zstd_errors.h>
#include "codecs_internal.h"

#define HC_ZSTD_LEVEL_MIN 1
#define HC_ZSTD_LEVEL_MAX 19
#define HC_ZSTD_LEVEL_DEFAULT 1

struct zstd_tls {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
};

static _Thread_local struct zstd_tls *zstd_tls_cur;
static pthread_once_t zstd_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t zstd_key;
static int zstd_key_ok;

static void zstd_tls_free(void *p)
{
    struct zstd_tls *t = p;
    ZSTD_freeCCtx(t->cctx);
    ZSTD_freeDCtx(t->dctx);
    free(t);
    zstd_tls_cur = NULL; /* destructors run on the exiting thread itself */
}

static void zstd_key_create(void)
{
    zstd_key_ok = pthread_key_create(&zstd_key, zstd_tls_free) == 0;
}

/* This thread's contexts, or NULL if out of memory. Without a key (it could not be
 * created) nothing could free them at thread exit, so *owned tells the caller to
 * free the returned set after use instead of caching it. */
static struct zstd_tls *zstd_tls_get(int *owned)
{
    *owned = 0;
    if (zstd_tls_cur != NULL)
        return zstd_tls_cur;
    pthread_once(&zstd_key_once, zstd_key_create);
    struct zstd_tls *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    if (zstd_key_ok && pthread_setspecific(zstd_key, t) == 0)
        zstd_tls_cur = t;
    else
        *owned = 1;
    return t;
}

static size_t zstd_bound(size_t src_len)
{
    /* Too large for zstd (an error, or a wrapped value in old versions): saturate;
     * compress rejects such inputs anyway. */
    size_t b = ZSTD_compressBound(src_len);
    return ZSTD_isError(b) || b < src_len ? SIZE_MAX : b;
}

static int zstd_compress(const void *src, size_t src_len, void *dst, size_t dst_cap,
                         size_t *dst_len, int level)
{
    unsigned char zs = 0, zd = 0;
    if (dst_len == NULL || !hcomp_codec_args_ok_(src, src_len, dst, dst_cap))
        return HCOMP_E_INVAL;
    level = hcomp_codec_level_(level, &hcomp_codec_zstd);
    int owned;
    struct zstd_tls *t = zstd_tls_get(&owned);
    if (t == NULL)
        return HCOMP_E_NOMEM;
    if (t->cctx == NULL && (t->cctx = ZSTD_createCCtx()) == NULL) {
        if (owned)
            zstd_tls_free(t);
        return HCOMP_E_NOMEM;
    }
    size_t r = ZSTD_compressCCtx(t->cctx, HCOMP_OUT_(dst, zd), dst_cap,
                                 HCOMP_IN_(src, zs), src_len, level);
    if (owned)
        zstd_tls_free(t);
    if (ZSTD_isError(r))
        return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? HCOMP_E_NOMEM
                                                                      : HCOMP_E_INVAL;
    *dst_len = r;
    return HCOMP_OK;
}

static int zstd_decompress(const void *src, size_t src_len, void *dst, size_t dst_len)
{
    unsigned char zs = 0, zd = 0;
    if (!hcomp_codec_args_ok_(src, src_len, dst, dst_len))
        return HCOMP_E_INVAL;
    const void *s = HCOMP_IN_(src, zs);
    /* Cheap early reject from the first frame header: a frame larger than dst can
     * never fit. (Smaller is not rejected here: src may hold several frames, and
     * frames without a recorded size are valid; the decoded size is checked below.) */
    unsigned long long fcs = ZSTD_getFrameContentSize(s, src_len);
    if (fcs == ZSTD_CONTENTSIZE_ERROR || (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs > dst_len))
        return HCOMP_E_CORRUPT;
    int owned;
    struct zstd_tls *t = zstd_tls_get(&owned);
    if (t == NULL)
        return HCOMP_E_NOMEM;
    if (t->dctx == NULL && (t->dctx = ZSTD_createDCtx()) == NULL) {
        if (owned)
            zstd_tls_free(t);
        return HCOMP_E_NOMEM;
    }
    /* Bounded by dst_len and src_len; trailing bytes that are not a frame fail. */
    size_t r = ZSTD_decompressDCtx(t->dctx, HCOMP_OUT_(dst, zd), dst_len, s, src_len);
    if (owned)
        zstd_tls_free(t);
    if (ZSTD_isError(r))
        return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? HCOMP_E_NOMEM
                                                                      : HCOMP_E_CORRUPT;
    return r == dst_len ? HCOMP_OK : HCOMP_E_CORRUPT;
}

const hcomp_codec hcomp_codec_zstd = {
    .id = HCOMP_CODEC_ZSTD,
    .name = "zstd",
    .level_min = HC_ZSTD_LEVEL_MIN, .level_max = HC_ZSTD_LEVEL_MAX,
    .level_default = HC_ZSTD_LEVEL_DEFAULT,
    .bound = zstd_bound,
    .compress = zstd_compress,
    .decompress = zstd_decompress,
};
