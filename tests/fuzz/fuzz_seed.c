/* Fuzz target: the seed reader (engine/seed.c, docs/SEED.md) and what the predictor
 * does with an accepted seed.
 * Properties: a seed is accepted or refused with a documented code and a message
 * naming it; an accepted seed has models, normalised weights, and predicts finite
 * positive ratios and speeds for every model; saving it gives text that loads again and
 * saves to the same text ("a loaded seed saved again is the same text"); after
 * observations and refits it still predicts finite values and saves to a loadable seed. */
#include "fuzz_common.h"
#include "hcomp_model.h"
#include "engine/predictor.h"

#include <math.h>
#include <string.h>

static void check_predictions(hcomp_predictor *p, const char *when)
{
    static const hcomp_features fs[] = {
        {HCOMP_DTYPE_BYTES, HCOMP_DIST_UNIFORM, 8.0, 1.0, 24576},
        {HCOMP_DTYPE_DOUBLE, HCOMP_DIST_NORMAL, 6.2, 1.3, 24576},
        {HCOMP_DTYPE_INT32, HCOMP_DIST_GAMMA, 0.5, 40.0, 4096},
        {HCOMP_DTYPE_FLOAT, HCOMP_DIST_EXPONENTIAL, 0.0, 0.0001, 8},
    };
    for (size_t i = 0; i < hcomp_predictor_model_count(p); i++) {
        hcomp_model_info mi;
        CHECK(hcomp_predictor_model_at(p, i, &mi) == HCOMP_OK, "model_at %zu", i);
        const hcomp_codec *c = hcomp_codec_by_id(mi.codec);
        CHECK(c != NULL && (mi.level == 0 || (mi.level >= c->level_min && mi.level <= c->level_max)),
              "model %zu: codec %u level %d", i, mi.codec, mi.level);
        for (size_t k = 0; k < sizeof(fs) / sizeof(fs[0]); k++) {
            hcomp_prediction pr;
            int rc = hcomp_predictor_predict(p, &fs[k], mi.codec, mi.level, &pr);
            CHECK(rc == HCOMP_OK, "%s: predict of model %zu (%s:%d) returned %d", when, i,
                  c->name, mi.level, rc);
            CHECK(isfinite(pr.ratio) && pr.ratio > 0 && isfinite(pr.comp_Bps) && pr.comp_Bps > 0 &&
                  isfinite(pr.decomp_Bps) && pr.decomp_Bps > 0,
                  "%s: model %s:%d predicts ratio %g, speeds %g and %g", when, c->name, mi.level,
                  pr.ratio, pr.comp_Bps, pr.decomp_Bps);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hcomp_predictor *p = NULL;
    hcomp_error err = {0};
    int rc = hcomp_seed_parse((const char *) data, size, "fuzz-seed", &p, &err);
    CHECK(rc == HCOMP_OK || rc == HCOMP_E_CORRUPT || rc == HCOMP_E_VERSION || rc == HCOMP_E_INVAL,
          "seed parse returned %d (%s)", rc, err.msg);
    if (rc != HCOMP_OK) {
        CHECK(p == NULL && err.code == rc && strstr(err.msg, "fuzz-seed") != NULL,
              "refusal without a message naming the seed: \"%s\"", err.msg);
        return 0;
    }
    CHECK(p != NULL && hcomp_predictor_model_count(p) > 0, "accepted seed without models");
    double w[3];
    if (hcomp_predictor_weights(p, &w[0], &w[1], &w[2]) == HCOMP_OK)
        CHECK(w[0] >= 0 && w[1] >= 0 && w[2] >= 0 && fabs(w[0] + w[1] + w[2] - 1.0) < 1e-9,
              "weights %g %g %g", w[0], w[1], w[2]);
    for (size_t i = 0; i < hcomp_predictor_tier_count(p); i++) {
        hcomp_tier_signature t;
        CHECK(hcomp_predictor_tier_at(p, i, &t) == HCOMP_OK, "tier_at %zu", i);
        CHECK(t.write_Bps >= 0 && t.read_Bps >= 0 && t.latency_s >= 0, "tier %zu speeds", i);
    }
    check_predictions(p, "loaded");

    /* saved, loaded and saved again: the same text */
    char *text = hcomp_seed_dump(p);
    CHECK(text != NULL, "an accepted seed cannot be saved (out of memory?)");
    hcomp_predictor *q = NULL;
    rc = hcomp_seed_parse(text, strlen(text), "fuzz-seed-saved", &q, &err);
    CHECK(rc == HCOMP_OK, "the saved seed does not load: %s", err.msg);
    char *text2 = hcomp_seed_dump(q);
    CHECK(text2 != NULL && strcmp(text, text2) == 0, "a loaded seed saved again differs");
    free(text2);
    free(text);
    hcomp_predictor_free(q);

    /* feedback: observations of the first model, refit every 4 */
    hcomp_model_info mi;
    CHECK(hcomp_predictor_model_at(p, 0, &mi) == HCOMP_OK, "model_at 0");
    hcomp_predictor_set_feedback_interval(p, 4);
    for (int i = 0; i < 12; i++) {
        hcomp_features f = {i % HCOMP_DTYPE_COUNT, i % HCOMP_DIST_COUNT, 0.5 * (i % 16),
                            1.0 + i, 65536};
        rc = hcomp_predictor_observe(p, &f, mi.codec, mi.level, 65536, 1000 + 3000 * (size_t) i,
                                     1e-4 * (i + 1), i % 3 ? 5e-5 : -1.0);
        CHECK(rc == HCOMP_OK, "observe returned %d", rc);
    }
    check_predictions(p, "after refits");
    text = hcomp_seed_dump(p);
    CHECK(text != NULL, "the seed cannot be saved after observations");
    rc = hcomp_seed_parse(text, strlen(text), "fuzz-seed-observed", &q, &err);
    CHECK(rc == HCOMP_OK, "the seed saved after observations does not load: %s", err.msg);
    free(text);
    hcomp_predictor_free(q);
    hcomp_predictor_free(p);
    return 0;
}
