/* hcomp-profile's core: plans of training cases, measurements, the fit, the accuracy
 * report, and the tier benchmark. docs/SEED.md describes the data and the method. */
#include "profile_core.h"
#include "datagen.h"
#include "common/util.h"
#include "engine/analyzer.h"
#include "engine/filter.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>

#define KIB ((size_t) 1024)
#define MIB (KIB * KIB)
#define MAX_REPS 200

double hcomp_profile_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

size_t hcomp_profile_default_models(hcomp_model_id *out, size_t cap)
{
    static const hcomp_model_id list[] = {
        {HCOMP_CODEC_NONE, 0},  {HCOMP_CODEC_LZ4, 1},    {HCOMP_CODEC_LZ4, 9},
        {HCOMP_CODEC_ZSTD, 1},  {HCOMP_CODEC_ZSTD, 3},   {HCOMP_CODEC_ZSTD, 9},
        {HCOMP_CODEC_ZLIB, 1},  {HCOMP_CODEC_ZLIB, 6},   {HCOMP_CODEC_BZIP2, 9},
        {HCOMP_CODEC_BROTLI, 1}, {HCOMP_CODEC_BROTLI, 5}, {HCOMP_CODEC_SNAPPY, 0},
        {HCOMP_CODEC_LZMA, 1},
        {HCOMP_CODEC_BLOSC_LZ4, 5}, {HCOMP_CODEC_BLOSC_ZSTD, 1}, {HCOMP_CODEC_BLOSC_ZSTD, 5},
        {HCOMP_CODEC_BLOSC_ZSTD, 6},
        {HCOMP_CODEC_BLOSC2_LZ4, 5}, {HCOMP_CODEC_BLOSC2_ZSTD, 1}, {HCOMP_CODEC_BLOSC2_ZSTD, 5},
        {HCOMP_CODEC_BLOSC2_ZSTD, 6},
    };
    size_t n = sizeof(list) / sizeof(list[0]);
    for (size_t i = 0; i < n && i < cap; i++)
        out[i] = list[i];
    return n < cap ? n : cap;
}

void hcomp_profile_opts_init(hcomp_profile_opts *o, int thorough)
{
    memset(o, 0, sizeof(*o));
    o->thorough = thorough;
    o->seed = 1;
    o->min_reps = 0;
    o->min_seconds = -1;
    o->only_dtype = -1;
}

static void mode_sizes(const hcomp_profile_opts *o, int held_out, size_t *sizes, size_t *n)
{
    if (o->nsizes > 0) {
        memcpy(sizes, o->sizes, o->nsizes * sizeof(size_t));
        *n = o->nsizes;
    } else if (held_out) {
        sizes[0] = 256 * KIB; /* sizes the training plans never use */
        sizes[1] = 2 * MIB;
        *n = 2;
    } else {
        sizes[0] = 64 * KIB;
        sizes[1] = MIB;
        sizes[2] = 4 * MIB;
        *n = o->thorough ? 3 : 2;
    }
}

static int push_case(hcomp_profile_case **v, size_t *n, size_t *cap, const hcomp_profile_case *c)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        hcomp_profile_case *t = realloc(*v, nc * sizeof(*t));
        if (t == NULL)
            return -1;
        *v = t;
        *cap = nc;
    }
    (*v)[(*n)++] = *c;
    return 0;
}

hcomp_profile_case *hcomp_profile_plan(const hcomp_profile_opts *o, int held_out, size_t *n)
{
    static const int rotation[] = {HCOMP_GEN_SORTED, HCOMP_GEN_WALK, HCOMP_GEN_SMOOTH,
                                   HCOMP_GEN_RUNS, HCOMP_GEN_SPARSE};
    size_t sizes[HCOMP_PROFILE_MAX_SIZES], nsizes;
    mode_sizes(o, held_out, sizes, &nsizes);
    hcomp_profile_case *v = NULL, c;
    size_t cap = 0;
    *n = 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (r == NULL)
        return NULL;
    gsl_rng_set(r, o->seed ^ 0x5eedu);
    for (int dt = 0; dt < HCOMP_DTYPE_COUNT; dt++) {
        if (o->only_dtype >= 0 && dt != o->only_dtype)
            continue;
        for (int d = 0; d < HCOMP_DIST_COUNT; d++) {
            int shapes[HCOMP_GEN_SHAPE_COUNT], ns = 0;
            if (held_out) { /* two shapes at random */
                int nshape = dt == HCOMP_DTYPE_BYTES ? HCOMP_GEN_SHAPE_COUNT : HCOMP_GEN_TEXT;
                shapes[ns++] = (int) gsl_rng_uniform_int(r, (unsigned long) nshape);
                do
                    shapes[ns] = (int) gsl_rng_uniform_int(r, (unsigned long) nshape);
                while (shapes[ns] == shapes[0]);
                ns++;
            } else if (o->thorough) {
                for (int s = 0; s < HCOMP_GEN_SHAPE_COUNT; s++)
                    if (s != HCOMP_GEN_TEXT || dt == HCOMP_DTYPE_BYTES)
                        shapes[ns++] = s;
            } else {
                shapes[ns++] = HCOMP_GEN_IID;
                shapes[ns++] = dt == HCOMP_DTYPE_BYTES ? HCOMP_GEN_TEXT : HCOMP_GEN_QUANT;
                shapes[ns++] = rotation[(dt * HCOMP_DIST_COUNT + d) % 5];
            }
            for (int s = 0; s < ns; s++)
                for (size_t z = 0; z < nsizes; z++) {
                    memset(&c, 0, sizeof(c));
                    c.dtype = dt;
                    c.dist = d;
                    c.shape = shapes[s];
                    c.size = sizes[z];
                    if (push_case(&v, n, &cap, &c) != 0)
                        goto oom;
                }
        }
    }
    for (size_t i = 0; i < o->nsamples; i++) {
        struct stat st;
        if (stat(o->samples[i].path, &st) != 0 || st.st_size <= 0)
            continue;
        for (size_t z = 0; z < nsizes; z++) {
            memset(&c, 0, sizeof(c));
            c.sample = &o->samples[i];
            c.dtype = o->samples[i].dtype;
            c.size = (size_t) st.st_size < sizes[z] ? (size_t) st.st_size : sizes[z];
            if (push_case(&v, n, &cap, &c) != 0)
                goto oom;
            if ((size_t) st.st_size <= sizes[z])
                break; /* the whole file once */
        }
    }
    gsl_rng_free(r);
    return v;
oom:
    gsl_rng_free(r);
    free(v);
    *n = 0;
    return NULL;
}

int hcomp_profile_make_data(const hcomp_profile_case *c, void *rng, unsigned char *buf,
                            int *dtype_hint, hcomp_error *err)
{
    if (c->sample == NULL) {
        *dtype_hint = c->dtype;
        if (hcomp_gen_fill(rng, c->dtype, c->dist, c->shape, buf, c->size) != 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "data generator: out of memory");
        return HCOMP_OK;
    }
    *dtype_hint = c->sample->dtype;
    int fd = open(c->sample->path, O_RDONLY);
    if (fd < 0)
        return hcomp_fail_errno(err, errno, "sample %s: cannot open", c->sample->path);
    struct stat st;
    uint64_t off = 0;
    if (fstat(fd, &st) == 0 && (uint64_t) st.st_size > c->size)
        off = (((uint64_t) st.st_size - c->size) / 2) & ~(uint64_t) 4095; /* the middle */
    long long got = hcomp_pread_full(fd, buf, c->size, off);
    int e = errno;
    close(fd);
    if (got < 0)
        return hcomp_fail_errno(err, e, "sample %s: cannot read", c->sample->path);
    if ((size_t) got < c->size)
        memset(buf + got, 0, c->size - (size_t) got);
    return HCOMP_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t) n, sizeof(double), cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

int hcomp_profile_model_views(const hcomp_codec *c, const unsigned char *buf, size_t len,
                              const hcomp_features *plain, hcomp_features out[2], int filter[2])
{
    out[0] = *plain;
    filter[0] = HCOMP_FILTER_NONE;
    int typed = c->compress_typed != NULL;
    int f = hcomp_filter_for_dtype(typed ? HCOMP_SHUFFLE_BIT : HCOMP_SHUFFLE_BYTE, plain->dtype);
    unsigned k = hcomp_filter_typesize(f);
    if (k == 0 || c->id == HCOMP_CODEC_NONE)    /* bytes: as they are */
        return 1;
    hcomp_features sh;
    if (hcomp_analyze_shuffled(buf, len, k, plain, &sh) != HCOMP_OK)
        return 1;
    if (!typed) {
        out[1] = sh;
        filter[1] = f;
        return 2;
    }
    if (hcomp_analyze_bitshuffled(buf, len, k, &sh, &out[0]) != HCOMP_OK)
        return 0;
    filter[0] = f;
    /* c-blosc2's codecs are candidates with bytedelta too: their models learn both forms */
    if (c->id != HCOMP_CODEC_BLOSC2_LZ4 && c->id != HCOMP_CODEC_BLOSC2_ZSTD)
        return 1;
    if (hcomp_analyze_bytedelta(buf, len, k, &sh, &out[1]) != HCOMP_OK)
        return 1;
    filter[1] = hcomp_filter_for(HCOMP_SHUFFLE_BYTEDELTA, k);
    return 2;
}

int hcomp_profile_measure(const hcomp_codec *c, int level, int filter, const unsigned char *buf,
                          size_t len, int min_reps, double min_seconds, hcomp_row *r,
                          hcomp_error *err)
{
    unsigned char *tmp = NULL;
    size_t tmp_cap = 0;
    size_t cap = c->bound(len);
    unsigned char *dst = malloc(cap ? cap : 1), *back = malloc(len ? len : 1);
    double t[MAX_REPS];
    int rc = HCOMP_OK;
    if (dst == NULL || back == NULL) {
        rc = hcomp_fail(err, HCOMP_E_NOMEM, "measuring %s:%d: out of memory", c->name, level);
        goto out;
    }
    size_t clen = 0;
    int n = 0;
    double spent = 0;
    while (n < MAX_REPS && (n < min_reps || spent < min_seconds)) {
        double t0 = hcomp_profile_now();
        int crc = hcomp_filter_encode(c, level, filter, buf, len, &tmp, &tmp_cap, dst, cap, &clen);
        t[n] = hcomp_profile_now() - t0;
        if (crc != HCOMP_OK) {
            rc = hcomp_fail(err, HCOMP_E_IO, "%s:%d failed to compress %zu bytes (%s)", c->name,
                            level, len, hcomp_code_name(crc));
            goto out;
        }
        spent += t[n++];
    }
    double tc = median(t, n);
    n = 0;
    spent = 0;
    while (n < MAX_REPS && (n < min_reps || spent < min_seconds)) {
        double t0 = hcomp_profile_now();
        int drc = hcomp_filter_decode(c, filter, dst, clen, back, len, &tmp, &tmp_cap);
        t[n] = hcomp_profile_now() - t0;
        if (drc != HCOMP_OK || (n == 0 && memcmp(back, buf, len) != 0)) {
            rc = hcomp_fail(err, HCOMP_E_CORRUPT, "%s:%d: %zu bytes do not round-trip", c->name,
                            level, len);
            goto out;
        }
        spent += t[n++];
    }
    double td = median(t, n);
    const double tmin = 1e-9; /* below the clock's resolution */
    r->raw_len = len;
    r->y[HCOMP_TARGET_RATIO] = clen > 0 ? (double) len / (double) clen : 1.0;
    r->y[HCOMP_TARGET_COMP] = (double) len / (tc > tmin ? tc : tmin);
    r->y[HCOMP_TARGET_DECOMP] = (double) len / (td > tmin ? td : tmin);
out:
    free(dst);
    free(tmp);
    free(back);
    return rc;
}

static void resolve(const hcomp_profile_opts *o, int thorough, int *min_reps, double *min_s)
{
    *min_reps = o->min_reps > 0 ? o->min_reps : (thorough ? 5 : 3);
    *min_s = o->min_seconds >= 0 ? o->min_seconds : (thorough ? 0.02 : 0.004);
}

static const char *human_size(size_t n, char *buf, size_t cap)
{
    if (n >= MIB && n % MIB == 0)
        snprintf(buf, cap, "%zu MiB", n / MIB);
    else if (n >= KIB && n % KIB == 0)
        snprintf(buf, cap, "%zu KiB", n / KIB);
    else
        snprintf(buf, cap, "%zu B", n);
    return buf;
}

static void case_label(const hcomp_profile_case *c, int dtype, char *buf, size_t cap)
{
    char sz[32];
    if (c->sample != NULL)
        snprintf(buf, cap, "%s (%s) %s", c->sample->path, hcomp_dtype_name(dtype),
                 human_size(c->size, sz, sizeof(sz)));
    else
        snprintf(buf, cap, "%s/%s/%s %s", hcomp_dtype_name(c->dtype), hcomp_dist_name(c->dist),
                 hcomp_gen_shape_name(c->shape), human_size(c->size, sz, sizeof(sz)));
}

int hcomp_profile_run(const hcomp_profile_opts *o, hcomp_predictor *p, hcomp_error *err)
{
    hcomp_model_id ids[HCOMP_PROFILE_MAX_MODELS];
    size_t nids = o->nmodels;
    if (nids > 0)
        memcpy(ids, o->models, nids * sizeof(ids[0]));
    else
        nids = hcomp_profile_default_models(ids, HCOMP_PROFILE_MAX_MODELS);
    hcomp_model *models[HCOMP_PROFILE_MAX_MODELS];
    for (size_t m = 0; m < nids; m++)
        if (hcomp_predictor_model(p, ids[m].codec, ids[m].level, 1) == NULL)
            return hcomp_fail(err, HCOMP_E_INVAL, "codec %u level %d: no such codec or level",
                              ids[m].codec, ids[m].level);
    /* taken once all exist: creating a model may move the others */
    for (size_t m = 0; m < nids; m++)
        models[m] = hcomp_predictor_model(p, ids[m].codec, ids[m].level, 0);
    size_t ncases;
    hcomp_profile_case *cases = hcomp_profile_plan(o, 0, &ncases);
    if (cases == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "profile plan: out of memory or no cases");
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (rng == NULL) {
        free(cases);
        return hcomp_fail(err, HCOMP_E_NOMEM, "out of memory");
    }
    gsl_rng_set(rng, o->seed);
    int min_reps;
    double min_s;
    resolve(o, o->thorough, &min_reps, &min_s);
    int rc = HCOMP_OK;
    size_t step = 0, total = ncases * nids;
    for (size_t i = 0; i < ncases && rc == HCOMP_OK; i++) {
        unsigned char *buf = malloc(cases[i].size ? cases[i].size : 1);
        if (buf == NULL) {
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "out of memory for a %zu-byte case",
                            cases[i].size);
            break;
        }
        int hint;
        hcomp_features f;
        rc = hcomp_profile_make_data(&cases[i], rng, buf, &hint, err);
        if (rc == HCOMP_OK)
            hcomp_analyze(buf, cases[i].size, hint, &f);
        char label[1200];
        if (rc == HCOMP_OK)
            case_label(&cases[i], f.dtype, label, sizeof(label));
        for (size_t m = 0; m < nids && rc == HCOMP_OK; m++) {
            const hcomp_codec *c = hcomp_codec_by_id(ids[m].codec);
            hcomp_features mf[2];
            int filter[2];
            int nv = hcomp_profile_model_views(c, buf, cases[i].size, &f, mf, filter);
            for (int v = 0; v < nv && rc == HCOMP_OK; v++) {
                hcomp_row row;
                memset(&row, 0, sizeof(row));
                row.dtype = mf[v].dtype;
                row.dist = mf[v].dist;
                row.entropy = mf[v].entropy;
                row.probe_ratio = mf[v].probe_ratio;
                rc = hcomp_profile_measure(c, ids[m].level, filter[v], buf, cases[i].size,
                                           min_reps, min_s, &row, err);
                if (rc == HCOMP_OK)
                    rc = hcomp_model_add_row(models[m], &row);
                if (rc == HCOMP_OK && o->progress != NULL)
                    fprintf(o->progress, "[profile] %zu/%zu %s:%d%s %s: ratio %.3g, compress %.0f "
                            "MB/s, decompress %.0f MB/s\n", step + 1, total, c->name,
                            ids[m].level, filter[v] ? " filtered" : "", label, row.y[0],
                            row.y[1] / 1e6, row.y[2] / 1e6);
            }
            step++;
        }
        free(buf);
    }
    gsl_rng_free(rng);
    free(cases);
    if (rc == HCOMP_OK)
        rc = hcomp_predictor_fit_all(p, err);
    return rc;
}

/* ---- report ------------------------------------------------------------------------- */

typedef struct pairs {
    double *a, *p; /* logs of actual and predicted */
    size_t n, cap;
} pairs;

static int pairs_add(pairs *v, double actual, double pred)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 64;
        double *a = realloc(v->a, cap * sizeof(double));
        if (a == NULL)
            return -1;
        v->a = a;
        double *q = realloc(v->p, cap * sizeof(double));
        if (q == NULL)
            return -1;
        v->p = q;
        v->cap = cap;
    }
    v->a[v->n] = actual;
    v->p[v->n] = pred;
    v->n++;
    return 0;
}

static void accuracy_of(pairs v[HCOMP_NTARGET], hcomp_accuracy *acc)
{
    memset(acc, 0, sizeof(*acc));
    acc->n = v[0].n;
    for (int t = 0; t < HCOMP_NTARGET; t++) {
        size_t n = v[t].n;
        if (n == 0) {
            acc->r2[t] = acc->mre[t] = acc->mre_const[t] = NAN;
            continue;
        }
        double mean = 0, sst = 0, sse = 0, mre = 0, mrec = 0;
        for (size_t i = 0; i < n; i++)
            mean += v[t].a[i];
        mean /= (double) n;
        for (size_t i = 0; i < n; i++) {
            double a = v[t].a[i], q = v[t].p[i];
            sst += (a - mean) * (a - mean);
            sse += (a - q) * (a - q);
            mre += fabs(exp(q - a) - 1.0);
            mrec += fabs(exp(mean - a) - 1.0);
        }
        acc->r2[t] = sst > 0 ? 1.0 - sse / sst : (sse == 0 ? 1.0 : NAN);
        acc->mre[t] = mre / (double) n;
        acc->mre_const[t] = mrec / (double) n;
    }
}

int hcomp_profile_report(const hcomp_profile_opts *o, hcomp_predictor *p, hcomp_report *rep,
                         hcomp_error *err)
{
    memset(rep, 0, sizeof(*rep));
    size_t nm = hcomp_predictor_model_count(p);
    if (nm > HCOMP_PROFILE_MAX_MODELS)
        nm = HCOMP_PROFILE_MAX_MODELS;
    rep->nmodels = nm;
    for (size_t m = 0; m < nm; m++) {
        hcomp_model_info info;
        hcomp_predictor_model_at(p, m, &info);
        rep->model[m].codec = info.codec;
        rep->model[m].level = info.level;
    }
    pairs *per = calloc(nm * HCOMP_NTARGET + HCOMP_NTARGET, sizeof(pairs));
    if (per == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "out of memory");
    pairs *all = per + nm * HCOMP_NTARGET;
    size_t ncases;
    hcomp_profile_case *cases = hcomp_profile_plan(o, 1, &ncases);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int rc = cases != NULL && rng != NULL ? HCOMP_OK
                                          : hcomp_fail(err, HCOMP_E_NOMEM, "out of memory");
    if (rng != NULL)
        gsl_rng_set(rng, o->seed);
    int min_reps;
    double min_s;
    resolve(o, o->thorough, &min_reps, &min_s);
    size_t step = 0, total = ncases * nm;
    for (size_t i = 0; i < ncases && rc == HCOMP_OK; i++) {
        unsigned char *buf = malloc(cases[i].size ? cases[i].size : 1);
        if (buf == NULL) {
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "out of memory");
            break;
        }
        int hint;
        hcomp_features f;
        rc = hcomp_profile_make_data(&cases[i], rng, buf, &hint, err);
        if (rc == HCOMP_OK)
            hcomp_analyze(buf, cases[i].size, hint, &f);
        char label[1200];
        if (rc == HCOMP_OK)
            case_label(&cases[i], f.dtype, label, sizeof(label));
        for (size_t m = 0; m < nm && rc == HCOMP_OK; m++) {
            const hcomp_codec *c = hcomp_codec_by_id(rep->model[m].codec);
            hcomp_row row;
            hcomp_prediction pr;
            hcomp_features mf[2];
            int filter[2];
            int nv = hcomp_profile_model_views(c, buf, cases[i].size, &f, mf, filter);
            for (int v = 0; v < nv && rc == HCOMP_OK; v++) {
                memset(&row, 0, sizeof(row));
                rc = hcomp_profile_measure(c, rep->model[m].level, filter[v], buf, cases[i].size,
                                           min_reps, min_s, &row, err);
                if (rc != HCOMP_OK)
                    break;
                if (hcomp_predictor_predict(p, &mf[v], c->id, rep->model[m].level, &pr) != HCOMP_OK)
                    continue;
                double pv[HCOMP_NTARGET] = {pr.ratio, pr.comp_Bps, pr.decomp_Bps};
                for (int t = 0; t < HCOMP_NTARGET; t++)
                    if (pairs_add(&per[m * HCOMP_NTARGET + (size_t) t], log(row.y[t]), log(pv[t])) ||
                        pairs_add(&all[t], log(row.y[t]), log(pv[t])))
                        rc = hcomp_fail(err, HCOMP_E_NOMEM, "out of memory");
                if (o->progress != NULL)
                    fprintf(o->progress, "[report] %zu/%zu %s:%d%s %s: ratio %.3g (predicted %.3g), "
                            "compress %.0f MB/s (%.0f), decompress %.0f MB/s (%.0f)\n", step + 1,
                            total, c->name, rep->model[m].level, filter[v] ? " filtered" : "", label,
                            row.y[0], pr.ratio, row.y[1] / 1e6, pr.comp_Bps / 1e6, row.y[2] / 1e6,
                            pr.decomp_Bps / 1e6);
            }
            step++;
        }
        free(buf);
    }
    if (rc == HCOMP_OK) {
        for (size_t m = 0; m < nm; m++)
            accuracy_of(&per[m * HCOMP_NTARGET], &rep->per_model[m]);
        accuracy_of(all, &rep->overall);
    }
    for (size_t k = 0; k < nm * HCOMP_NTARGET + HCOMP_NTARGET; k++) {
        free(per[k].a);
        free(per[k].p);
    }
    free(per);
    free(cases);
    if (rng != NULL)
        gsl_rng_free(rng);
    return rc;
}

static void print_acc(FILE *out, const char *name, const hcomp_accuracy *a)
{
    fprintf(out, "%-16s %5zu", name, a->n);
    for (int t = 0; t < HCOMP_NTARGET; t++)
        fprintf(out, "  %6.3f %6.1f%% %6.1f%%", a->r2[t], 100 * a->mre[t], 100 * a->mre_const[t]);
    fputc('\n', out);
}

void hcomp_profile_print_report(FILE *out, const hcomp_report *rep)
{
    fprintf(out, "%-16s %5s  %-22s  %-22s  %-22s\n", "", "", "ratio", "compression speed",
            "decompression speed");
    fprintf(out, "%-16s %5s", "model", "n");
    for (int t = 0; t < HCOMP_NTARGET; t++)
        fprintf(out, "  %6s %7s %7s", "R^2", "MRE", "MRE(c)");
    fputc('\n', out);
    hcomp_accuracy mean;
    memset(&mean, 0, sizeof(mean));
    size_t counted[HCOMP_NTARGET] = {0};
    for (size_t m = 0; m < rep->nmodels; m++) {
        char name[64];
        snprintf(name, sizeof(name), "%s:%d", hcomp_codec_by_id(rep->model[m].codec)->name,
                 rep->model[m].level);
        print_acc(out, name, &rep->per_model[m]);
        mean.n += rep->per_model[m].n;
        for (int t = 0; t < HCOMP_NTARGET; t++) {
            if (!isfinite(rep->per_model[m].r2[t]))
                continue; /* a constant target (the ratio of none) */
            mean.r2[t] += rep->per_model[m].r2[t];
            mean.mre[t] += rep->per_model[m].mre[t];
            mean.mre_const[t] += rep->per_model[m].mre_const[t];
            counted[t]++;
        }
    }
    for (int t = 0; t < HCOMP_NTARGET; t++) {
        double k = counted[t] ? (double) counted[t] : NAN;
        mean.r2[t] /= k;
        mean.mre[t] /= k;
        mean.mre_const[t] /= k;
    }
    print_acc(out, "mean of models", &mean);
    print_acc(out, "all (pooled)", &rep->overall);
    fprintf(out, "R^2 on logs; MRE: mean |predicted - actual| / actual; MRE(c): the same for a "
            "constant model\n(each model's geometric mean on this data, in hindsight).\n");
}

/* ---- tier benchmark --------------------------------------------------------------------- */

int hcomp_tier_bench(const hcomp_tier *t, const char *filedir, size_t file_bytes,
                     hcomp_tier_signature *out, hcomp_error *err)
{
    memset(out, 0, sizeof(*out));
    const char *dir = strcmp(t->path, HCOMP_FILEDIR) == 0 ? filedir : t->path;
    snprintf(out->name, sizeof(out->name), "%s", t->name);
    snprintf(out->path, sizeof(out->path), "%.*s", (int) sizeof(out->path) - 1, t->path);
    if (gethostname(out->node, sizeof(out->node)) != 0)
        snprintf(out->node, sizeof(out->node), "unknown");
    out->node[sizeof(out->node) - 1] = '\0';
    out->node_local = t->node_local;
    if (t->private_dir) {
        int rc = hcomp_tier_ensure_private_dir(dir, err);
        if (rc != HCOMP_OK)
            return rc;
    }
    char path[PATH_MAX];
    if ((size_t) snprintf(path, sizeof(path), "%s/.hcomp-profile-XXXXXX", dir) >= sizeof(path))
        return hcomp_fail(err, HCOMP_E_INVAL, "tier %s: path too long", t->name);
    int fd = mkstemp(path);
    if (fd < 0)
        return hcomp_fail_errno(err, errno, "tier %s: cannot create a file in %s", t->name, dir);
    unlink(path); /* gone whatever happens; the descriptor keeps it */
    struct statvfs sv;
    if (fstatvfs(fd, &sv) == 0) /* before our file takes space */
        out->free_bytes = (uint64_t) sv.f_bavail * (uint64_t) sv.f_frsize;
    const size_t block = MIB;
    unsigned char *buf = malloc(block);
    int rc = HCOMP_OK;
    if (buf == NULL) {
        close(fd);
        return hcomp_fail(err, HCOMP_E_NOMEM, "out of memory");
    }
    if (file_bytes < block)
        file_bytes = block;
    file_bytes -= file_bytes % block;
    hcomp_random_bytes(buf, block); /* incompressible, for file systems that compress */
    double t0 = hcomp_profile_now();
    for (size_t off = 0; off < file_bytes && rc == HCOMP_OK; off += block) {
        buf[0] = (unsigned char) (off >> 20);
        if (hcomp_write_full(fd, buf, block) != 0)
            rc = hcomp_fail_errno(err, errno, "tier %s: writing %s", t->name, dir);
    }
    if (rc == HCOMP_OK && fsync(fd) != 0)
        rc = hcomp_fail_errno(err, errno, "tier %s: fsync in %s", t->name, dir);
    double tw = hcomp_profile_now() - t0;
    if (rc == HCOMP_OK) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* read from the device, not the cache */
        t0 = hcomp_profile_now();
        for (size_t off = 0; off < file_bytes && rc == HCOMP_OK; off += block)
            if (hcomp_pread_full(fd, buf, block, off) != (long long) block)
                rc = hcomp_fail_errno(err, errno, "tier %s: reading %s", t->name, dir);
        double tr = hcomp_profile_now() - t0;
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        double lat[32];
        uint64_t x = 0x9E3779B97F4A7C15u;
        for (int i = 0; i < 32 && rc == HCOMP_OK; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            uint64_t off = (x % (file_bytes / 4096)) * 4096;
            double s = hcomp_profile_now();
            if (hcomp_pread_full(fd, buf, 4096, off) != 4096)
                rc = hcomp_fail_errno(err, errno, "tier %s: reading %s", t->name, dir);
            lat[i] = hcomp_profile_now() - s;
        }
        if (rc == HCOMP_OK) {
            gsl_sort(lat, 1, 32);
            out->write_Bps = (double) file_bytes / (tw > 1e-9 ? tw : 1e-9);
            out->read_Bps = (double) file_bytes / (tr > 1e-9 ? tr : 1e-9);
            out->latency_s = 0.5 * (lat[15] + lat[16]);
        }
    }
    close(fd);
    free(buf);
    return rc;
}
