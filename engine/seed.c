/* The JSON seed (docs/SEED.md): reader, writer, atomic file replacement, and the
 * embedded default seed. Every refusal names the seed and the problem. */
#include "predictor.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reading ------------------------------------------------------------------------- */

/* A non-negative finite number (integer or real); -1 if v is not one. */
static int get_number(json_t *v, double *out)
{
    if (json_is_integer(v))
        *out = (double) json_integer_value(v);
    else if (json_is_real(v))
        *out = json_real_value(v);
    else
        return -1;
    return isfinite(*out) ? 0 : -1;
}

static int check_names(json_t *arr, const char *const *names, int n, const char *what,
                       const char *src, hcomp_error *err)
{
    char expect[512] = "";
    for (int i = 0; i < n; i++) {
        size_t l = strlen(expect);
        snprintf(expect + l, sizeof(expect) - l, "%s%s", i ? ", " : "", names[i]);
    }
    if (!json_is_array(arr))
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: \"%s\" is missing or not an array "
                          "(expected [%s])", src, what, expect);
    if (json_array_size(arr) != (size_t) n)
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: \"%s\" has %zu entries, expected %d "
                          "(%s)", src, what, json_array_size(arr), n, expect);
    for (int i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, (size_t) i);
        if (!json_is_string(e) || strcmp(json_string_value(e), names[i]) != 0)
            return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: \"%s\"[%d] is not \"%s\" "
                              "(expected [%s])", src, what, i, names[i], expect);
    }
    return HCOMP_OK;
}

static void copy_str(char *dst, size_t cap, json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    snprintf(dst, cap, "%s", s);
    /* a string cut inside a UTF-8 character would not be JSON text when saved: cut
     * before that character */
    size_t n = strlen(dst);
    if (s[n] != '\0' && ((unsigned char) s[n] & 0xC0) == 0x80) {
        while (n > 0 && ((unsigned char) dst[n - 1] & 0xC0) == 0x80)
            n--;
        if (n > 0)
            dst[n - 1] = '\0';
    }
}

/* Row field 2 + k (entropy, probe_ratio, bytes, ratio, comp_Bps, decomp_Bps) may hold v:
 * bytes must fit the JSON integer the writer writes it back as. */
static int row_number_ok(int k, double v)
{
    return isfinite(v) && v >= 0 && (k == 0 || k == 2 || v > 0) && (k != 0 || v <= 8.0) &&
           (k != 2 || v < 9223372036854775808.0);
}

static int parse_row(json_t *row, const char *src, const char *where, size_t j, hcomp_row *r,
                     hcomp_error *err)
{
    memset(r, 0, sizeof(*r));
    if (!json_is_array(row) || json_array_size(row) != HCOMP_SEED_ROW_FIELDS)
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s.rows[%zu] is not an array of %d "
                          "values (see \"row_fields\")", src, where, j, HCOMP_SEED_ROW_FIELDS);
    json_t *v = json_array_get(row, 0);
    r->dtype = hcomp_dtype_from_name(json_string_value(v));
    v = json_array_get(row, 1);
    r->dist = hcomp_dist_from_name(json_string_value(v));
    if (r->dtype < 0 || r->dist < 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s.rows[%zu] has an unknown dtype or "
                          "distribution name", src, where, j);
    double num[6];
    for (int k = 0; k < 6; k++) {
        v = json_array_get(row, (size_t) (2 + k));
        if ((k == 4 || k == 5) && json_is_null(v)) {    /* a speed not measured */
            num[k] = 0.0;
            continue;
        }
        if (get_number(v, &num[k]) != 0 || !row_number_ok(k, num[k]))
            return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s.rows[%zu] field \"%s\" is not a "
                              "valid number", src, where, j, hcomp_row_field_names[2 + k]);
    }
    r->entropy = num[0];
    r->probe_ratio = num[1];
    r->raw_len = (uint64_t) num[2];
    r->y[HCOMP_TARGET_RATIO] = num[3];
    r->y[HCOMP_TARGET_COMP] = num[4];
    r->y[HCOMP_TARGET_DECOMP] = num[5];
    v = json_array_get(row, 8);
    if (json_is_string(v) && strcmp(json_string_value(v), "profile") == 0)
        r->observed = 0;
    else if (json_is_string(v) && strcmp(json_string_value(v), "obs") == 0)
        r->observed = 1;
    else
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s.rows[%zu] source must be "
                          "\"profile\" or \"obs\"", src, where, j);
    return HCOMP_OK;
}

static int parse_model(hcomp_predictor *p, json_t *jm, size_t i, const char *src,
                       hcomp_error *err)
{
    char where[64];
    snprintf(where, sizeof(where), "models[%zu]", i);
    if (!json_is_object(jm))
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s is not an object", src, where);
    json_t *jc = json_object_get(jm, "codec"), *jl = json_object_get(jm, "level");
    const hcomp_codec *c = hcomp_codec_by_name(json_string_value(jc));
    if (c == NULL)
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s has a missing or unknown \"codec\"",
                          src, where);
    if (!json_is_integer(jl) || json_integer_value(jl) < c->level_min ||
        json_integer_value(jl) > c->level_max)
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s (%s) has a missing or bad \"level\" "
                          "(%s levels are %d..%d)", src, where, c->name, c->name, c->level_min,
                          c->level_max);
    int level = (int) json_integer_value(jl);
    snprintf(where, sizeof(where), "models[%zu] (%s:%d)", i, c->name, level);
    if (hcomp_predictor_model(p, c->id, level, 0) != NULL)
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s appears twice", src, where);
    hcomp_model *m = hcomp_predictor_model(p, c->id, level, 1);
    if (m == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "seed %s: out of memory", src);

    json_t *coef = json_object_get(jm, "coef");
    if (!json_is_object(coef))
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s has no \"coef\" object", src, where);
    for (int t = 0; t < HCOMP_NTARGET; t++) {
        json_t *a = json_object_get(coef, hcomp_target_names[t]);
        if (!json_is_array(a) || json_array_size(a) != HCOMP_NFEAT)
            return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s coef.%s must be an array of %d "
                              "numbers (the feature vector)", src, where, hcomp_target_names[t],
                              HCOMP_NFEAT);
        for (int k = 0; k < HCOMP_NFEAT; k++)
            if (get_number(json_array_get(a, (size_t) k), &m->coef[t][k]) != 0)
                return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s coef.%s[%d] is not a finite "
                                  "number", src, where, hcomp_target_names[t], k);
    }
    json_t *fit = json_object_get(jm, "fit");
    if (fit != NULL) {
        json_t *n = json_object_get(fit, "n"), *r2 = json_object_get(fit, "r2");
        for (int t = 0; t < HCOMP_NTARGET; t++) {
            json_t *nv = json_object_get(n, hcomp_target_names[t]);
            json_t *rv = json_object_get(r2, hcomp_target_names[t]);
            double d;
            if (json_is_integer(nv) && json_integer_value(nv) >= 0)
                m->nfit[t] = (size_t) json_integer_value(nv);
            if (get_number(rv, &d) == 0)
                m->r2[t] = d;
        }
    }
    json_t *rows = json_object_get(jm, "rows");
    if (!json_is_array(rows))
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: %s has no \"rows\" array", src, where);
    for (size_t j = 0; j < json_array_size(rows); j++) {
        hcomp_row r;
        int rc = parse_row(json_array_get(rows, j), src, where, j, &r, err);
        if (rc != HCOMP_OK)
            return rc;
        if (hcomp_model_add_row(m, &r) != HCOMP_OK)
            return hcomp_fail(err, HCOMP_E_NOMEM, "seed %s: out of memory", src);
    }
    hcomp_model_prepare_refits(m);  /* at load, not on the first write that refits */
    return HCOMP_OK;
}

static int parse_system(hcomp_predictor *p, json_t *sys, const char *src, hcomp_error *err)
{
    if (!json_is_object(sys))
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: \"system\" is not an object", src);
    copy_str(p->system_created, sizeof(p->system_created), json_object_get(sys, "created"));
    json_t *tiers = json_object_get(sys, "tiers");
    if (!json_is_array(tiers))
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: system.tiers is missing or not an "
                          "array", src);
    size_t n = json_array_size(tiers);
    hcomp_tier_signature *t = calloc(n ? n : 1, sizeof(*t));
    if (t == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "seed %s: out of memory", src);
    for (size_t i = 0; i < n; i++) {
        json_t *jt = json_array_get(tiers, i);
        json_t *name = json_object_get(jt, "name");
        if (!json_is_object(jt) || !json_is_string(name)) {
            free(t);
            return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: system.tiers[%zu] has no \"name\"",
                              src, i);
        }
        copy_str(t[i].name, sizeof(t[i].name), name);
        copy_str(t[i].path, sizeof(t[i].path), json_object_get(jt, "path"));
        copy_str(t[i].node, sizeof(t[i].node), json_object_get(jt, "node"));
        json_t *scope = json_object_get(jt, "scope");
        t[i].node_local = json_is_string(scope) &&
                          strcmp(json_string_value(scope), "node-local") == 0;
        static const char *const fields[] = {"write_Bps", "read_Bps", "latency_s", "free_bytes"};
        double v[4];
        for (int k = 0; k < 4; k++)
            if (get_number(json_object_get(jt, fields[k]), &v[k]) != 0 || v[k] < 0) {
                int rc = hcomp_fail(err, HCOMP_E_INVAL, "seed %s: system.tiers[%zu] (%s) \"%s\" "
                                    "is missing or not a non-negative number", src, i,
                                    t[i].name, fields[k]);
                free(t);
                return rc;
            }
        t[i].write_Bps = v[0];
        t[i].read_Bps = v[1];
        t[i].latency_s = v[2];
        t[i].free_bytes = v[3] >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t) v[3];
    }
    free(p->tiers);
    p->tiers = t;
    p->ntiers = n;
    return HCOMP_OK;
}

static int parse_weights(hcomp_predictor *p, json_t *w, const char *src, hcomp_error *err)
{
    static const char *const keys[] = {"compress", "decompress", "ratio"};
    double v[3], sum = 0;
    for (int k = 0; k < 3; k++) {
        if (get_number(json_object_get(w, keys[k]), &v[k]) != 0 || v[k] < 0)
            return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: weights.%s is missing or not a "
                              "non-negative number", src, keys[k]);
        sum += v[k];
    }
    if (!(sum > 0) || !isfinite(sum))
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: weights are all zero, or too large "
                          "to add up", src);
    /* weights already normalised (as a saved seed's, printed to 15 digits) are kept as they
     * are: dividing them by a sum that is 1 give or take the last digit would change that
     * digit, and a seed loaded and saved again would not be the same text */
    int normalised = fabs(sum - 1.0) < 1e-12;
    for (int k = 0; k < 3; k++)
        p->weights[k] = normalised ? v[k] : v[k] / sum;
    p->has_weights = 1;
    return HCOMP_OK;
}

static int parse_doc(hcomp_predictor *p, json_t *doc, const char *src, hcomp_error *err)
{
    json_t *fmt = json_object_get(doc, "format");
    if (!json_is_object(doc) || !json_is_string(fmt) ||
        strcmp(json_string_value(fmt), HCOMP_SEED_FORMAT) != 0)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "seed %s: not an hcomp seed (no \"format\": "
                          "\"%s\" at the top level)", src, HCOMP_SEED_FORMAT);
    json_t *ver = json_object_get(doc, "version");
    if (!json_is_integer(ver))
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: \"version\" is missing or not an "
                          "integer", src);
    if (json_integer_value(ver) != HCOMP_SEED_VERSION)
        return hcomp_fail(err, HCOMP_E_VERSION, "seed %s: format version %lld; this library "
                          "reads version %d (re-run hcomp-profile to make a new seed)", src,
                          (long long) json_integer_value(ver), HCOMP_SEED_VERSION);
    int rc = check_names(json_object_get(doc, "features"), hcomp_feature_names, HCOMP_NFEAT,
                         "features", src, err);
    if (rc == HCOMP_OK)
        rc = check_names(json_object_get(doc, "targets"), hcomp_target_names, HCOMP_NTARGET,
                         "targets", src, err);
    if (rc == HCOMP_OK)
        rc = check_names(json_object_get(doc, "row_fields"), hcomp_row_field_names,
                         HCOMP_SEED_ROW_FIELDS, "row_fields", src, err);
    if (rc != HCOMP_OK)
        return rc;
    copy_str(p->created, sizeof(p->created), json_object_get(doc, "created"));
    copy_str(p->command, sizeof(p->command), json_object_get(doc, "command"));
    json_t *mach = json_object_get(doc, "machine");
    copy_str(p->hostname, sizeof(p->hostname), json_object_get(mach, "hostname"));
    copy_str(p->cpu, sizeof(p->cpu), json_object_get(mach, "cpu"));
    json_t *cores = json_object_get(mach, "cores");
    p->cores = json_is_integer(cores) ? (long) json_integer_value(cores) : -1;

    json_t *models = json_object_get(doc, "models");
    if (!json_is_array(models) || json_array_size(models) == 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: \"models\" is missing or empty", src);
    for (size_t i = 0; i < json_array_size(models); i++)
        if ((rc = parse_model(p, json_array_get(models, i), i, src, err)) != HCOMP_OK)
            return rc;
    json_t *sys = json_object_get(doc, "system");
    if (sys != NULL && !json_is_null(sys) && (rc = parse_system(p, sys, src, err)) != HCOMP_OK)
        return rc;
    json_t *w = json_object_get(doc, "weights");
    if (w != NULL && !json_is_null(w) && (rc = parse_weights(p, w, src, err)) != HCOMP_OK)
        return rc;
    return HCOMP_OK;
}

int hcomp_seed_parse(const char *text, size_t len, const char *source, hcomp_predictor **out,
                     hcomp_error *err)
{
    *out = NULL;
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (doc == NULL) {
        int trunc = jerr.position >= (int) len || strstr(jerr.text, "end of file") != NULL;
        return hcomp_fail(err, HCOMP_E_CORRUPT, "seed %s: not valid JSON%s (line %d, column "
                          "%d: %s)", source, trunc ? ", the file is truncated" : "",
                          jerr.line, jerr.column, jerr.text);
    }
    hcomp_predictor *p = hcomp_predictor_new();
    if (p == NULL) {
        json_decref(doc);
        return hcomp_fail(err, HCOMP_E_NOMEM, "seed %s: out of memory", source);
    }
    snprintf(p->source, sizeof(p->source), "%s", source);
    int rc = parse_doc(p, doc, source, err);
    json_decref(doc);
    if (rc != HCOMP_OK) {
        hcomp_predictor_free(p);
        return rc;
    }
    *out = p;
    hcomp_ok(err);
    return HCOMP_OK;
}

/* ---- writing ------------------------------------------------------------------------- */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *text)
{
    size_t n = strlen(text);
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, text, n + 1);
    b->len += n;
}

static void sb_printf(sbuf *b, const char *fmt, ...) HCOMP_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    sb_add(b, tmp);
}

/* One JSON value, compact, numbers with 15 significant digits (which read back to the
 * same text: a saved seed loaded and saved again is identical). Consumes v. */
static void sb_json(sbuf *b, json_t *v)
{
    if (v == NULL) {
        b->oom = 1;
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    json_decref(v);
    if (s == NULL) {
        b->oom = 1;
        return;
    }
    sb_add(b, s);
    free(s);
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str_array(const char *const *names, int n)
{
    json_t *a = json_array();
    for (int i = 0; a != NULL && i < n; i++)
        json_array_append_new(a, json_string(names[i]));
    return a;
}

static void dump_row(sbuf *b, const hcomp_row *row, int observed)
{
    /* a run's observations are kept unrounded; seeds hold 6 significant digits (rounding
     * the rounded rows of a loaded seed again changes nothing) */
    hcomp_row rounded = *row;
    const hcomp_row *r = &rounded;
    hcomp_row_round(&rounded);
    json_t *a = json_array();
    if (a == NULL) {
        b->oom = 1;
        return;
    }
    json_array_append_new(a, json_string(hcomp_dtype_name(r->dtype)));
    json_array_append_new(a, json_string(hcomp_dist_name(r->dist)));
    json_array_append_new(a, json_real(r->entropy));
    json_array_append_new(a, json_real(r->probe_ratio));
    json_array_append_new(a, json_integer((json_int_t) r->raw_len));
    for (int t = 0; t < HCOMP_NTARGET; t++)
        json_array_append_new(a, r->y[t] > 0 ? json_real(r->y[t]) : json_null());
    json_array_append_new(a, json_string(observed ? "obs" : "profile"));
    sb_json(b, a);
}

static void dump_model(sbuf *b, const hcomp_model *m, int last)
{
    sb_printf(b, "    {\"codec\": \"%s\", \"level\": %d,\n", hcomp_codec_by_id(m->codec)->name,
              m->level);
    sb_add(b, "     \"coef\": {");
    for (int t = 0; t < HCOMP_NTARGET; t++) {
        json_t *a = json_array();
        for (int k = 0; a != NULL && k < HCOMP_NFEAT; k++)
            json_array_append_new(a, json_real(m->coef[t][k]));
        sb_printf(b, "%s\n       \"%s\": ", t ? "," : "", hcomp_target_names[t]);
        sb_json(b, a);
    }
    sb_add(b, "},\n     \"fit\": {\"n\": {");
    for (int t = 0; t < HCOMP_NTARGET; t++)
        sb_printf(b, "%s\"%s\": %zu", t ? ", " : "", hcomp_target_names[t], m->nfit[t]);
    sb_add(b, "}, \"r2\": {");
    for (int t = 0; t < HCOMP_NTARGET; t++) {
        sb_printf(b, "%s\"%s\": ", t ? ", " : "", hcomp_target_names[t]);
        sb_json(b, num(m->r2[t]));
    }
    sb_add(b, "}},\n     \"rows\": [");
    /* Profiler rows, then observations oldest first (saved ones, then this run's ring),
     * keeping the newest HCOMP_SEED_MAX_OBS_ROWS observations. */
    size_t nobs = m->ring_len;
    for (size_t i = 0; i < m->nrows; i++)
        nobs += m->rows[i].observed;
    size_t skip = nobs > HCOMP_SEED_MAX_OBS_ROWS ? nobs - HCOMP_SEED_MAX_OBS_ROWS : 0;
    int first = 1;
    for (size_t i = 0; i < m->nrows + m->ring_len; i++) {
        const hcomp_row *r;
        if (i < m->nrows)
            r = &m->rows[i];
        else
            r = &m->ring[(m->ring_next + HCOMP_OBS_RING - m->ring_len + (i - m->nrows)) %
                         HCOMP_OBS_RING];
        int observed = i >= m->nrows || r->observed;
        if (observed && skip > 0) {
            skip--;
            continue;
        }
        sb_add(b, first ? "\n      " : ",\n      ");
        first = 0;
        dump_row(b, r, observed);
    }
    sb_printf(b, "\n     ]}%s\n", last ? "" : ",");
}

char *hcomp_seed_dump(hcomp_predictor *p)
{
    sbuf b = {0};
    sb_printf(&b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n", HCOMP_SEED_FORMAT,
              HCOMP_SEED_VERSION);
    sb_add(&b, "  \"created\": ");
    sb_json(&b, json_string(p->created));
    sb_add(&b, ",\n  \"command\": ");
    sb_json(&b, json_string(p->command));
    sb_add(&b, ",\n  \"machine\": ");
    json_t *mach = json_object();
    if (mach != NULL) {
        json_object_set_new(mach, "hostname", json_string(p->hostname));
        json_object_set_new(mach, "cores", json_integer(p->cores));
        json_object_set_new(mach, "cpu", json_string(p->cpu));
    }
    sb_json(&b, mach);
    sb_add(&b, ",\n  \"features\": ");
    sb_json(&b, str_array(hcomp_feature_names, HCOMP_NFEAT));
    sb_add(&b, ",\n  \"targets\": ");
    sb_json(&b, str_array(hcomp_target_names, HCOMP_NTARGET));
    sb_add(&b, ",\n  \"row_fields\": ");
    sb_json(&b, str_array(hcomp_row_field_names, HCOMP_SEED_ROW_FIELDS));
    if (p->has_weights)
        sb_printf(&b, ",\n  \"weights\": {\"compress\": %.15g, \"decompress\": %.15g, "
                  "\"ratio\": %.15g}", p->weights[0], p->weights[1], p->weights[2]);
    if (p->ntiers > 0 || p->system_created[0] != '\0') {
        sb_add(&b, ",\n  \"system\": {\"created\": ");
        sb_json(&b, json_string(p->system_created));
        sb_add(&b, ", \"tiers\": [");
        for (size_t i = 0; i < p->ntiers; i++) {
            const hcomp_tier_signature *t = &p->tiers[i];
            json_t *o = json_object();
            if (o != NULL) {
                json_object_set_new(o, "name", json_string(t->name));
                json_object_set_new(o, "path", json_string(t->path));
                json_object_set_new(o, "node", json_string(t->node));
                json_object_set_new(o, "scope",
                                    json_string(t->node_local ? "node-local" : "shared"));
                json_object_set_new(o, "write_Bps", json_real(hcomp_round6(t->write_Bps)));
                json_object_set_new(o, "read_Bps", json_real(hcomp_round6(t->read_Bps)));
                json_object_set_new(o, "latency_s", json_real(hcomp_round6(t->latency_s)));
                json_object_set_new(o, "free_bytes", json_integer(
                    t->free_bytes > (uint64_t) INT64_MAX ? INT64_MAX : (json_int_t) t->free_bytes));
            }
            sb_add(&b, i ? ",\n    " : "\n    ");
            sb_json(&b, o);
        }
        sb_add(&b, "]}");
    }
    sb_add(&b, ",\n  \"models\": [\n");
    for (size_t i = 0; i < p->nmodels; i++)
        dump_model(&b, &p->models[i], i + 1 == p->nmodels);
    sb_add(&b, "  ]\n}\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

int hcomp_seed_write_file(const char *path, const char *text, int overwrite, hcomp_error *err)
{
    char dir[PATH_MAX], base[PATH_MAX], tmp[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    snprintf(base, sizeof(base), "%s", path);
    const char *d = dirname(dir);
    const char *bn = basename(base);
    if ((size_t) snprintf(tmp, sizeof(tmp), "%s/.%s.tmpXXXXXX", d, bn) >= sizeof(tmp))
        return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: path too long", path);
    struct stat st;
    if (!overwrite && lstat(path, &st) == 0)
        return hcomp_fail(err, HCOMP_E_EXIST, "seed %s: file exists (not overwritten)", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return hcomp_fail_errno(err, errno, "seed %s: cannot create a temporary file in %s",
                                path, d);
    mode_t um = umask(0);
    umask(um);
    int rc = HCOMP_OK;
    if (fchmod(fd, 0666 & ~um) != 0 || hcomp_write_full(fd, text, strlen(text)) != 0 ||
        fsync(fd) != 0)
        rc = hcomp_fail_errno(err, errno, "seed %s: cannot write %s", path, tmp);
    if (close(fd) != 0 && rc == HCOMP_OK)
        rc = hcomp_fail_errno(err, errno, "seed %s: cannot write %s", path, tmp);
    if (rc == HCOMP_OK && !overwrite && link(tmp, path) != 0) /* no-clobber replace */
        rc = hcomp_fail_errno(err, errno, "seed %s: cannot create it", path);
    else if (rc == HCOMP_OK && overwrite && rename(tmp, path) != 0)
        rc = hcomp_fail_errno(err, errno, "seed %s: cannot rename %s to it", path, tmp);
    if (rc != HCOMP_OK || !overwrite)
        unlink(tmp);
    if (rc == HCOMP_OK) {
        int dfd = open(d, O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
        hcomp_ok(err);
    }
    return rc;
}

static char *join_lines(const char *const *lines)
{
    size_t n = 0;
    for (size_t i = 0; lines[i] != NULL; i++)
        n += strlen(lines[i]) + 1;
    char *s = malloc(n + 1), *o = s;
    if (s == NULL)
        return NULL;
    for (size_t i = 0; lines[i] != NULL; i++) {
        size_t l = strlen(lines[i]);
        memcpy(o, lines[i], l);
        o += l;
        *o++ = '\n';
    }
    *o = '\0';
    return s;
}

char *hcomp_seed_default_text(void)
{
    return join_lines(hcomp_seed_default_lines);
}

/* The rows of the embedded seed into p's models, in their order, checked as parse_row
 * checks a JSON row (a generated file that does not match its head is refused). */
static int add_default_rows(hcomp_predictor *p, const char *src, hcomp_error *err)
{
    for (size_t j = 0; j < hcomp_seed_default_nrows; j++) {
        const hcomp_seed_row *e = &hcomp_seed_default_rows[j];
        hcomp_row r = {.dtype = hcomp_dtype_from_name(e->dtype),
                       .dist = hcomp_dist_from_name(e->dist),
                       .entropy = e->entropy, .probe_ratio = e->probe_ratio,
                       .raw_len = (uint64_t) e->raw_len, .observed = e->observed != 0};
        double num[6] = {e->entropy, e->probe_ratio, (double) e->raw_len, e->y[0], e->y[1], e->y[2]};
        int ok = e->model < p->nmodels && r.dtype >= 0 && r.dist >= 0;
        for (int k = 0; ok && k < 6; k++)
            ok = ((k == 4 || k == 5) && num[k] == 0.0) || row_number_ok(k, num[k]);
        if (!ok)
            return hcomp_fail(err, HCOMP_E_INVAL, "seed %s: row %zu of its data is not a valid "
                              "row of models[%u] (engine/generated/seed_default.c: run "
                              "scripts/embed-seed again)", src, j, e->model);
        for (int t = 0; t < HCOMP_NTARGET; t++)
            r.y[t] = e->y[t];
        if (hcomp_model_add_round_row(&p->models[e->model], &r) != HCOMP_OK)
            return hcomp_fail(err, HCOMP_E_NOMEM, "seed %s: out of memory", src);
    }
    for (size_t i = 0; i < p->nmodels; i++)
        hcomp_model_prepare_refits(&p->models[i]);
    return HCOMP_OK;
}

int hcomp_seed_load_default(hcomp_predictor **out, hcomp_error *err)
{
    static const char src[] = "embedded default seed";
    *out = NULL;
    char *head = join_lines(hcomp_seed_default_head_lines);
    if (head == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", src);
    hcomp_predictor *p;
    int rc = hcomp_seed_parse(head, strlen(head), src, &p, err);
    free(head);
    if (rc == HCOMP_OK && (rc = add_default_rows(p, src, err)) != HCOMP_OK)
        hcomp_predictor_free(p);
    if (rc == HCOMP_OK)
        *out = p;
    return rc;
}
