/* The profiler's data generator. Every buffer is: n draws from the distribution,
 * a random location and scale (so the analyzer never sees one fixed range), a shape
 * applied to the draws, and an encoding into the element type. The parameters are
 * listed in docs/SEED.md. */
#include "datagen.h"
#include "hcomp_model.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>

static const char *const shape_names[HCOMP_GEN_SHAPE_COUNT] = {
    "iid", "quant", "sorted", "walk", "smooth", "runs", "sparse", "text"};

const char *hcomp_gen_shape_name(int shape)
{
    return shape >= 0 && shape < HCOMP_GEN_SHAPE_COUNT ? shape_names[shape] : "?";
}

int hcomp_gen_shape_from_name(const char *name)
{
    for (int i = 0; name != NULL && i < HCOMP_GEN_SHAPE_COUNT; i++)
        if (strcmp(name, shape_names[i]) == 0)
            return i;
    return -1;
}

#define GAMMA_SHAPE 3.0

double hcomp_gen_draw(gsl_rng *r, int dist)
{
    switch (dist) {
        case HCOMP_DIST_NORMAL:
            return gsl_ran_gaussian(r, 1.0);
        case HCOMP_DIST_EXPONENTIAL:
            return gsl_ran_exponential(r, 1.0);
        case HCOMP_DIST_GAMMA:
            return gsl_ran_gamma(r, GAMMA_SHAPE, 1.0);
        default:
            return gsl_ran_flat(r, 0.0, 1.0);
    }
}

static double dist_mean(int dist)
{
    switch (dist) {
        case HCOMP_DIST_NORMAL:
            return 0.0;
        case HCOMP_DIST_EXPONENTIAL:
            return 1.0;
        case HCOMP_DIST_GAMMA:
            return GAMMA_SHAPE;
        default:
            return 0.5;
    }
}

static const char *const words[] = {
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
    "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has",
    "there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "time",
    "energy", "particle", "field", "velocity", "pressure", "density", "temperature", "mesh",
    "cell", "node", "rank", "step", "iteration", "solver", "residual", "converged", "error",
    "warning", "checkpoint", "restart", "output", "input", "value", "vector", "matrix",
    "boundary", "condition", "flux", "mass", "momentum", "species", "reaction", "rate",
    "simulation", "model", "data", "file", "write", "read", "open", "close", "buffer",
    "memory", "storage", "tier", "compression", "ratio", "speed", "bandwidth", "latency",
    "north", "south", "east", "west", "red", "green", "blue", "small", "large", "first",
    "last", "new", "old", "high", "low", "left", "right", "inner", "outer", "total", "mean",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

/* Text: words chosen by the draws (a skewed distribution gives Zipf-like text),
 * sometimes a number, a newline every 8..16 words. */
static void fill_text(gsl_rng *r, int dist, unsigned char *buf, size_t len)
{
    size_t o = 0;
    unsigned line = 0, line_len = 8 + (unsigned) gsl_rng_uniform_int(r, 9);
    double m = dist_mean(dist) + 1.0;
    while (o < len) {
        char tmp[32];
        const char *w;
        double x = hcomp_gen_draw(r, dist);
        if (gsl_rng_uniform(r) < 0.05) {
            snprintf(tmp, sizeof(tmp), "%.4g", x * 1000.0);
            w = tmp;
        } else {
            double u = fabs(x) / (2.0 * m);
            size_t i = (size_t) (u * NWORDS);
            w = words[i < NWORDS ? i : NWORDS - 1];
        }
        for (const char *c = w; *c && o < len; c++)
            buf[o++] = (unsigned char) *c;
        if (o < len)
            buf[o++] = (++line % line_len == 0) ? '\n' : ' ';
    }
}

static void apply_shape(gsl_rng *r, int dist, int shape, double *v, size_t n)
{
    switch (shape) {
        case HCOMP_GEN_SORTED:
            gsl_sort(v, 1, n);
            break;
        case HCOMP_GEN_WALK: {
            double m = dist_mean(dist), acc = 0.0;
            for (size_t i = 0; i < n; i++) {
                acc += v[i] - m;
                v[i] = acc;
            }
            break;
        }
        case HCOMP_GEN_SMOOTH: {
            size_t w = 8 + gsl_rng_uniform_int(r, 57); /* window 8..64 */
            double acc = 0.0;
            double *src = malloc(n * sizeof(double));
            if (src == NULL)
                break;
            memcpy(src, v, n * sizeof(double));
            for (size_t i = 0; i < n; i++) {
                acc += src[i];
                if (i >= w)
                    acc -= src[i - w];
                v[i] = acc / (double) (i + 1 < w ? i + 1 : w);
            }
            free(src);
            break;
        }
        case HCOMP_GEN_RUNS:
            for (size_t i = 0; i < n;) {
                size_t k = 2 + gsl_rng_uniform_int(r, 31);
                for (size_t j = 1; j < k && i + j < n; j++)
                    v[i + j] = v[i];
                i += k;
            }
            break;
        case HCOMP_GEN_SPARSE:
            for (size_t i = 0; i < n; i++)
                if (gsl_rng_uniform(r) < 0.9)
                    v[i] = NAN; /* zero after encoding */
            break;
        default:
            break;
    }
}

static double clampd(double x, double lo, double hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

int hcomp_gen_fill(gsl_rng *r, int dtype, int dist, int shape, unsigned char *buf, size_t len)
{
    if (r == NULL || (buf == NULL && len > 0) || dtype < 0 || dtype >= HCOMP_DTYPE_COUNT ||
        dist < 0 || dist >= HCOMP_DIST_COUNT || shape < 0 || shape >= HCOMP_GEN_SHAPE_COUNT)
        return -1;
    memset(buf, 0, len);
    if (shape == HCOMP_GEN_TEXT) {
        fill_text(r, dist, buf, len);
        return 0;
    }
    size_t es = dtype == HCOMP_DTYPE_BYTES ? 1 : (dtype == HCOMP_DTYPE_INT32 ||
                                                  dtype == HCOMP_DTYPE_FLOAT) ? 4 : 8;
    size_t n = len / es;
    if (n == 0)
        return 0;
    double *v = malloc(n * sizeof(double));
    if (v == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = hcomp_gen_draw(r, dist);
    apply_shape(r, dist, shape, v, n);

    /* Location and scale: random per buffer, chosen per type so the values fit. */
    double scale, loc;
    int quant = shape == HCOMP_GEN_QUANT;
    switch (dtype) {
        case HCOMP_DTYPE_BYTES: {
            static const double byte_scale[HCOMP_DIST_COUNT] = {256.0, 32.0, 24.0, 16.0};
            scale = byte_scale[dist];
            loc = dist == HCOMP_DIST_NORMAL ? 128.0 : 0.0;
            break;
        }
        case HCOMP_DTYPE_INT32:
            scale = quant ? pow(10.0, gsl_rng_uniform(r) * 1.5) : pow(10.0, 0.5 + gsl_rng_uniform(r) * 5.5);
            loc = gsl_rng_uniform(r) < 0.5 ? 0.0 : floor(gsl_rng_uniform(r) * 2000.0 - 1000.0);
            break;
        case HCOMP_DTYPE_INT64:
            scale = quant ? pow(10.0, gsl_rng_uniform(r) * 1.5) : pow(10.0, 0.5 + gsl_rng_uniform(r) * 11.5);
            loc = gsl_rng_uniform(r) < 0.5 ? 0.0 : floor(gsl_rng_uniform(r) * 2e6 - 1e6);
            break;
        default:
            scale = pow(10.0, gsl_rng_uniform(r) * 6.0 - 2.0);
            loc = gsl_rng_uniform(r) < 0.5 ? 0.0 : scale * (gsl_rng_uniform(r) * 20.0 - 10.0);
            break;
    }
    int keep_bits = 2 + (int) gsl_rng_uniform_int(r, 11); /* quant floats: 2..12 mantissa bits */

    for (size_t i = 0; i < n; i++) {
        unsigned char *p = buf + i * es;
        if (isnan(v[i]))
            continue; /* sparse: stays zero */
        double x = loc + scale * v[i];
        switch (dtype) {
            case HCOMP_DTYPE_BYTES:
                *p = (unsigned char) clampd(floor(x), 0.0, 255.0);
                if (quant)
                    *p &= 0xf0; /* 16 distinct values */
                break;
            case HCOMP_DTYPE_INT32: {
                int32_t iv = (int32_t) clampd(llround(x), -2147483648.0, 2147483647.0);
                memcpy(p, &iv, 4);
                break;
            }
            case HCOMP_DTYPE_INT64: {
                int64_t iv = (int64_t) clampd(x, -9.2e18, 9.2e18);
                memcpy(p, &iv, 8);
                break;
            }
            case HCOMP_DTYPE_FLOAT: {
                float f = (float) x;
                if (quant) {
                    uint32_t u;
                    memcpy(&u, &f, 4);
                    u &= ~((1u << (23 - keep_bits)) - 1u);
                    memcpy(&f, &u, 4);
                }
                memcpy(p, &f, 4);
                break;
            }
            default: {
                if (quant) {
                    uint64_t u;
                    memcpy(&u, &x, 8);
                    u &= ~((UINT64_C(1) << (52 - keep_bits)) - 1u);
                    memcpy(&x, &u, 8);
                }
                memcpy(p, &x, 8);
                break;
            }
        }
    }
    free(v);
    return 0;
}
