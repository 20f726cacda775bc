/* The input analyzer (HCompress IV-C): from a bounded sample of a buffer, its element
 * type (when the caller does not know it), the distribution class of its values, the
 * order-0 byte entropy and the ratio of a fast probe compressor.
 *
 * Sampling (SPIOC): three slices of 5% of the buffer, at its start, middle and end,
 * each clamped to [HCOMP_ANALYZE_SLICE_MIN, HCOMP_ANALYZE_SLICE_MAX] bytes and
 * 8-byte aligned (so elements are never cut); a buffer of at most
 * HCOMP_ANALYZE_MAX_SAMPLE bytes is looked at whole. Whatever the buffer's length, at
 * most 12 KiB are read, 256 values decoded, and lz4 (level 0) runs on the slices. */
#include "analyzer.h"
#include "hcomp_codec.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <gsl/gsl_statistics_double.h>

static const char *const dtype_names[HCOMP_DTYPE_COUNT] = {"bytes", "int32", "int64", "float",
                                                           "double"};
static const char *const dist_names[HCOMP_DIST_COUNT] = {"uniform", "normal", "exponential",
                                                         "gamma"};

const char *hcomp_dtype_name(int dtype)
{
    return dtype >= 0 && dtype < HCOMP_DTYPE_COUNT ? dtype_names[dtype] : "?";
}

const char *hcomp_dist_name(int dist)
{
    return dist >= 0 && dist < HCOMP_DIST_COUNT ? dist_names[dist] : "?";
}

int hcomp_dtype_from_name(const char *name)
{
    for (int i = 0; name != NULL && i < HCOMP_DTYPE_COUNT; i++)
        if (strcmp(name, dtype_names[i]) == 0)
            return i;
    return -1;
}

int hcomp_dist_from_name(const char *name)
{
    for (int i = 0; name != NULL && i < HCOMP_DIST_COUNT; i++)
        if (strcmp(name, dist_names[i]) == 0)
            return i;
    return -1;
}

/* ---- the sample ------------------------------------------------------------------- */

typedef struct sample {
    const unsigned char *p[3];
    size_t n[3];
    int count;
    size_t total;
} sample;

static void take_sample(const unsigned char *buf, size_t len, sample *s)
{
    memset(s, 0, sizeof(*s));
    if (len <= HCOMP_ANALYZE_MAX_SAMPLE) {
        s->p[0] = buf;
        s->n[0] = len;
        s->count = len > 0;
        s->total = len;
        return;
    }
    size_t slice = len / 20; /* 5% */
    if (slice < HCOMP_ANALYZE_SLICE_MIN)
        slice = HCOMP_ANALYZE_SLICE_MIN;
    if (slice > HCOMP_ANALYZE_SLICE_MAX)
        slice = HCOMP_ANALYZE_SLICE_MAX;
    slice &= ~(size_t) 7;
    for (int i = 0; i < 3; i++) {
        size_t start = ((len - slice) / 2 * (size_t) i) & ~(size_t) 7; /* start, middle, end */
        s->p[i] = buf + start;
        s->n[i] = slice;
    }
    s->count = 3;
    s->total = 3 * slice;
}

/* ---- entropy ------------------------------------------------------------------------ */

static void histogram(const unsigned char *s, size_t n, uint32_t h[4][256])
{
    /* Four interleaved tables: a run of equal bytes would otherwise serialise every
     * increment on one counter. */
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        h[0][s[i]]++;
        h[1][s[i + 1]]++;
        h[2][s[i + 2]]++;
        h[3][s[i + 3]]++;
    }
    for (; i < n; i++)
        h[0][s[i]]++;
}

/* c log2 c for the counts a sample's histogram holds: H = log2 n - sum(c log2 c) / n
 * without a log2 per distinct byte (256 of them cost as much as the histogram). */
#define CLOG2C_TABLE (HCOMP_ANALYZE_SLICE_MAX + 1)
static double clog2c_table[CLOG2C_TABLE];
static pthread_once_t clog2c_once = PTHREAD_ONCE_INIT;

static void clog2c_init(void)
{
    for (int c = 1; c < CLOG2C_TABLE; c++)
        clog2c_table[c] = c * log2((double) c);
}

double hcomp_entropy_of_counts(const uint32_t *count, size_t n)
{
    if (n == 0)
        return 0.0;
    pthread_once(&clog2c_once, clog2c_init);
    /* four sums: one would chain 256 additions of 4 cycles each */
    double sum[4] = {0.0, 0.0, 0.0, 0.0};
    if (n < CLOG2C_TABLE) {     /* no count above n: the table alone (twice as fast) */
        for (int b = 0; b < 256; b++)
            sum[b & 3] += clog2c_table[count[b]];
    } else {
        for (int b = 0; b < 256; b++) {
            uint32_t c = count[b];
            sum[b & 3] += c < CLOG2C_TABLE ? clog2c_table[c] : c * log2((double) c);
        }
    }
    double e = log2((double) n) - (sum[0] + sum[1] + sum[2] + sum[3]) / (double) n;
    return e < 0.0 ? 0.0 : e; /* a rounding below 0 for constant data */
}

static double entropy_of(uint32_t h[4][256], size_t n)
{
    uint32_t count[256];
    for (int b = 0; b < 256; b++)
        count[b] = h[0][b] + h[1][b] + h[2][b] + h[3][b];
    return hcomp_entropy_of_counts(count, n);
}

double hcomp_byte_entropy(const unsigned char *s, size_t n)
{
    uint32_t h[4][256];
    memset(h, 0, sizeof(h));
    histogram(s, n, h);
    return entropy_of(h, n);
}

/* ---- type inference ------------------------------------------------------------------ */

/* Counters of the byte patterns the heuristic looks at, accumulated over slices.
 * "nz" counts non-zero words: zeros say nothing about the type, so every fraction is
 * taken over the non-zero words (sparse data is judged by what is not zero). */
typedef struct type_votes {
    size_t bytes, text;
    size_t w8, f_nz[2], f_ok[2], d_nz, d_ok;
    size_t w8_nz, i64_fit, i64_48;
    size_t w4_nz, i32_27, i32_23;
    int f_exp_hist[256];
    int d_exp_hist[64]; /* double exponent / 32: a coarse histogram for the mode */
} type_votes;

static uint32_t load32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static int mode_of(const int *hist, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (hist[i] > hist[best])
            best = i;
    return best;
}

/* Type inference, in this order (the first that holds wins); "most" means >= 90% of
 * the non-zero words of that kind, and at least 16 of them (and 2% of all) must be
 * non-zero:
 *   text   >= 95% of the sampled bytes are printable ASCII or whitespace      -> bytes
 *   float  in both halves of the 8-byte words, most are finite normal floats whose
 *          exponent is within 8 of the most common one (doubles fail: the low halves
 *          of their words are mantissa bits, random or zero)
 *   double most 8-byte words are finite normal doubles whose exponent is within 48 of
 *          the most common one (integers fail: they read as denormals)
 *   int64  most 8-byte words fit in 32 bits (the high half is the sign extension of
 *          the low one), or most fit in 48 bits while their 4-byte halves are not
 *          mostly below 2^23 (as two small int32s would be)
 *   int32  most 4-byte words are below 2^27 in magnitude
 *   bytes  otherwise (random bytes, all zeros, wide integers, mixed records). */
static void vote(const unsigned char *s, size_t n, type_votes *v)
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint32_t lo = load32(s + i), hi = load32(s + i + 4);
        uint32_t w[2] = {lo, hi};
        for (int k = 0; k < 2; k++) {
            unsigned e = (w[k] >> 23) & 0xff;
            if ((w[k] & 0x7fffffffu) != 0 && e != 0 && e != 0xff)
                v->f_exp_hist[e]++;
            if (w[k] != 0) {
                int32_t iv = (int32_t) w[k];
                v->w4_nz++;
                v->i32_27 += iv >= -(1 << 27) && iv < (1 << 27);
                v->i32_23 += iv >= -(1 << 23) && iv < (1 << 23);
            }
        }
        uint64_t d = load64(s + i);
        unsigned de = (unsigned) (d >> 52) & 0x7ff;
        if ((d << 1) != 0 && de != 0 && de != 0x7ff)
            v->d_exp_hist[de >> 5]++;
        v->w8++;
        if (d != 0) {
            int32_t ihi = (int32_t) hi;
            v->w8_nz++;
            v->i64_fit += hi == ((int32_t) lo < 0 ? 0xffffffffu : 0u);
            v->i64_48 += ihi >= -(1 << 15) && ihi < (1 << 15);
        }
    }
}

/* Second pass for the exponent-window checks, once the modes are known. */
static void vote_windows(const unsigned char *s, size_t n, int f_mode, int d_mode, type_votes *v)
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        for (int k = 0; k < 2; k++) {
            uint32_t w = load32(s + i + 4 * (size_t) k);
            int e = (int) ((w >> 23) & 0xff);
            if ((w & 0x7fffffffu) == 0)
                continue;
            v->f_nz[k]++;
            v->f_ok[k] += e != 0 && e != 0xff && e >= f_mode - 8 && e <= f_mode + 8;
        }
        uint64_t d = load64(s + i);
        int de = (int) ((d >> 52) & 0x7ff);
        if ((d << 1) == 0)
            continue;
        v->d_nz++;
        v->d_ok += de != 0 && de != 0x7ff && de >= d_mode - 48 && de <= d_mode + 48;
    }
}

static int most(size_t yes, size_t of)
{
    return yes * 10 >= of * 9;
}

static int decide(const type_votes *v)
{
    if (v->bytes == 0 || v->text * 100 >= v->bytes * 95)
        return HCOMP_DTYPE_BYTES;
    size_t enough = v->w8 / 50 > 16 ? v->w8 / 50 : 16;
    if (v->f_nz[0] >= enough && v->f_nz[1] >= enough && most(v->f_ok[0], v->f_nz[0]) &&
        most(v->f_ok[1], v->f_nz[1]))
        return HCOMP_DTYPE_FLOAT;
    if (v->d_nz >= enough && most(v->d_ok, v->d_nz))
        return HCOMP_DTYPE_DOUBLE;
    if (v->w8_nz >= enough && (most(v->i64_fit, v->w8_nz) ||
                               (most(v->i64_48, v->w8_nz) && !most(v->i32_23, v->w4_nz))))
        return HCOMP_DTYPE_INT64;
    if (v->w4_nz >= enough && most(v->i32_27, v->w4_nz))
        return HCOMP_DTYPE_INT32;
    return HCOMP_DTYPE_BYTES;
}

/* Text is judged on the histogram of the whole sample, the word patterns on the first
 * HCOMP_ANALYZE_INFER_BYTES of each slice (plenty for a vote, and cheap). */
static int infer_sample(const sample *s, uint32_t h[4][256])
{
    type_votes v;
    memset(&v, 0, sizeof(v));
    v.bytes = s->total;
    for (int b = 0x20; b < 0x7f; b++)
        v.text += h[0][b] + h[1][b] + h[2][b] + h[3][b];
    v.text += h[0]['\n'] + h[1]['\n'] + h[2]['\n'] + h[3]['\n'];
    v.text += h[0]['\r'] + h[1]['\r'] + h[2]['\r'] + h[3]['\r'];
    v.text += h[0]['\t'] + h[1]['\t'] + h[2]['\t'] + h[3]['\t'];
    for (int i = 0; i < s->count; i++)
        vote(s->p[i], s->n[i] < HCOMP_ANALYZE_INFER_BYTES ? s->n[i] : HCOMP_ANALYZE_INFER_BYTES, &v);
    int f_mode = mode_of(v.f_exp_hist, 256);
    int d_mode = mode_of(v.d_exp_hist, 64) * 32 + 16;
    for (int i = 0; i < s->count; i++)
        vote_windows(s->p[i], s->n[i] < HCOMP_ANALYZE_INFER_BYTES ? s->n[i] : HCOMP_ANALYZE_INFER_BYTES,
                     f_mode, d_mode, &v);
    return decide(&v);
}

int hcomp_infer_dtype(const unsigned char *s, size_t n)
{
    sample smp;
    uint32_t h[4][256];
    memset(&smp, 0, sizeof(smp));
    take_sample(s, n, &smp);
    memset(h, 0, sizeof(h));
    for (int i = 0; i < smp.count; i++)
        histogram(smp.p[i], smp.n[i], h);
    return infer_sample(&smp, h);
}

/* ---- distribution ---------------------------------------------------------------- */

/* Rules, on location- and scale-free statistics (g1 skewness, g2 excess kurtosis, and
 * L = (mean - min) / sd, the distance of the minimum from the mean in standard
 * deviations, taken on the long tail's opposite side):
 *   |g1| < 0.5 (symmetric): uniform if g2 < -0.75 (uniform: -1.2, normal: 0), else normal;
 *   skewed: exponential if L < 1.3 (an exponential's minimum sits one sd below the mean),
 *           else gamma (gamma(k): L ~ sqrt(k) less a little; the profiler uses k = 3).
 * Skewed data of other shapes (log-normal, Pareto) lands in exponential or gamma,
 * flat-topped data in uniform, everything else symmetric in normal. */
int hcomp_classify_values(const double *v, size_t n)
{
    if (n < 8)
        return HCOMP_DIST_UNIFORM;
    /* The moments GSL's gsl_stats_{sd,skew,kurtosis}_m_sd define (sd with n - 1), summed
     * in two passes: GSL's running means divide once per value and per moment, which took
     * half of a whole analysis (5-10 us for 256 values). */
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / (double) n, m2 = 0.0, m3 = 0.0, m4 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = v[i] - mean, d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
    }
    double sd = sqrt(m2 / (double) (n - 1));
    if (!(sd > 0.0) || !isfinite(sd) || sd < 1e-12 * fabs(mean))
        return HCOMP_DIST_UNIFORM;
    double g1, g2;
    if (isfinite(m4)) {
        double sd2 = sd * sd;
        g1 = m3 / ((double) n * sd2 * sd);
        g2 = m4 / ((double) n * sd2 * sd2) - 3.0;
    } else { /* fourth powers overflowed (values beyond 1e77): GSL scales first */
        g1 = gsl_stats_skew_m_sd(v, 1, n, mean, sd);
        g2 = gsl_stats_kurtosis_m_sd(v, 1, n, mean, sd);
    }
    if (!isfinite(g1) || !isfinite(g2))
        return HCOMP_DIST_NORMAL;
    if (fabs(g1) < 0.5)
        return g2 < -0.75 ? HCOMP_DIST_UNIFORM : HCOMP_DIST_NORMAL;
    double lo, hi;
    gsl_stats_minmax(&lo, &hi, v, 1, n);
    double L = g1 > 0 ? (mean - lo) / sd : (hi - mean) / sd;
    return L < 1.3 ? HCOMP_DIST_EXPONENTIAL : HCOMP_DIST_GAMMA;
}

static size_t elem_size(int dtype)
{
    switch (dtype) {
        case HCOMP_DTYPE_INT32:
        case HCOMP_DTYPE_FLOAT:
            return 4;
        case HCOMP_DTYPE_INT64:
        case HCOMP_DTYPE_DOUBLE:
            return 8;
        default:
            return 1;
    }
}

static double decode(const unsigned char *p, int dtype)
{
    switch (dtype) {
        case HCOMP_DTYPE_INT32:
            return (double) (int32_t) load32(p);
        case HCOMP_DTYPE_INT64:
            return (double) (int64_t) load64(p);
        case HCOMP_DTYPE_FLOAT: {
            float f;
            memcpy(&f, p, 4);
            return (double) f;
        }
        case HCOMP_DTYPE_DOUBLE: {
            double d;
            memcpy(&d, p, 8);
            return d;
        }
        default:
            return (double) *p;
    }
}

/* Up to HCOMP_ANALYZE_MAX_VALUES values, evenly strided over the slices. */
static size_t gather_values(const sample *s, int dtype, double *out)
{
    size_t es = elem_size(dtype), total = 0;
    for (int i = 0; i < s->count; i++)
        total += s->n[i] / es;
    if (total == 0)
        return 0;
    size_t stride = (total + HCOMP_ANALYZE_MAX_VALUES - 1) / HCOMP_ANALYZE_MAX_VALUES;
    size_t n = 0;
    for (int i = 0; i < s->count; i++) {
        size_t ne = s->n[i] / es;
        for (size_t j = 0; j < ne && n < HCOMP_ANALYZE_MAX_VALUES; j += stride) {
            double x = decode(s->p[i] + j * es, dtype);
            if (isfinite(x))
                out[n++] = x;
        }
    }
    return n;
}

/* ---- probe -------------------------------------------------------------------------- */

static double probe_ratio(const sample *s)
{
    const hcomp_codec *lz4 = hcomp_codec_by_id(HCOMP_CODEC_LZ4);
    unsigned char dst[HCOMP_ANALYZE_SLICE_MAX + HCOMP_ANALYZE_SLICE_MAX / 255 + 64];
    size_t in = 0, outn = 0;
    for (int i = 0; i < s->count; i++) {
        /* Whole small buffers are probed in slice-sized pieces. */
        for (size_t off = 0; off < s->n[i]; off += HCOMP_ANALYZE_SLICE_MAX) {
            size_t n = s->n[i] - off;
            if (n > HCOMP_ANALYZE_SLICE_MAX)
                n = HCOMP_ANALYZE_SLICE_MAX;
            size_t clen = 0;
            if (lz4->compress(s->p[i] + off, n, dst, sizeof(dst), &clen, 0) != HCOMP_OK)
                clen = n;
            in += n;
            outn += clen;
        }
    }
    return outn > 0 ? (double) in / (double) outn : 1.0;
}

/* ---- the entry point ------------------------------------------------------------------ */

int hcomp_analyze(const void *buf, size_t len, int dtype_hint, hcomp_features *out)
{
    if (out == NULL || (buf == NULL && len > 0) || dtype_hint < -1 ||
        dtype_hint >= HCOMP_DTYPE_COUNT)
        return HCOMP_E_INVAL;
    sample s;
    take_sample(buf, len, &s);
    out->sampled = s.total;

    uint32_t h[4][256];
    memset(h, 0, sizeof(h));
    for (int i = 0; i < s.count; i++)
        histogram(s.p[i], s.n[i], h);
    out->dtype = dtype_hint >= 0 ? dtype_hint : infer_sample(&s, h);
    out->entropy = entropy_of(h, s.total);
    out->probe_ratio = s.total > 0 ? probe_ratio(&s) : 1.0;

    double values[HCOMP_ANALYZE_MAX_VALUES];
    size_t nv = gather_values(&s, out->dtype, values);
    out->dist = hcomp_classify_values(values, nv);
    return HCOMP_OK;
}

/* The shuffled form of buf (hcomp_filter_apply with typesize k) is never made: only the
 * bytes take_sample would pick from it are gathered, byte b of element i sitting at
 * b * (len / k) + i of the shuffled buffer (the len % k tail bytes stay where they are). */
int hcomp_analyze_shuffled(const void *buf, size_t len, unsigned k, const hcomp_features *plain,
                           hcomp_features *out)
{
    if (out == NULL || plain == NULL || (buf == NULL && len > 0) || (k != 4 && k != 8))
        return HCOMP_E_INVAL;
    static _Thread_local unsigned char gathered[HCOMP_ANALYZE_MAX_SAMPLE];
    const unsigned char *src = buf;
    sample s;
    take_sample(src, len, &s);
    size_t n = len / k, at = 0;
    for (int i = 0; i < s.count; i++) {
        size_t o = (size_t) (s.p[i] - src), end = o + s.n[i];
        s.p[i] = gathered + at;
        size_t b = n ? o / n : k, e = n ? o % n : 0; /* byte b of element e */
        while (o < end && b < k) {
            /* a run of byte b of consecutive elements: a strided copy with a constant
             * stride (a byte-at-a-time loop with its wrap test cost 10 us a sample) */
            size_t run = n - e < end - o ? n - e : end - o;
            const unsigned char *q = src + e * k + b;
            unsigned char *d = gathered + at;
            if (k == 8)
                for (size_t j = 0; j < run; j++)
                    d[j] = q[8 * j];
            else
                for (size_t j = 0; j < run; j++)
                    d[j] = q[4 * j];
            at += run;
            o += run;
            e += run;
            if (e == n) {
                e = 0;
                b++;
            }
        }
        for (; o < end; o++)
            gathered[at++] = src[o];
    }
    uint32_t h[4][256];
    memset(h, 0, sizeof(h));
    for (int i = 0; i < s.count; i++)
        histogram(s.p[i], s.n[i], h);
    out->sampled = s.total;
    out->dtype = plain->dtype;
    out->dist = plain->dist;    /* shuffled bytes are no values: the data's own class */
    out->entropy = entropy_of(h, s.total);
    out->probe_ratio = s.total > 0 ? probe_ratio(&s) : 1.0;
    return HCOMP_OK;
}

/* The features of buf as a bit-shuffling codec (blosc-lz4, blosc-zstd) sees it: the
 * byte-shuffled form's (shuffled: hcomp_analyze_shuffled's result), with the probe ratio
 * that of blosc-lz4 bit-shuffling elements of k bytes on the same sampled slices. Byte
 * statistics miss what a bit transpose finds (sign and exponent planes apart from noisy
 * low mantissa bits: particle positions go from 1.6 to 1.75), the probe sees it. */
static int analyze_typed(const void *buf, size_t len, unsigned k, unsigned codec, int shuffle,
                         const hcomp_features *shuffled, hcomp_features *out)
{
    if (out == NULL || shuffled == NULL || (buf == NULL && len > 0) || (k != 4 && k != 8))
        return HCOMP_E_INVAL;
    const hcomp_codec *bl = hcomp_codec_by_id(codec);
    static _Thread_local unsigned char dst[HCOMP_ANALYZE_MAX_SAMPLE + 64];
    sample s;
    take_sample(buf, len, &s);
    size_t in = 0, outn = 0;
    for (int i = 0; i < s.count; i++) {
        size_t clen = 0;
        if (bl->compress_typed(s.p[i], s.n[i], dst, sizeof dst, &clen, HCOMP_BITSHUFFLE_PROBE_LEVEL,
                               k, shuffle) != HCOMP_OK)
            clen = s.n[i];
        in += s.n[i];
        outn += clen;
    }
    *out = *shuffled;
    out->probe_ratio = outn > 0 ? (double) in / (double) outn : 1.0;
    return HCOMP_OK;
}

int hcomp_analyze_bitshuffled(const void *buf, size_t len, unsigned k,
                              const hcomp_features *shuffled, hcomp_features *out)
{
    return analyze_typed(buf, len, k, HCOMP_CODEC_BLOSC_LZ4, HCOMP_SHUFFLE_BIT, shuffled, out);
}

/* Bytedelta's gain is on smooth data (each byte plane's neighbours differ little), which
 * byte statistics see no better than bit-shuffled data: the probe does. */
int hcomp_analyze_bytedelta(const void *buf, size_t len, unsigned k,
                            const hcomp_features *shuffled, hcomp_features *out)
{
    return analyze_typed(buf, len, k, HCOMP_CODEC_BLOSC2_LZ4, HCOMP_SHUFFLE_BYTEDELTA, shuffled,
                         out);
}
