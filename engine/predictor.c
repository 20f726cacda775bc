/* The compression cost predictor (HCompress IV-D): per codec and level, a linear
 * regression from the features of a buffer to log(ratio), log(compression speed) and
 * log(decompression speed), bootstrapped from a seed (seed.c) and refit at run time
 * from measured outcomes (the feedback loop). Logs make the errors relative and keep
 * every prediction positive. */
#include "predictor.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>

const char *const hcomp_feature_names[HCOMP_NFEAT] = {
    "1", "entropy", "log_probe_ratio", "dtype_int32", "dtype_int64", "dtype_float",
    "dtype_double", "dist_normal", "dist_exponential", "dist_gamma"};
const char *const hcomp_target_names[HCOMP_NTARGET] = {"log_ratio", "log_comp_Bps",
                                                       "log_decomp_Bps"};
const char *const hcomp_row_field_names[HCOMP_SEED_ROW_FIELDS] = {
    "dtype", "dist", "entropy", "probe_ratio", "bytes", "ratio", "comp_Bps", "decomp_Bps",
    "source"};

/* Predictions are exp() of these bounds at most: a wild extrapolation still gives a
 * finite number. */
#define LOG_MIN (-30.0)
#define LOG_MAX (60.0)
#define PROBE_MIN 1e-3

int hcomp_feature_vector(int dtype, int dist, double entropy, double probe_ratio,
                         double x[HCOMP_NFEAT])
{
    if (dtype < 0 || dtype >= HCOMP_DTYPE_COUNT || dist < 0 || dist >= HCOMP_DIST_COUNT ||
        !isfinite(entropy) || !isfinite(probe_ratio))
        return -1;
    memset(x, 0, sizeof(double) * HCOMP_NFEAT);
    x[0] = 1.0;
    x[1] = entropy;
    x[2] = log(probe_ratio > PROBE_MIN ? probe_ratio : PROBE_MIN);
    if (dtype != HCOMP_DTYPE_BYTES)
        x[3 + dtype - 1] = 1.0;
    if (dist != HCOMP_DIST_UNIFORM)
        x[7 + dist - 1] = 1.0;
    return 0;
}

/* Whether v is already the double nearest a 6-significant-digit decimal (as every value
 * of a loaded seed is): then printing and reading it back gives v again, and rounding
 * the thousands of rows of the embedded seed need not print each value (that took a
 * third of a process's first engine set-up). k / 10^n and k * 10^n with k < 2^53 and
 * n <= 22 are exact operands, so the division or product is the nearest double to the
 * decimal k x 10^-n; if that is v, v is within half an ulp of it, far less than half a
 * unit in the sixth digit, so "%.6g" prints that decimal. */
static int is_round6(double a)
{
    static const double pow10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                     1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
                                     1e20, 1e21, 1e22};
    int n = 5 - (int) floor(log10(a));          /* k = a x 10^n has 6 integer digits */
    if (n < -22 || n > 22)
        return 0;
    double p = pow10[n < 0 ? -n : n];
    double k = nearbyint(n >= 0 ? a * p : a / p);
    if (k < 100000.0 || k > 999999.0)           /* log10 off by one near a power of 10 */
        return 0;
    return (n >= 0 ? k / p : k * p) == a;
}

double hcomp_round6(double v)
{
    if (!isfinite(v) || v == 0.0 || is_round6(fabs(v)))
        return v;
    char buf[32];
    snprintf(buf, sizeof(buf), "%.6g", v);
    return strtod(buf, NULL);
}

/* ---- construction -------------------------------------------------------------------- */

hcomp_predictor *hcomp_predictor_new(void)
{
    hcomp_predictor *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return NULL;
    }
    for (int c = 0; c < HCOMP_CODEC_COUNT; c++)
        for (int s = 0; s < HCOMP_LEVEL_SLOTS; s++)
            p->index[c][s] = -1;
    p->interval = HCOMP_FEEDBACK_DEFAULT;
    p->cores = -1;
    return p;
}

void hcomp_predictor_free(hcomp_predictor *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->nmodels; i++)
        free(p->models[i].rows);
    free(p->models);
    free(p->tiers);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* The slot of codec:level, or -1. HCOMP_LEVEL_DEFAULT is the codec's default level. */
static int level_slot(unsigned codec, int *level)
{
    const hcomp_codec *c = hcomp_codec_by_id(codec);
    if (c == NULL)
        return -1;
    if (*level == HCOMP_LEVEL_DEFAULT)
        *level = c->level_default;
    if (*level < c->level_min || *level > c->level_max)
        return -1;
    int slot = *level - c->level_min;
    return slot < HCOMP_LEVEL_SLOTS ? slot : -1;
}

hcomp_model *hcomp_predictor_model(hcomp_predictor *p, unsigned codec, int level, int create)
{
    int slot = level_slot(codec, &level);
    if (slot < 0)
        return NULL;
    int idx = p->index[codec][slot];
    if (idx >= 0)
        return &p->models[idx];
    if (!create || p->nmodels >= INT16_MAX)
        return NULL;
    if (p->nmodels == p->models_cap) {
        size_t cap = p->models_cap ? 2 * p->models_cap : 16;
        hcomp_model *m = realloc(p->models, cap * sizeof(*m));
        if (m == NULL)
            return NULL;
        p->models = m;
        p->models_cap = cap;
    }
    hcomp_model *m = &p->models[p->nmodels];
    memset(m, 0, sizeof(*m));
    m->codec = codec;
    m->level = level;
    for (int t = 0; t < HCOMP_NTARGET; t++) {
        m->r2[t] = NAN;
        m->obs_gain[t] = 1.0;
    }
    p->index[codec][slot] = (int16_t) p->nmodels;
    p->nmodels++;
    return m;
}

void hcomp_row_round(hcomp_row *r)
{
    r->entropy = hcomp_round6(r->entropy);
    r->probe_ratio = hcomp_round6(r->probe_ratio);
    for (int t = 0; t < HCOMP_NTARGET; t++)
        r->y[t] = r->y[t] > 0 && isfinite(r->y[t]) ? hcomp_round6(r->y[t]) : 0.0;
}

/* ---- local corrections ------------------------------------------------------------ */

/* Cluster i's mean residual per target under m's current coefficients (a refit that
 * learnt part of it leaves less to correct); kept in the cluster, since predictions read
 * it far more often than refits change it. */
static void local_residuals(hcomp_model *m, int i)
{
    hcomp_local_key *k = &m->local_key[i];
    const hcomp_local_sums *c = &m->local_sum[i];
    for (int t = 0; t < HCOMP_NTARGET; t++) {
        k->resid[t] = 0.0;
        if (!(k->w[t] > 0))
            continue;
        double fit = 0.0;
        for (int j = 0; j < HCOMP_NFEAT; j++)
            fit += m->coef[t][j] * c->sx[t][j];
        double r = (c->sy[t] - fit) / k->w[t];
        k->resid[t] = isfinite(r) ? r : 0.0;
    }
}

static void local_residuals_all(hcomp_model *m)
{
    for (int i = 0; i < m->nlocal; i++)
        local_residuals(m, i);
}

/* The squared distance of x from cluster c's anchor, in cluster radii. */
static inline double local_dist2(const hcomp_local_key *c, const double x[HCOMP_NFEAT])
{
    double de = (x[1] - c->entropy) * (1.0 / HCOMP_LOCAL_ENTROPY);
    double dp = (x[2] - c->lprobe) * (1.0 / HCOMP_LOCAL_LPROBE);
    return de * de + dp * dp;
}

/* The cluster of m whose anchor is nearest to (dtype, x) within the radius, or -1. */
static int local_find(const hcomp_model *m, int dtype, const double x[HCOMP_NFEAT])
{
    int best = -1;
    double best_d = 1.0;
    for (int i = 0; i < m->nlocal; i++) {
        const hcomp_local_key *c = &m->local_key[i];
        if (c->dtype != dtype)
            continue;
        double d = local_dist2(c, x);
        if (d <= best_d) {
            best_d = d;
            best = i;
        }
    }
    return best;
}

/* An observation of element type dtype, feature vector x and log targets ly (NaN where
 * unknown) into its cluster. */
static void local_add(hcomp_model *m, int dtype, const double x[HCOMP_NFEAT],
                      const double ly[HCOMP_NTARGET])
{
    int i = local_find(m, dtype, x);
    if (i < 0) {            /* a new neighbourhood: a free cluster, else the stalest */
        if (m->nlocal < HCOMP_LOCAL_CLUSTERS)
            i = m->nlocal++;
        else {
            i = 0;
            for (int k = 1; k < HCOMP_LOCAL_CLUSTERS; k++)
                if (m->local_sum[k].used < m->local_sum[i].used)
                    i = k;
        }
        memset(&m->local_key[i], 0, sizeof(m->local_key[i]));
        memset(&m->local_sum[i], 0, sizeof(m->local_sum[i]));
        m->local_key[i].dtype = dtype;
        m->local_key[i].entropy = x[1];
        m->local_key[i].lprobe = x[2];
        m->local_dtypes = 0;      /* a replaced cluster may have been its type's last */
        for (int k = 0; k < m->nlocal; k++)
            m->local_dtypes |= 1u << m->local_key[k].dtype;
    }
    hcomp_local_key *k = &m->local_key[i];
    hcomp_local_sums *c = &m->local_sum[i];
    c->used = ++m->local_tick;
    for (int t = 0; t < HCOMP_NTARGET; t++) {
        if (isnan(ly[t]))
            continue;
        k->w[t] = k->w[t] * HCOMP_LOCAL_DECAY + 1.0;
        c->sy[t] = c->sy[t] * HCOMP_LOCAL_DECAY + ly[t];
        for (int j = 0; j < HCOMP_NFEAT; j++)
            c->sx[t][j] = c->sx[t][j] * HCOMP_LOCAL_DECAY + x[j];
    }
    local_residuals(m, i);
}

/* Kernel regression on the clusters' residuals (Nadaraya-Watson): each cluster of the same
 * element type weighs w * K(d), d its distance in units of the cluster radius and
 * K(d) = 1 / (1 + d^2 / HCOMP_LOCAL_BANDWIDTH2)^2, so the nearest data dominate, a lone
 * far cluster still says something, and none at all leaves the line alone. */
void hcomp_model_local_correction(const hcomp_model *m, int dtype, const double x[HCOMP_NFEAT],
                                  double out[HCOMP_NTARGET])
{
    double num[HCOMP_NTARGET] = {0}, den[HCOMP_NTARGET] = {0};
    for (int i = 0; i < m->nlocal; i++) {
        const hcomp_local_key *c = &m->local_key[i];
        if (c->dtype != dtype)
            continue;
        double q = 1.0 + local_dist2(c, x) * (1.0 / HCOMP_LOCAL_BANDWIDTH2);
        double k = 1.0 / (q * q);
        for (int t = 0; t < HCOMP_NTARGET; t++) {
            num[t] += k * c->w[t] * c->resid[t];
            den[t] += k * c->w[t];
        }
    }
    for (int t = 0; t < HCOMP_NTARGET; t++)
        out[t] = den[t] > 0 ? num[t] / (den[t] + HCOMP_LOCAL_SHRINK) : 0.0;
}

static int add_row(hcomp_model *m, const hcomp_row *row, int round)
{
    if (m->nrows == m->rows_cap) {
        size_t cap = m->rows_cap ? 2 * m->rows_cap : 64;
        hcomp_row *r = realloc(m->rows, cap * sizeof(*r));
        if (r == NULL)
            return HCOMP_E_NOMEM;
        m->rows = r;
        m->rows_cap = cap;
    }
    m->rows[m->nrows] = *row;
    if (round)
        hcomp_row_round(&m->rows[m->nrows]);
    const hcomp_row *r = &m->rows[m->nrows];
    double x[HCOMP_NFEAT], ly[HCOMP_NTARGET];
    if (r->observed && hcomp_feature_vector(r->dtype, r->dist, r->entropy, r->probe_ratio,
                                            x) == 0) {
        for (int t = 0; t < HCOMP_NTARGET; t++)
            ly[t] = r->y[t] > 0 ? log(r->y[t]) : NAN;
        local_add(m, r->dtype, x, ly);
    }
    m->nrows++;
    m->rows_ne_valid = 0;
    return HCOMP_OK;
}

int hcomp_model_add_row(hcomp_model *m, const hcomp_row *row)
{
    return add_row(m, row, 1);
}

int hcomp_model_add_round_row(hcomp_model *m, const hcomp_row *row)
{
    return add_row(m, row, 0);
}

/* ---- fitting ------------------------------------------------------------------------- */

#define W_PROFILE 1.0
#define W_SAVED_OBS 2.0

/* Rows usable for target t, with their weights, into X / y / w; returns the count. */
static size_t gather(const hcomp_model *m, int t, gsl_matrix *X, gsl_vector *y, gsl_vector *w)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nrows; i++) {
        const hcomp_row *r = &m->rows[i];
        double weight = r->observed ? W_SAVED_OBS : W_PROFILE;
        double x[HCOMP_NFEAT];
        if (!(r->y[t] > 0) || !isfinite(r->y[t]) ||
            hcomp_feature_vector(r->dtype, r->dist, r->entropy, r->probe_ratio, x) != 0)
            continue;
        if (X != NULL) {
            for (int j = 0; j < HCOMP_NFEAT; j++)
                gsl_matrix_set(X, n, (size_t) j, x[j]);
            gsl_vector_set(y, n, log(r->y[t]));
            gsl_vector_set(w, n, weight);
        }
        n++;
    }
    return n;
}

/* Target t by GSL's truncated SVD over the rows; 1 if fitted. */
static int fit_target_svd(hcomp_model *m, int t)
{
    int fitted = 0;
    {
        size_t n = gather(m, t, NULL, NULL, NULL);
        if (n < HCOMP_NFEAT)
            return 0; /* GSL's SVD needs rows >= columns; keep what we have */
        gsl_matrix *X = gsl_matrix_alloc(n, HCOMP_NFEAT);
        gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n);
        gsl_vector *c = gsl_vector_alloc(HCOMP_NFEAT);
        gsl_matrix *cov = gsl_matrix_alloc(HCOMP_NFEAT, HCOMP_NFEAT);
        gsl_multifit_linear_workspace *work = gsl_multifit_linear_alloc(n, HCOMP_NFEAT);
        if (X && y && w && c && cov && work) {
            gather(m, t, X, y, w);
            double chisq = 0.0;
            size_t rank = 0;
            /* Truncated SVD: columns the rows never exercise (a dtype absent from the
             * training data) get coefficient 0 instead of noise. */
            int rc = gsl_multifit_wlinear_tsvd(X, w, y, 1e-10, c, cov, &chisq, &rank, work);
            int finite = rc == 0;
            for (int j = 0; j < HCOMP_NFEAT && finite; j++)
                finite = isfinite(gsl_vector_get(c, (size_t) j));
            if (finite) {
                double sw = 0, swy = 0, sst = 0, sse = 0;
                for (size_t i = 0; i < n; i++) {
                    sw += gsl_vector_get(w, i);
                    swy += gsl_vector_get(w, i) * gsl_vector_get(y, i);
                }
                double ybar = swy / sw;
                for (size_t i = 0; i < n; i++) {
                    double pred = 0;
                    for (int j = 0; j < HCOMP_NFEAT; j++)
                        pred += gsl_matrix_get(X, i, (size_t) j) * gsl_vector_get(c, (size_t) j);
                    double yi = gsl_vector_get(y, i), wi = gsl_vector_get(w, i);
                    sst += wi * (yi - ybar) * (yi - ybar);
                    sse += wi * (yi - pred) * (yi - pred);
                }
                for (int j = 0; j < HCOMP_NFEAT; j++)
                    m->coef[t][j] = gsl_vector_get(c, (size_t) j);
                /* Constant targets (the ratio of "none") fit perfectly. */
                m->r2[t] = sst > 1e-300 ? 1.0 - sse / sst : (sse < 1e-12 * n ? 1.0 : 0.0);
                m->nfit[t] = n;
                fitted = 1;
            }
        }
        gsl_multifit_linear_free(work);
        gsl_matrix_free(cov);
        gsl_vector_free(c);
        gsl_vector_free(w);
        gsl_vector_free(y);
        gsl_matrix_free(X);
    }
    return fitted;
}


static void normal_add(hcomp_normal *ne, const double x[HCOMP_NFEAT], double y, double w)
{
    /* at most 5 of the 10 features are non-zero (the type and distribution are one-hot) */
    int nz[HCOMP_NFEAT], k = 0;
    for (int i = 0; i < HCOMP_NFEAT; i++)
        if (x[i] != 0.0)
            nz[k++] = i;
    for (int a = 0; a < k; a++) {
        int i = nz[a];
        double wx = w * x[i];
        for (int b = 0; b < k; b++)
            ne->A[i][nz[b]] += wx * x[nz[b]];
        ne->b[i] += wx * y;
    }
    ne->yy += w * y * y;
    ne->n++;
}

static void normal_scale(hcomp_normal *ne, double k)
{
    for (int i = 0; i < HCOMP_NFEAT; i++) {
        for (int j = 0; j < HCOMP_NFEAT; j++)
            ne->A[i][j] *= k;
        ne->b[i] *= k;
    }
    ne->yy *= k;
}

/* The seed rows' normal equations, as fit_target_svd weighs them. */
void hcomp_model_prepare_refits(hcomp_model *m)
{
    memset(m->rows_ne, 0, sizeof(m->rows_ne));
    for (size_t i = 0; i < m->nrows; i++) {
        const hcomp_row *r = &m->rows[i];
        double x[HCOMP_NFEAT];
        if (hcomp_feature_vector(r->dtype, r->dist, r->entropy, r->probe_ratio, x) != 0)
            continue;
        for (int t = 0; t < HCOMP_NTARGET; t++)
            if (r->y[t] > 0 && isfinite(r->y[t]))
                normal_add(&m->rows_ne[t], x, log(r->y[t]), r->observed ? W_SAVED_OBS : W_PROFILE);
    }
    m->rows_ne_valid = 1;
}

/* Target t from the rows' and the observations' normal equations: columns scaled to a
 * unit diagonal, a 1e-10 ridge so that a column the rows never exercise (a dtype absent
 * from the data) gets coefficient 0 as under the truncated SVD; 1 if fitted. */
static int fit_target_normal(hcomp_model *m, int t)
{
    const hcomp_normal *r = &m->rows_ne[t], *o = &m->obs_ne[t];
    if (r->n + o->n < HCOMP_NFEAT)
        return 0;
    double A[HCOMP_NFEAT][HCOMP_NFEAT], M[HCOMP_NFEAT * HCOMP_NFEAT], z[HCOMP_NFEAT];
    double b[HCOMP_NFEAT], d[HCOMP_NFEAT];
    double g = m->obs_gain[t] > 0 ? 1.0 / m->obs_gain[t] : 1.0;
    for (int i = 0; i < HCOMP_NFEAT; i++) {
        for (int j = 0; j < HCOMP_NFEAT; j++)
            A[i][j] = r->A[i][j] + g * o->A[i][j];
        b[i] = r->b[i] + g * o->b[i];
        d[i] = A[i][i] > 0 ? 1.0 / sqrt(A[i][i]) : 1.0;
    }
    for (int i = 0; i < HCOMP_NFEAT; i++)
        for (int j = 0; j < HCOMP_NFEAT; j++)
            M[i * HCOMP_NFEAT + j] = d[i] * A[i][j] * d[j] + (i == j ? 1e-10 : 0.0);
    for (int i = 0; i < HCOMP_NFEAT; i++)
        z[i] = d[i] * b[i];
    gsl_matrix_view mv = gsl_matrix_view_array(M, HCOMP_NFEAT, HCOMP_NFEAT);
    gsl_vector_view zv = gsl_vector_view_array(z, HCOMP_NFEAT);
    /* positive definite by construction (a Gram matrix plus a ridge) */
    if (gsl_linalg_cholesky_decomp1(&mv.matrix) != 0 ||
        gsl_linalg_cholesky_svx(&mv.matrix, &zv.vector) != 0)
        return 0;
    double c[HCOMP_NFEAT];
    for (int i = 0; i < HCOMP_NFEAT; i++) {
        c[i] = d[i] * z[i];
        if (!isfinite(c[i]))
            return 0;
    }
    /* R^2 from the sums: x[0] is 1, so A[0][0] = sum w and b[0] = sum w y */
    double yy = r->yy + g * o->yy, sse = yy, sst = yy - b[0] * b[0] / A[0][0];
    for (int i = 0; i < HCOMP_NFEAT; i++) {
        sse -= 2.0 * c[i] * b[i];
        for (int j = 0; j < HCOMP_NFEAT; j++)
            sse += c[i] * A[i][j] * c[j];
    }
    sse = sse > 0 ? sse : 0;
    memcpy(m->coef[t], c, sizeof(c));
    m->r2[t] = sst > 1e-12 * yy ? 1.0 - sse / sst : (sse <= 1e-12 * yy ? 1.0 : 0.0);
    m->nfit[t] = r->n + o->n;
    return 1;
}

int hcomp_model_fit(hcomp_model *m, int with_ring)
{
    int fitted = 0;
    if (with_ring && !m->rows_ne_valid)
        hcomp_model_prepare_refits(m);
    for (int t = 0; t < HCOMP_NTARGET; t++)
        fitted += with_ring ? fit_target_normal(m, t) : fit_target_svd(m, t);
    local_residuals_all(m);
    return fitted;
}

int hcomp_predictor_fit_all(hcomp_predictor *p, hcomp_error *err)
{
    for (size_t i = 0; i < p->nmodels; i++) {
        hcomp_model *m = &p->models[i];
        if (hcomp_model_fit(m, 0) != HCOMP_NTARGET)
            return hcomp_fail(err, HCOMP_E_INVAL, "model %s:%d: too few usable rows to fit "
                              "(%zu rows, need at least %d per target)",
                              hcomp_codec_by_id(m->codec)->name, m->level, m->nrows,
                              HCOMP_NFEAT);
    }
    return HCOMP_OK;
}

/* ---- provenance ---------------------------------------------------------------------- */

void hcomp_predictor_set_provenance(hcomp_predictor *p, const char *command)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(p->created, sizeof(p->created), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(p->command, sizeof(p->command), "%s", command ? command : "");
    if (gethostname(p->hostname, sizeof(p->hostname)) != 0)
        snprintf(p->hostname, sizeof(p->hostname), "unknown");
    p->hostname[sizeof(p->hostname) - 1] = '\0';
    p->cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(p->cpu, sizeof(p->cpu), "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        char line[512];
        while (fgets(line, sizeof(line), f) != NULL) {
            if (strncmp(line, "model name", 10) == 0) {
                char *colon = strchr(line, ':');
                if (colon != NULL) {
                    colon++;
                    while (*colon == ' ' || *colon == '\t')
                        colon++;
                    colon[strcspn(colon, "\n")] = '\0';
                    snprintf(p->cpu, sizeof(p->cpu), "%s", colon);
                }
                break;
            }
        }
        fclose(f);
    }
}

int hcomp_predictor_set_tiers(hcomp_predictor *p, const hcomp_tier_signature *t, size_t n)
{
    hcomp_tier_signature *copy = NULL;
    if (n > 0) {
        copy = malloc(n * sizeof(*copy));
        if (copy == NULL)
            return HCOMP_E_NOMEM;
        memcpy(copy, t, n * sizeof(*copy));
    }
    free(p->tiers);
    p->tiers = copy;
    p->ntiers = n;
    return HCOMP_OK;
}

/* ---- the public API -------------------------------------------------------------------- */

/* A deep copy of p, with a mutex of its own. */
static hcomp_predictor *predictor_copy(const hcomp_predictor *p)
{
    hcomp_predictor *q = hcomp_predictor_new();
    if (q == NULL)
        return NULL;
    pthread_mutex_t mu = q->mu;
    *q = *p;
    q->mu = mu;
    q->models = p->nmodels ? malloc(p->nmodels * sizeof(*q->models)) : NULL;
    q->models_cap = q->nmodels = 0;
    q->tiers = p->ntiers ? malloc(p->ntiers * sizeof(*q->tiers)) : NULL;
    q->ntiers = q->tiers ? p->ntiers : 0;
    if ((p->nmodels && q->models == NULL) || (p->ntiers && q->tiers == NULL)) {
        hcomp_predictor_free(q);
        return NULL;
    }
    if (q->ntiers)
        memcpy(q->tiers, p->tiers, p->ntiers * sizeof(*q->tiers));
    q->models_cap = p->nmodels;
    for (size_t i = 0; i < p->nmodels; i++) {
        hcomp_model *m = &q->models[i];
        *m = p->models[i];
        m->rows = m->nrows ? malloc(m->nrows * sizeof(*m->rows)) : NULL;
        m->rows_cap = m->rows ? m->nrows : 0;
        q->nmodels = i + 1;
        if (p->models[i].nrows && m->rows == NULL) {
            m->nrows = 0;
            hcomp_predictor_free(q);
            return NULL;
        }
        if (m->nrows)
            memcpy(m->rows, p->models[i].rows, m->nrows * sizeof(*m->rows));
    }
    return q;
}

/* The embedded seed, parsed and fitted once per process (7.5 ms: the SVD fits of its
 * models); every load of it gets a copy of its own (0.1 ms), as if parsed again. */
static pthread_mutex_t embedded_lock = PTHREAD_MUTEX_INITIALIZER;
static hcomp_predictor *embedded;

static int load_embedded(hcomp_predictor **out, hcomp_error *err)
{
    int rc = HCOMP_OK;
    pthread_mutex_lock(&embedded_lock);
    if (embedded == NULL)
        rc = hcomp_seed_load_default(&embedded, err);
    if (rc == HCOMP_OK && (*out = predictor_copy(embedded)) == NULL)
        rc = hcomp_fail(err, HCOMP_E_NOMEM, "embedded default seed: out of memory");
    if (rc == HCOMP_OK) {
        /* clusters loaded from the seed would be every copy's: not a bare line (the
         * profiler's seeds have none) */
        int bare = 1;
        for (size_t i = 0; i < embedded->nmodels; i++)
            bare = bare && embedded->models[i].nlocal == 0;
        (*out)->embedded = bare;
    }
    pthread_mutex_unlock(&embedded_lock);
    return rc;
}

int hcomp_predictor_load(const char *seed_path, hcomp_predictor **out, hcomp_error *err)
{
    if (out == NULL)
        return hcomp_fail(err, HCOMP_E_INVAL, "hcomp_predictor_load: no output pointer");
    *out = NULL;
    if (seed_path == NULL || seed_path[0] == '\0')
        return load_embedded(out, err);
    FILE *f = fopen(seed_path, "rb");
    if (f == NULL)
        return hcomp_fail_errno(err, errno, "seed %s: cannot open", seed_path);
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 65536 + 1 > cap) {
            size_t ncap = cap ? 2 * cap : 262144;
            char *t = realloc(text, ncap);
            if (t == NULL) {
                free(text);
                fclose(f);
                return hcomp_fail(err, HCOMP_E_NOMEM, "seed %s: out of memory", seed_path);
            }
            text = t;
            cap = ncap;
        }
        size_t n = fread(text + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
    }
    int rd_err = ferror(f);
    fclose(f);
    if (rd_err) {
        free(text);
        return hcomp_fail(err, HCOMP_E_IO, "seed %s: read error", seed_path);
    }
    text[len] = '\0';
    int rc = hcomp_seed_parse(text, len, seed_path, out, err);
    free(text);
    return rc;
}

/* Model m's prediction for feature vector x (of element type dtype). Under p->mu. */
static void exp_clamped(const double s[HCOMP_NTARGET], hcomp_prediction *out)
{
    double y[HCOMP_NTARGET];
    for (int t = 0; t < HCOMP_NTARGET; t++)
        /* NaN (huge coefficients: inf - inf) counts as the worst prediction */
        y[t] = !(s[t] >= LOG_MIN) ? LOG_MIN : (s[t] > LOG_MAX ? LOG_MAX : s[t]);
    out->ratio = exp(y[HCOMP_TARGET_RATIO]);
    out->comp_Bps = exp(y[HCOMP_TARGET_COMP]);
    out->decomp_Bps = exp(y[HCOMP_TARGET_DECOMP]);
}

/* Model m's prediction for feature vector x (of element type dtype), and the line's alone
 * into line when not NULL. Under p->mu. */
static void predict_model(const hcomp_model *m, int dtype, const double x[HCOMP_NFEAT],
                          hcomp_prediction *out, hcomp_prediction *line)
{
    double s[HCOMP_NTARGET], local[HCOMP_NTARGET] = {0};
    int corrected = m->local_dtypes >> dtype & 1u;
    if (corrected)
        hcomp_model_local_correction(m, dtype, x, local);
    for (int t = 0; t < HCOMP_NTARGET; t++) {
        s[t] = 0.0;
        for (int j = 0; j < HCOMP_NFEAT; j++)
            s[t] += m->coef[t][j] * x[j];
    }
    if (line != NULL && corrected)
        exp_clamped(s, line);
    for (int t = 0; t < HCOMP_NTARGET; t++)
        s[t] += local[t];
    exp_clamped(s, out);
    if (line != NULL && !corrected)
        *line = *out;
}

int hcomp_predictor_predict(hcomp_predictor *p, const hcomp_features *f, unsigned codec,
                            int level, hcomp_prediction *out)
{
    if (p == NULL || f == NULL || out == NULL)
        return HCOMP_E_INVAL;
    int slot = level_slot(codec, &level);
    if (slot < 0)
        return HCOMP_E_INVAL;
    double x[HCOMP_NFEAT];
    if (hcomp_feature_vector(f->dtype, f->dist, f->entropy, f->probe_ratio, x) != 0)
        return HCOMP_E_INVAL;
    pthread_mutex_lock(&p->mu);
    int idx = p->index[codec][slot];
    if (idx >= 0)
        predict_model(&p->models[idx], f->dtype, x, out, NULL);
    pthread_mutex_unlock(&p->mu);
    return idx >= 0 ? HCOMP_OK : HCOMP_E_INVAL;
}

int hcomp_predictor_predict_range(hcomp_predictor *p, const hcomp_features *f, size_t first,
                                  size_t count, hcomp_model_prediction *out)
{
    double x[HCOMP_NFEAT];
    if (p == NULL || f == NULL || out == NULL || first > p->nmodels ||
        count > p->nmodels - first ||
        hcomp_feature_vector(f->dtype, f->dist, f->entropy, f->probe_ratio, x) != 0)
        return HCOMP_E_INVAL;
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < count; i++) {
        const hcomp_model *m = &p->models[first + i];
        out[i].codec = m->codec;
        out[i].level = m->level;
        predict_model(m, f->dtype, x, &out[i].pred, &out[i].line);
    }
    pthread_mutex_unlock(&p->mu);
    return HCOMP_OK;
}

size_t hcomp_predictor_corrected(hcomp_predictor *p, int dtype, unsigned *codec, int *level,
                                 size_t max)
{
    size_t n = 0;
    if (p == NULL || dtype < 0 || dtype >= HCOMP_DTYPE_COUNT)
        return 0;
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->nmodels; i++) {
        const hcomp_model *m = &p->models[i];
        if (!(m->local_dtypes >> dtype & 1u))
            continue;
        if (n < max) {
            codec[n] = m->codec;
            level[n] = m->level;
        }
        n++;
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

int hcomp_predictor_observe(hcomp_predictor *p, const hcomp_features *f, unsigned codec,
                            int level, size_t raw_len, size_t stored_len, double comp_seconds,
                            double decomp_seconds)
{
    if (p == NULL || f == NULL || raw_len == 0 || stored_len == 0 || !isfinite(comp_seconds) ||
        !isfinite(decomp_seconds) || (comp_seconds <= 0 && decomp_seconds <= 0))
        return HCOMP_E_INVAL;
    int slot = level_slot(codec, &level);
    double x[HCOMP_NFEAT];
    if (slot < 0 || hcomp_feature_vector(f->dtype, f->dist, f->entropy, f->probe_ratio, x) != 0)
        return HCOMP_E_INVAL;
    hcomp_row r;
    memset(&r, 0, sizeof(r));
    r.dtype = f->dtype;
    r.dist = f->dist;
    r.entropy = f->entropy;
    r.probe_ratio = f->probe_ratio;
    r.raw_len = raw_len;
    r.y[HCOMP_TARGET_RATIO] = (double) raw_len / (double) stored_len;
    r.y[HCOMP_TARGET_COMP] = comp_seconds > 0 ? (double) raw_len / comp_seconds : 0.0;
    r.y[HCOMP_TARGET_DECOMP] = decomp_seconds > 0 ? (double) raw_len / decomp_seconds : 0.0;
    r.observed = 1;
    /* not rounded to a seed's 6 digits here (four snprintf/strtod pairs, 1.2 us, were most
     * of the feedback's cost): a seed's writer rounds what it writes */
    pthread_mutex_lock(&p->mu);
    int idx = p->index[codec][slot];
    if (idx < 0) {
        pthread_mutex_unlock(&p->mu);
        return HCOMP_E_INVAL;
    }
    if (p->interval == 0) {
        pthread_mutex_unlock(&p->mu);
        return HCOMP_OK; /* feedback off */
    }
    hcomp_model *m = &p->models[idx];
    m->ring[m->ring_next] = r;
    m->ring_next = (m->ring_next + 1) % HCOMP_OBS_RING;
    double ly[HCOMP_NTARGET];
    for (int t = 0; t < HCOMP_NTARGET; t++) {
        ly[t] = r.y[t] > 0 ? log(r.y[t]) : NAN;
        if (r.y[t] > 0) {
            /* older observations decay by HCOMP_OBS_DECAY each: the new one is weighed
             * up by the inverse instead, and the sums divided by the gain at a refit
             * (a scale of the whole sums per observation cost more than the rest) */
            double g = m->obs_gain[t] / HCOMP_OBS_DECAY;
            if (!(g < 1e150)) {
                normal_scale(&m->obs_ne[t], 1.0 / m->obs_gain[t]);
                g = 1.0 / HCOMP_OBS_DECAY;
            }
            m->obs_gain[t] = g;
            normal_add(&m->obs_ne[t], x, ly[t], HCOMP_OBS_WEIGHT * g);
        }
    }
    if (m->ring_len < HCOMP_OBS_RING)
        m->ring_len++;
    p->dirty++;
    /* the freshest measurement is the best guide to the next like buffer: it corrects its
     * neighbourhood now (0.2 us); the regression waits for the interval (a solve, and the
     * engine predicts its task streams again after one) */
    local_add(m, r.dtype, x, ly);
    if (++m->since_fit >= p->interval) {
        m->since_fit = 0;
        hcomp_model_fit(m, 1);
        p->generation++;
    }
    pthread_mutex_unlock(&p->mu);
    return HCOMP_OK;
}

void hcomp_predictor_set_feedback_interval(hcomp_predictor *p, unsigned n)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->interval = n;
    pthread_mutex_unlock(&p->mu);
}

int hcomp_predictor_save(hcomp_predictor *p, const char *path, hcomp_error *err)
{
    if (p == NULL || path == NULL || path[0] == '\0')
        return hcomp_fail(err, HCOMP_E_INVAL, "hcomp_predictor_save: no predictor or path");
    pthread_mutex_lock(&p->mu);
    char *text = hcomp_seed_dump(p);
    unsigned long saved = p->dirty;
    pthread_mutex_unlock(&p->mu);
    if (text == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "seed %s: out of memory writing it", path);
    int rc = hcomp_seed_write_file(path, text, 1, err);
    free(text);
    if (rc == HCOMP_OK) {
        pthread_mutex_lock(&p->mu);
        p->dirty -= saved; /* observations made while writing stay dirty */
        pthread_mutex_unlock(&p->mu);
    }
    return rc;
}

unsigned long hcomp_predictor_generation(hcomp_predictor *p)
{
    pthread_mutex_lock(&p->mu);
    unsigned long g = p->generation;
    pthread_mutex_unlock(&p->mu);
    return g;
}

int hcomp_predictor_embedded_pristine(hcomp_predictor *p)
{
    pthread_mutex_lock(&p->mu);
    int pristine = p->embedded && p->generation == 0;
    pthread_mutex_unlock(&p->mu);
    return pristine;
}

unsigned long hcomp_predictor_dirty(const hcomp_predictor *p)
{
    if (p == NULL)
        return 0;
    hcomp_predictor *q = (hcomp_predictor *) p; /* the mutex is not part of the value */
    pthread_mutex_lock(&q->mu);
    unsigned long d = q->dirty;
    pthread_mutex_unlock(&q->mu);
    return d;
}

size_t hcomp_predictor_model_count(const hcomp_predictor *p)
{
    return p != NULL ? p->nmodels : 0; /* fixed after load */
}

int hcomp_predictor_model_at(hcomp_predictor *p, size_t index, hcomp_model_info *out)
{
    if (p == NULL || out == NULL || index >= p->nmodels)
        return HCOMP_E_INVAL;
    pthread_mutex_lock(&p->mu);
    const hcomp_model *m = &p->models[index];
    out->codec = m->codec;
    out->level = m->level;
    out->rows = m->nrows;
    out->observations = m->ring_len;
    for (int t = 0; t < HCOMP_NTARGET; t++)
        out->r2[t] = m->r2[t];
    pthread_mutex_unlock(&p->mu);
    return HCOMP_OK;
}

size_t hcomp_predictor_tier_count(const hcomp_predictor *p)
{
    return p != NULL ? p->ntiers : 0;
}

int hcomp_predictor_tier_at(const hcomp_predictor *p, size_t index, hcomp_tier_signature *out)
{
    if (p == NULL || out == NULL || index >= p->ntiers)
        return HCOMP_E_INVAL;
    *out = p->tiers[index];
    return HCOMP_OK;
}

int hcomp_predictor_weights(const hcomp_predictor *p, double *w_comp, double *w_decomp,
                            double *w_ratio)
{
    if (p == NULL || !p->has_weights)
        return HCOMP_E_INVAL;
    if (w_comp)
        *w_comp = p->weights[0];
    if (w_decomp)
        *w_decomp = p->weights[1];
    if (w_ratio)
        *w_ratio = p->weights[2];
    return HCOMP_OK;
}

const char *hcomp_predictor_source(const hcomp_predictor *p)
{
    return p != NULL ? p->source : "";
}
