/* Unit tests of the cost predictor: a seed made by an in-process quick profile on
 * small data predicts held-out data (other sizes, shapes and generator seed) better
 * than a constant model; the feedback loop moves predictions toward what is observed;
 * the refit interval; thread safety; the cost of a prediction; argument checks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hcomp_model.h"
#include "engine/predictor.h"
#include "profiler/profile_core.h"

#define KIB ((size_t) 1024)

static hcomp_predictor *g_pred; /* trained once by the group setup */

static void small_opts(hcomp_profile_opts *o, unsigned long seed, size_t size)
{
    hcomp_profile_opts_init(o, 0);
    o->seed = seed;
    o->sizes[0] = size;
    o->nsizes = 1;
    /* codecs whose ratio and speed depend strongly on the data */
    o->models[0] = (hcomp_model_id){HCOMP_CODEC_LZ4, 1};
    o->models[1] = (hcomp_model_id){HCOMP_CODEC_ZSTD, 1};
    o->models[2] = (hcomp_model_id){HCOMP_CODEC_ZLIB, 1};
    o->nmodels = 3;
    o->min_reps = 3;
    o->min_seconds = 0.0;
}

static int train(void **state)
{
    (void) state;
    hcomp_profile_opts o;
    small_opts(&o, 11, 32 * KIB);
    g_pred = hcomp_predictor_new();
    assert_non_null(g_pred);
    hcomp_error err;
    hcomp_predictor_set_provenance(g_pred, "test_predictor");
    int rc = hcomp_profile_run(&o, g_pred, &err);
    if (rc != HCOMP_OK)
        fail_msg("profile run: %s", err.msg);
    return 0;
}

static int untrain(void **state)
{
    (void) state;
    hcomp_predictor_free(g_pred);
    return 0;
}

/* Held-out data: another generator seed, another size, random shapes. */
static void test_beats_constant_model(void **state)
{
    (void) state;
    hcomp_profile_opts o;
    small_opts(&o, 977, 48 * KIB);
    hcomp_report rep;
    hcomp_error err;
    assert_int_equal(hcomp_profile_report(&o, g_pred, &rep, &err), HCOMP_OK);
    hcomp_profile_print_report(stdout, &rep);
    assert_int_equal(rep.nmodels, 3);
    for (size_t m = 0; m < rep.nmodels; m++) {
        const hcomp_accuracy *a = &rep.per_model[m];
        assert_true(a->n >= 40);
        /* ratio: clearly better than the best constant */
        assert_true(a->r2[HCOMP_TARGET_RATIO] > 0.5);
        assert_true(a->mre[HCOMP_TARGET_RATIO] < a->mre_const[HCOMP_TARGET_RATIO]);
    }
    /* speeds are noisier (a shared machine, small buffers): better than constant overall */
    assert_true(rep.overall.r2[HCOMP_TARGET_COMP] > 0.0);
    assert_true(rep.overall.r2[HCOMP_TARGET_RATIO] > 0.5);
}

static double dist_log(double a, double b)
{
    return fabs(log(a) - log(b));
}

/* Observing a shifted outcome repeatedly pulls the prediction toward it: at once through
 * the local correction of its neighbourhood (the regression stays as it was until the
 * interval is reached), and the refits carry it on. */
static void test_feedback_moves_prediction(void **state)
{
    (void) state;
    hcomp_error err;
    char path[] = "/tmp/hcomp-test-pred-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(hcomp_predictor_save(g_pred, path, &err), HCOMP_OK);
    hcomp_predictor *p = NULL;
    assert_int_equal(hcomp_predictor_load(path, &p, &err), HCOMP_OK);
    unlink(path);

    hcomp_features f = {HCOMP_DTYPE_DOUBLE, HCOMP_DIST_NORMAL, 6.5, 1.3, 0};
    hcomp_prediction before, mid, after;
    assert_int_equal(hcomp_predictor_predict(p, &f, HCOMP_CODEC_ZSTD, 1, &before), HCOMP_OK);
    double target_ratio = before.ratio * 3.0, target_comp = before.comp_Bps * 0.25;
    double target_decomp = before.decomp_Bps * 0.5;
    size_t raw = 1 << 20;
    size_t stored = (size_t) ((double) raw / target_ratio);
    double tc = (double) raw / target_comp, td = (double) raw / target_decomp;
    hcomp_predictor_set_feedback_interval(p, 16);
    hcomp_model *zm = hcomp_predictor_model(p, HCOMP_CODEC_ZSTD, 1, 0);
    assert_non_null(zm);
    double coef[HCOMP_NTARGET][HCOMP_NFEAT];
    memcpy(coef, zm->coef, sizeof(coef));
    assert_int_equal(hcomp_predictor_observe(p, &f, HCOMP_CODEC_ZSTD, 1, raw, stored, tc, td),
                     HCOMP_OK);
    /* one observation: its neighbourhood is corrected most of the way (the correction
     * is shrunk by 1 / (1 + HCOMP_LOCAL_SHRINK)), the regression untouched */
    assert_int_equal(hcomp_predictor_predict(p, &f, HCOMP_CODEC_ZSTD, 1, &mid), HCOMP_OK);
    assert_true(dist_log(mid.ratio, target_ratio) < 0.1 * dist_log(before.ratio, target_ratio));
    assert_true(dist_log(mid.comp_Bps, target_comp) < 0.1 * dist_log(before.comp_Bps, target_comp));
    assert_memory_equal(coef, zm->coef, sizeof(coef));
    for (int i = 1; i < 15; i++)
        assert_int_equal(hcomp_predictor_observe(p, &f, HCOMP_CODEC_ZSTD, 1, raw, stored, tc, td),
                         HCOMP_OK);
    assert_memory_equal(coef, zm->coef, sizeof(coef));
    assert_int_equal(hcomp_predictor_generation(p), 0);
    assert_int_equal(hcomp_predictor_dirty(p), 15);
    assert_int_equal(hcomp_predictor_observe(p, &f, HCOMP_CODEC_ZSTD, 1, raw, stored, tc, td),
                     HCOMP_OK);
    assert_memory_not_equal(coef, zm->coef, sizeof(coef));  /* the 16th: a refit */
    assert_int_equal(hcomp_predictor_generation(p), 1);
    for (int i = 16; i < 64; i++)
        assert_int_equal(hcomp_predictor_observe(p, &f, HCOMP_CODEC_ZSTD, 1, raw, stored, tc,
                                                 i % 2 ? td : -1.0), HCOMP_OK);
    assert_int_equal(hcomp_predictor_predict(p, &f, HCOMP_CODEC_ZSTD, 1, &after), HCOMP_OK);
    print_message("ratio %.3g -> %.3g (observed %.3g); compress %.3g -> %.3g MB/s (observed "
                  "%.3g); decompress %.3g -> %.3g MB/s (observed %.3g)\n", before.ratio,
                  after.ratio, target_ratio, before.comp_Bps / 1e6, after.comp_Bps / 1e6,
                  target_comp / 1e6, before.decomp_Bps / 1e6, after.decomp_Bps / 1e6,
                  target_decomp / 1e6);
    /* at least halfway there, in log terms */
    assert_true(dist_log(after.ratio, target_ratio) < 0.5 * dist_log(before.ratio, target_ratio));
    assert_true(dist_log(after.comp_Bps, target_comp) < 0.5 * dist_log(before.comp_Bps, target_comp));
    assert_true(dist_log(after.decomp_Bps, target_decomp) <
                0.5 * dist_log(before.decomp_Bps, target_decomp));
    /* other models are untouched */
    hcomp_prediction l1, l2;
    assert_int_equal(hcomp_predictor_predict(g_pred, &f, HCOMP_CODEC_LZ4, 1, &l1), HCOMP_OK);
    assert_int_equal(hcomp_predictor_predict(p, &f, HCOMP_CODEC_LZ4, 1, &l2), HCOMP_OK);
    assert_true(fabs(l1.ratio / l2.ratio - 1) < 1e-9);
    hcomp_model_info info;
    assert_int_equal(hcomp_predictor_model_at(p, 1, &info), HCOMP_OK);
    assert_int_equal(info.codec, HCOMP_CODEC_ZSTD);
    assert_int_equal(info.observations, 64);
    hcomp_predictor_free(p);
}

/* A run's refits solve the normal equations (fast); on the seed rows alone they must give
 * what the truncated-SVD fit gives: the same coefficients and R^2 for every model and
 * target of the embedded seed. Then observations of one target refit that target alone. */
static void test_normal_equations_match_svd(void **state)
{
    (void) state;
    hcomp_predictor *p;
    hcomp_error err;
    assert_int_equal(hcomp_predictor_load(NULL, &p, &err), HCOMP_OK);
    for (size_t i = 0; i < p->nmodels; i++) {
        hcomp_model *m = &p->models[i];
        assert_int_equal(hcomp_model_fit(m, 0), HCOMP_NTARGET);
        double coef[HCOMP_NTARGET][HCOMP_NFEAT], r2[HCOMP_NTARGET];
        memcpy(coef, m->coef, sizeof(coef));
        memcpy(r2, m->r2, sizeof(r2));
        assert_int_equal(hcomp_model_fit(m, 1), HCOMP_NTARGET);
        for (int t = 0; t < HCOMP_NTARGET; t++) {
            if (fabs(m->r2[t] - r2[t]) > 1e-6)
                fail_msg("model %zu target %d: R^2 %.9f by the normal equations, %.9f by SVD", i,
                         t, m->r2[t], r2[t]);
            for (int j = 0; j < HCOMP_NFEAT; j++)
                if (fabs(m->coef[t][j] - coef[t][j]) > 1e-6 * (1 + fabs(coef[t][j])))
                    fail_msg("model %zu target %d coefficient %d: %.9g by the normal equations, "
                             "%.9g by SVD", i, t, j, m->coef[t][j], coef[t][j]);
        }
    }
    /* decompression observations only: compression coefficients stay as they were */
    hcomp_model *m = hcomp_predictor_model(p, HCOMP_CODEC_ZSTD, 3, 0);
    assert_non_null(m);
    double comp[HCOMP_NFEAT], dec[HCOMP_NFEAT];
    memcpy(comp, m->coef[HCOMP_TARGET_COMP], sizeof(comp));
    memcpy(dec, m->coef[HCOMP_TARGET_DECOMP], sizeof(dec));
    hcomp_predictor_set_feedback_interval(p, 4);
    hcomp_features f = {HCOMP_DTYPE_FLOAT, HCOMP_DIST_NORMAL, 6.0, 1.4, 0};
    for (int i = 0; i < 8; i++)
        assert_int_equal(hcomp_predictor_observe(p, &f, HCOMP_CODEC_ZSTD, 3, 1 << 20, 600000, 0,
                                                 1e-5), HCOMP_OK);
    assert_memory_equal(comp, m->coef[HCOMP_TARGET_COMP], sizeof(comp));
    assert_memory_not_equal(dec, m->coef[HCOMP_TARGET_DECOMP], sizeof(dec));
    hcomp_predictor_free(p);
}

/* Observations decay by weighing each new one up (the sums are divided by that gain at a
 * refit) and the sums are rescaled before the gain overflows (it would after about 130000
 * observations): after 140000 observations of one outcome and 3000 of another, a refit
 * gives what 3000 of the second alone give (the first weigh 0.99458^3000 = 1e-7 by then). */
static void test_observation_decay_long_run(void **state)
{
    (void) state;
    hcomp_error err;
    hcomp_predictor *p, *q;
    assert_int_equal(hcomp_predictor_load(NULL, &p, &err), HCOMP_OK);
    assert_int_equal(hcomp_predictor_load(NULL, &q, &err), HCOMP_OK);
    hcomp_predictor_set_feedback_interval(p, 1000);
    hcomp_predictor_set_feedback_interval(q, 1000);
    const size_t raw = 1 << 20;
    for (int i = 0; i < 143000; i++) {
        /* four feature points, so that the fit is determined by the observations */
        hcomp_features f = {HCOMP_DTYPE_FLOAT, i % 2 ? HCOMP_DIST_NORMAL : HCOMP_DIST_GAMMA,
                            5.0 + (i % 4) * 0.5, 1.2 + (i % 4 / 2) * 0.6, 0};
        int late = i >= 140000;
        size_t stored = late ? 200000 + (size_t) (i % 4) * 50000 : 900000;
        double t = late ? 2e-3 * (1 + i % 4) : 1e-4;
        assert_int_equal(hcomp_predictor_observe(p, &f, HCOMP_CODEC_ZSTD, 3, raw, stored, t, 0.0),
                         HCOMP_OK);
        if (late)
            assert_int_equal(hcomp_predictor_observe(q, &f, HCOMP_CODEC_ZSTD, 3, raw, stored, t,
                                                     0.0), HCOMP_OK);
    }
    const hcomp_model *mp = hcomp_predictor_model(p, HCOMP_CODEC_ZSTD, 3, 0);
    const hcomp_model *mq = hcomp_predictor_model(q, HCOMP_CODEC_ZSTD, 3, 0);
    assert_true(mp->obs_gain[HCOMP_TARGET_RATIO] < 1e150);   /* rescaled on the way */
    for (int t = 0; t < 2; t++)
        for (int j = 0; j < HCOMP_NFEAT; j++)
            if (!(fabs(mp->coef[t][j] - mq->coef[t][j]) <= 1e-4 * (1 + fabs(mq->coef[t][j]))))
                fail_msg("target %d coefficient %d: %.9g after the long run, %.9g after its "
                         "last 3000 observations alone", t, j, mp->coef[t][j], mq->coef[t][j]);
    hcomp_predictor_free(p);
    hcomp_predictor_free(q);
}

/* What the linear model cannot fit, the local corrections learn: three kinds of data of
 * one type whose speeds and ratios zigzag against entropy (no line through them) are each
 * predicted within 15% after one feedback interval of observations of each; other types
 * get no correction; a seed saved with the observations gives the same predictions. */
static void test_local_corrections(void **state)
{
    (void) state;
    hcomp_predictor *p;
    hcomp_error err;
    assert_int_equal(hcomp_predictor_load(NULL, &p, &err), HCOMP_OK);
    hcomp_predictor_set_feedback_interval(p, 16);
    const double factor[3] = {3.0, 1.0 / 3.0, 3.0};
    hcomp_features f[3];
    double want_ratio[3], want_comp[3];
    size_t raw = 1 << 20;
    for (int k = 0; k < 3; k++) {
        f[k] = (hcomp_features){HCOMP_DTYPE_DOUBLE, HCOMP_DIST_NORMAL, 5.0 + 0.5 * k, 1.3, 0};
        hcomp_prediction base;
        assert_int_equal(hcomp_predictor_predict(p, &f[k], HCOMP_CODEC_ZSTD, 3, &base), HCOMP_OK);
        want_ratio[k] = 1.0 + (base.ratio - 1.0) * factor[k];
        want_comp[k] = base.comp_Bps * factor[k];
    }
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 3; k++)
            assert_int_equal(hcomp_predictor_observe(p, &f[k], HCOMP_CODEC_ZSTD, 3, raw,
                                                     (size_t) ((double) raw / want_ratio[k]),
                                                     (double) raw / want_comp[k], 0.0), HCOMP_OK);
    hcomp_model *m = hcomp_predictor_model(p, HCOMP_CODEC_ZSTD, 3, 0);
    assert_non_null(m);
    double worst_global = 0.0, got[3][2];
    for (int k = 0; k < 3; k++) {
        hcomp_prediction q;
        assert_int_equal(hcomp_predictor_predict(p, &f[k], HCOMP_CODEC_ZSTD, 3, &q), HCOMP_OK);
        print_message("kind %d: ratio %.3f (observed %.3f), compression %.1f MB/s (observed "
                      "%.1f)\n", k, q.ratio, want_ratio[k], q.comp_Bps / 1e6, want_comp[k] / 1e6);
        assert_true(dist_log(q.ratio, want_ratio[k]) < log(1.15));
        assert_true(dist_log(q.comp_Bps, want_comp[k]) < log(1.15));
        got[k][0] = q.ratio;
        got[k][1] = q.comp_Bps;
        /* the refit line alone is far off for at least one kind */
        double x[HCOMP_NFEAT], corr[HCOMP_NTARGET];
        assert_int_equal(hcomp_feature_vector(f[k].dtype, f[k].dist, f[k].entropy,
                                              f[k].probe_ratio, x), 0);
        hcomp_model_local_correction(m, f[k].dtype, x, corr);
        double line = log(q.comp_Bps) - corr[HCOMP_TARGET_COMP];
        if (fabs(line - log(want_comp[k])) > worst_global)
            worst_global = fabs(line - log(want_comp[k]));
    }
    assert_true(worst_global > log(1.5));
    /* another element type: no correction */
    double x[HCOMP_NFEAT], corr[HCOMP_NTARGET];
    assert_int_equal(hcomp_feature_vector(HCOMP_DTYPE_INT32, HCOMP_DIST_NORMAL, 5.0, 1.3, x), 0);
    hcomp_model_local_correction(m, HCOMP_DTYPE_INT32, x, corr);
    for (int t = 0; t < HCOMP_NTARGET; t++)
        assert_true(corr[t] == 0.0);
    /* the next run starts from the saved observations */
    char path[] = "/tmp/hcomp-test-local-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(hcomp_predictor_save(p, path, &err), HCOMP_OK);
    hcomp_predictor *p2 = NULL;
    assert_int_equal(hcomp_predictor_load(path, &p2, &err), HCOMP_OK);
    unlink(path);
    for (int k = 0; k < 3; k++) {
        hcomp_prediction q;
        assert_int_equal(hcomp_predictor_predict(p2, &f[k], HCOMP_CODEC_ZSTD, 3, &q), HCOMP_OK);
        assert_true(dist_log(q.ratio, got[k][0]) < 0.02);
        assert_true(dist_log(q.comp_Bps, got[k][1]) < 0.02);
    }
    hcomp_predictor_free(p2);
    hcomp_predictor_free(p);
}

/* Loads of the embedded seed are independent models (the process parses it once and
 * copies it): what one learns, the next load does not start from; before a refit, one that
 * has observed predicts every other copy's lines plus its own corrections, and names the
 * models it corrects; and it saves, and so describes itself, exactly as a load of the seed
 * parsed afresh. */
static void test_embedded_loads_independent(void **state)
{
    (void) state;
    hcomp_error err;
    hcomp_predictor *a = NULL, *b = NULL;
    assert_int_equal(hcomp_predictor_load(NULL, &a, &err), HCOMP_OK);
    hcomp_features f = {HCOMP_DTYPE_FLOAT, HCOMP_DIST_NORMAL, 5.5, 1.6, 0};
    hcomp_prediction before, learnt, fresh;
    assert_int_equal(hcomp_predictor_predict(a, &f, HCOMP_CODEC_LZ4, 1, &before), HCOMP_OK);
    hcomp_predictor_set_feedback_interval(a, 4);
    size_t raw = 1 << 20, stored = (size_t) ((double) raw / (before.ratio * 2.0));
    for (int i = 0; i < 32; i++)
        assert_int_equal(hcomp_predictor_observe(a, &f, HCOMP_CODEC_LZ4, 1, raw, stored, 1e-3,
                                                 5e-4), HCOMP_OK);
    assert_int_equal(hcomp_predictor_predict(a, &f, HCOMP_CODEC_LZ4, 1, &learnt), HCOMP_OK);
    assert_true(learnt.ratio > before.ratio * 1.5);     /* premise: a learnt */
    assert_int_equal(hcomp_predictor_load(NULL, &b, &err), HCOMP_OK);
    assert_int_equal(hcomp_predictor_predict(b, &f, HCOMP_CODEC_LZ4, 1, &fresh), HCOMP_OK);
    assert_true(fresh.ratio == before.ratio && fresh.comp_Bps == before.comp_Bps &&
                fresh.decomp_Bps == before.decomp_Bps);
    assert_int_equal(hcomp_predictor_dirty(b), 0);
    assert_true(hcomp_predictor_model_count(b) == hcomp_predictor_model_count(a));
    assert_true(hcomp_predictor_embedded_pristine(b) && !hcomp_predictor_embedded_pristine(a));
    /* one observation, no refit yet: the line is still every copy's, and the model whose
     * prediction the observation corrected is named, for that element type only */
    hcomp_predictor *d = NULL;
    assert_int_equal(hcomp_predictor_load(NULL, &d, &err), HCOMP_OK);
    hcomp_predictor_set_feedback_interval(d, 16);
    unsigned codec[4];
    int level[4];
    assert_int_equal(hcomp_predictor_corrected(d, f.dtype, codec, level, 4), 0);
    assert_int_equal(hcomp_predictor_observe(d, &f, HCOMP_CODEC_LZ4, 1, raw, stored, 1e-3, 5e-4),
                     HCOMP_OK);
    assert_int_equal(hcomp_predictor_generation(d), 0);
    assert_true(hcomp_predictor_embedded_pristine(d));
    assert_int_equal(hcomp_predictor_corrected(d, f.dtype, codec, level, 4), 1);
    assert_int_equal(codec[0], HCOMP_CODEC_LZ4);
    assert_int_equal(level[0], 1);
    assert_int_equal(hcomp_predictor_corrected(d, HCOMP_DTYPE_INT32, codec, level, 4), 0);
    size_t nm = hcomp_predictor_model_count(d);
    hcomp_model_prediction *pd = calloc(nm, sizeof(*pd)), *pb = calloc(nm, sizeof(*pb));
    assert_non_null(pd);
    assert_non_null(pb);
    assert_int_equal(hcomp_predictor_predict_range(d, &f, 0, nm, pd), HCOMP_OK);
    assert_int_equal(hcomp_predictor_predict_range(b, &f, 0, nm, pb), HCOMP_OK);
    for (size_t i = 0; i < nm; i++) {
        assert_memory_equal(&pd[i].line, &pb[i].pred, sizeof(pd[i].line));
        if (pd[i].codec == HCOMP_CODEC_LZ4 && pd[i].level == 1)
            assert_true(pd[i].pred.ratio > 1.5 * pd[i].line.ratio);
        else
            assert_memory_equal(&pd[i].pred, &pb[i].pred, sizeof(pd[i].pred));
    }
    free(pd);
    free(pb);
    hcomp_predictor_free(d);
    /* the copy writes the same seed as the embedded text parsed afresh */
    char *text = hcomp_seed_default_text(), *mine = hcomp_seed_dump(b);
    hcomp_predictor *c = NULL;
    assert_non_null(text);
    assert_non_null(mine);
    assert_int_equal(hcomp_seed_parse(text, strlen(text), "embedded default seed", &c, &err), HCOMP_OK);
    char *theirs = hcomp_seed_dump(c);
    assert_non_null(theirs);
    assert_string_equal(mine, theirs);
    free(text);
    free(mine);
    free(theirs);
    hcomp_predictor_free(c);
    hcomp_predictor_free(a);
    hcomp_predictor_free(b);
}

static void test_feedback_disabled(void **state)
{
    (void) state;
    hcomp_features f = {HCOMP_DTYPE_INT32, HCOMP_DIST_GAMMA, 4.0, 2.0, 0};
    hcomp_prediction before, after;
    hcomp_predictor_set_feedback_interval(g_pred, 0);
    assert_int_equal(hcomp_predictor_predict(g_pred, &f, HCOMP_CODEC_ZLIB, 1, &before), HCOMP_OK);
    for (int i = 0; i < 100; i++)
        assert_int_equal(hcomp_predictor_observe(g_pred, &f, HCOMP_CODEC_ZLIB, 1, 4096, 100, 1e-3,
                                                 1e-4), HCOMP_OK);
    assert_int_equal(hcomp_predictor_predict(g_pred, &f, HCOMP_CODEC_ZLIB, 1, &after), HCOMP_OK);
    assert_true(before.ratio == after.ratio);
    assert_int_equal(hcomp_predictor_dirty(g_pred), 0);
    hcomp_predictor_set_feedback_interval(g_pred, HCOMP_FEEDBACK_DEFAULT);
}

static void test_bad_arguments(void **state)
{
    (void) state;
    hcomp_features f = {HCOMP_DTYPE_BYTES, HCOMP_DIST_UNIFORM, 8.0, 1.0, 0};
    hcomp_prediction pr;
    /* the default level of lz4 and zstd is 1: those models exist */
    assert_int_equal(hcomp_predictor_predict(g_pred, &f, HCOMP_CODEC_LZ4, HCOMP_LEVEL_DEFAULT, &pr),
                     HCOMP_OK);
    assert_int_equal(hcomp_predictor_predict(g_pred, &f, HCOMP_CODEC_ZSTD, HCOMP_LEVEL_DEFAULT, &pr),
                     HCOMP_OK);
    /* no model, no such level, no such codec */
    assert_int_equal(hcomp_predictor_predict(g_pred, &f, HCOMP_CODEC_ZSTD, 19, &pr), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_predict(g_pred, &f, HCOMP_CODEC_ZSTD, 99, &pr), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_predict(g_pred, &f, HCOMP_CODEC_BZIP2, 9, &pr), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_predict(g_pred, &f, 200, 0, &pr), HCOMP_E_INVAL);
    hcomp_features bad = f;
    bad.dtype = 7;
    assert_int_equal(hcomp_predictor_predict(g_pred, &bad, HCOMP_CODEC_LZ4, 1, &pr), HCOMP_E_INVAL);
    bad = f;
    bad.dist = -1;
    assert_int_equal(hcomp_predictor_predict(g_pred, &bad, HCOMP_CODEC_LZ4, 1, &pr), HCOMP_E_INVAL);
    bad = f;
    bad.entropy = NAN;
    assert_int_equal(hcomp_predictor_predict(g_pred, &bad, HCOMP_CODEC_LZ4, 1, &pr), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_predict(NULL, &f, HCOMP_CODEC_LZ4, 1, &pr), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_predict(g_pred, &f, HCOMP_CODEC_LZ4, 1, NULL), HCOMP_E_INVAL);
    /* extreme but valid features give finite predictions */
    hcomp_features wild = {HCOMP_DTYPE_DOUBLE, HCOMP_DIST_GAMMA, 0.0, 1e9, 0};
    assert_int_equal(hcomp_predictor_predict(g_pred, &wild, HCOMP_CODEC_ZLIB, 1, &pr), HCOMP_OK);
    assert_true(isfinite(pr.ratio) && isfinite(pr.comp_Bps) && isfinite(pr.decomp_Bps));
    wild.probe_ratio = 0.0;
    assert_int_equal(hcomp_predictor_predict(g_pred, &wild, HCOMP_CODEC_ZLIB, 1, &pr), HCOMP_OK);
    assert_true(isfinite(pr.ratio) && pr.ratio > 0);
    /* observations that make no sense */
    assert_int_equal(hcomp_predictor_observe(g_pred, &f, HCOMP_CODEC_LZ4, 1, 0, 1, 1, 1), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_observe(g_pred, &f, HCOMP_CODEC_LZ4, 1, 1, 0, 1, 1), HCOMP_E_INVAL);
    /* neither time known (a time <= 0 is unknown: a read knows only decompression) */
    assert_int_equal(hcomp_predictor_observe(g_pred, &f, HCOMP_CODEC_LZ4, 1, 1, 1, 0, 0), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_observe(g_pred, &f, HCOMP_CODEC_LZ4, 1, 1, 1, -1, -1), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_observe(g_pred, &f, HCOMP_CODEC_LZ4, 1, 1, 1, NAN, 1), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_observe(g_pred, &f, HCOMP_CODEC_LZ4, 1, 1, 1, 1, INFINITY), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_observe(g_pred, &f, HCOMP_CODEC_BZIP2, 9, 1, 1, 1, 1), HCOMP_E_INVAL);
    assert_int_equal(hcomp_predictor_dirty(g_pred), 0);
    hcomp_predictor_set_feedback_interval(NULL, 3); /* harmless */
    hcomp_predictor_free(NULL);
    assert_int_equal(hcomp_predictor_model_count(NULL), 0);
}

typedef struct worker_arg {
    hcomp_predictor *p;
    int id;
    int failures;
} worker_arg;

static void *worker(void *v)
{
    worker_arg *a = v;
    hcomp_features f = {a->id % HCOMP_DTYPE_COUNT, a->id % HCOMP_DIST_COUNT, 5.0, 1.5, 0};
    for (int i = 0; i < 2000; i++) {
        hcomp_prediction pr;
        unsigned codec = i % 2 ? HCOMP_CODEC_LZ4 : HCOMP_CODEC_ZLIB;
        if (hcomp_predictor_predict(a->p, &f, codec, 1, &pr) != HCOMP_OK || !isfinite(pr.ratio))
            a->failures++;
        if (hcomp_predictor_observe(a->p, &f, codec, 1, 65536, 30000 + (size_t) i, 1e-4 * (1 + i % 5),
                                    2e-5) != HCOMP_OK)
            a->failures++;
    }
    return NULL;
}

/* Concurrent predictions and observations (with refits) from four threads. */
static void test_threads(void **state)
{
    (void) state;
    pthread_t th[4];
    worker_arg args[4];
    unsigned long before = hcomp_predictor_dirty(g_pred);
    for (int i = 0; i < 4; i++) {
        args[i] = (worker_arg){g_pred, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    assert_int_equal(hcomp_predictor_dirty(g_pred) - before, 8000);
}

/* A prediction is a dot product: well under a microsecond. */
static void test_predict_is_cheap(void **state)
{
    (void) state;
    hcomp_features f = {HCOMP_DTYPE_FLOAT, HCOMP_DIST_EXPONENTIAL, 6.0, 1.1, 0};
    hcomp_prediction pr;
    struct timespec a, b;
    int n = 200000;
    double sink = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        f.entropy = 4.0 + (i & 3);
        hcomp_predictor_predict(g_pred, &f, i % 2 ? HCOMP_CODEC_LZ4 : HCOMP_CODEC_ZSTD, 1, &pr);
        sink += pr.ratio;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec)) / n;
    print_message("predict: %.0f ns per call (sum %.3g)\n", ns, sink);
    assert_true(ns < 20000.0); /* loose: sanitizers, a loaded machine */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_beats_constant_model),
        cmocka_unit_test(test_feedback_moves_prediction),
        cmocka_unit_test(test_normal_equations_match_svd),
        cmocka_unit_test(test_observation_decay_long_run),
        cmocka_unit_test(test_local_corrections),
        cmocka_unit_test(test_embedded_loads_independent),
        cmocka_unit_test(test_feedback_disabled),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_predict_is_cheap),
    };
    return cmocka_run_group_tests(tests, train, untrain);
}
