/* Analysis, prediction and placement of a task (docs/ENGINE.md). */
#include "engine.h"
#include "analyzer.h"
#include "tiers/monitor.h"
#include "tiers/piece_header.h"
#include "filter.h"
#include "predictor.h"
#include "codecs/blosc2_env.h"
#include "common/util.h"
#include "common/clock.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hcomp_engine_init(hcomp_engine *e, const char *path, const hcomp_tier_config *cfg,
                       hcomp_tier_writer *tw, hcomp_file_stats *stats)
{
    memset(e, 0, sizeof(*e));
    e->path = path;
    e->cfg = cfg;
    e->tw = tw;
    e->stats = stats;
    e->dtype_hint = -1;
    e->aslot_last = -1;
}

void hcomp_engine_set(hcomp_engine *e, const hcomp_engine_settings *set)
{
    e->set = *set;
    e->settings_gen++;
    if (e->pred)
        hcomp_predictor_set_feedback_interval(e->pred, e->set.feedback_interval);
}

/* ---- predictors, one per seed, shared by the files of a process -------------- */

typedef struct model_ref {
    char seed[PATH_MAX];
    hcomp_predictor *pred;
    int refs;
    struct model_ref *next;
} model_ref;

static pthread_mutex_t models_lock = PTHREAD_MUTEX_INITIALIZER;
static model_ref *models;

int hcomp_engine_open(hcomp_engine *e, hcomp_error *err)
{
    const char *seed = e->set.seed;
    int rc = HCOMP_OK;
    pthread_mutex_lock(&models_lock);
    model_ref *m = models;
    while (m && strcmp(m->seed, seed) != 0)
        m = m->next;
    if (m == NULL) {
        m = calloc(1, sizeof(*m));
        if (m == NULL)
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", e->path);
        else {
            hcomp_error why;
            snprintf(m->seed, sizeof(m->seed), "%s", seed);
            rc = hcomp_predictor_load(seed[0] ? seed : NULL, &m->pred, &why);
            if (rc != HCOMP_OK) {
                hcomp_fail(err, rc, "%s: hcomp_seed: %s", e->path, why.msg);
                free(m);
                m = NULL;
            } else {
                m->next = models;
                models = m;
            }
        }
    }
    if (m) {
        m->refs++;
        hcomp_predictor_set_feedback_interval(m->pred, e->set.feedback_interval);
        e->pred = m->pred;
    }
    pthread_mutex_unlock(&models_lock);
    return rc;
}

static void shared_aged_all(const hcomp_engine *e);

int hcomp_engine_close(hcomp_engine *e, hcomp_error *err)
{
    int rc = HCOMP_OK;
    shared_aged_all(e);
    if (e->pred == NULL)
        return rc;
    const char *seed = e->set.seed;
    pthread_mutex_lock(&models_lock);
    /* written back once, atomically, by the opener that owns the model, and only to a
     * seed the user named (the embedded default is never rewritten) */
    if (e->model_owner && seed[0] && hcomp_predictor_dirty(e->pred) > 0) {
        hcomp_error why;
        if (hcomp_predictor_save(e->pred, seed, &why) != HCOMP_OK)
            rc = hcomp_fail(err, why.code, "%s: saving the updated model: %s", e->path, why.msg);
    }
    for (model_ref **pp = &models; *pp; pp = &(*pp)->next) {
        model_ref *m = *pp;
        if (m->pred == e->pred) {
            if (--m->refs == 0) {
                *pp = m->next;
                hcomp_predictor_free(m->pred);
                free(m);
            }
            break;
        }
    }
    pthread_mutex_unlock(&models_lock);
    e->pred = NULL;
    return rc;
}

/* ---- planning ------------------------------------------------------------------ */

static int dtype_filter(int dtype)
{
    return hcomp_filter_for_dtype(HCOMP_SHUFFLE_BYTE, dtype);
}

/* The features a candidate with this filter is predicted with: those of the bytes its
 * codec compresses (plain, byte-shuffled), or as a bit-shuffling or bytedelta-coding codec
 * sees them. */
static const hcomp_features *features_for(int filter, const hcomp_features *plain,
                                          const hcomp_features *sh, const hcomp_features *bs,
                                          const hcomp_features *bd)
{
    if (filter == HCOMP_FILTER_NONE)
        return plain;
    if (hcomp_filter_shuffle(filter) == HCOMP_SHUFFLE_BYTEDELTA)
        return bd;
    return hcomp_filter_is_bitshuffle(filter) ? bs : sh;
}

static int form_of(int filter)
{
    if (filter == HCOMP_FILTER_NONE)
        return HCOMP_FORM_PLAIN;
    if (hcomp_filter_shuffle(filter) == HCOMP_SHUFFLE_BYTEDELTA)
        return HCOMP_FORM_BYTEDELTA;
    return hcomp_filter_is_bitshuffle(filter) ? HCOMP_FORM_BITSHUFFLED : HCOMP_FORM_SHUFFLED;
}

/* c-blosc 1's chunks (codecs 8, 9) are candidates only where hcomp_codecs names them: c-blosc2's
 * with the same compressor and bitshuffle made the same ratio or more at 1.0-2.3x their
 * compression and 1.3-1.7x their decoding speed on every kind of data measured
 * (benchmarks/blosc_gens.c, docs/ENGINE.md "c-blosc2"); they stay readable, and the seed
 * keeps their models for files that name them. */
static int superseded(unsigned codec)
{
    return codec == HCOMP_CODEC_BLOSC_LZ4 || codec == HCOMP_CODEC_BLOSC_ZSTD;
}

/* c-blosc2's codecs also take bytedelta (c-blosc 1's take bitshuffle only, as candidates) */
static int takes_bytedelta(unsigned codec)
{
    return codec == HCOMP_CODEC_BLOSC2_LZ4 || codec == HCOMP_CODEC_BLOSC2_ZSTD;
}

/* A model's prediction for this data: where it has stored pieces of this data in this
 * form, the ratio they made (a measurement of these bytes beats any regression: the
 * model's own local correction, smoothed over its neighbours, left brotli predicted at
 * 1.29 on momenta after pieces made 1.18, above bit-shuffled zstd's 1.16 predicted and
 * 1.18 made); else its line moved by the mean residual the observed models of the same
 * form had on this data. The regression's errors on one kind of data are shared by the
 * codecs that see the same bytes (an lzma, brotli and zstd of byte-shuffled particles
 * all came out 25% below their lines): without this, each overrated codec was tried
 * once in turn. */
static int obs_index(const hcomp_analysis_slot *a, unsigned codec, int level, int form)
{
    for (int i = 0; i < a->nobs; i++)
        if (a->obs_codec[i] == codec && a->obs_level[i] == level && a->obs_form[i] == form)
            return i;
    return -1;
}

int hcomp_engine_observed(const hcomp_analysis_slot *a, unsigned codec, int level, int filter)
{
    return obs_index(a, codec, level, form_of(filter));
}

static hcomp_prediction borrowed(const hcomp_model_prediction *m, const hcomp_analysis_slot *a,
                                 int form)
{
    hcomp_prediction p = m->pred;
    int i = obs_index(a, m->codec, m->level, form);
    if (i >= 0) {
        p.ratio = exp(a->obs_lratio[i]);
        return p;
    }
    if (a->form_n[form] == 0)
        return p;
    p.ratio = m->line.ratio * exp(a->form_resid[form]);
    return p;
}

static int allowed(const hcomp_engine_settings *o, unsigned codec, int level)
{
    if (o->nallowed == 0)
        return 1;
    for (int i = 0; i < o->nallowed; i++) {
        const hcomp_allowed *a = &o->allowed[i];
        int lv = a->level == HCOMP_LEVEL_DEFAULT ? a->codec->level_default : a->level;
        if (a->codec->id == codec && (a->level == HCOMP_LEVEL_DEFAULT ? 1 : lv == level))
            return 1;
    }
    return 0;
}

static void cand_set(hcdp_candidate *c, unsigned codec, int level, int filter,
                     const hcomp_prediction *p, double line_ratio)
{
    c->codec = codec;
    c->level = level;
    c->filter = filter;
    c->ratio = p->ratio;
    c->line_ratio = line_ratio;
    c->comp_Bps = p->comp_Bps;
    c->decomp_Bps = p->decomp_Bps;
}

/* A candidate into in, predicted p; with base, the same at the same index predicted
 * line (the regression's alone). */
static void add_candidate(hcdp_input *in, hcdp_candidate *base, unsigned codec, int level,
                          int filter, const hcomp_prediction *p, const hcomp_prediction *line)
{
    if (in->ncand >= HCDP_MAX_CANDIDATES)
        return;
    double lr = line != NULL ? line->ratio : p->ratio;
    if (base != NULL)
        cand_set(&base[in->ncand], codec, level, filter, line, lr);
    cand_set(&in->cand[in->ncand++], codec, level, filter, p, lr);
}

static int incompressible(const hcomp_features *ft)
{
    return ft->sampled >= 4096 && ft->entropy > 7.9 && ft->probe_ratio < 1.02;
}

/* The task's candidates into plan->input (a: its analysis slot, for what the file learnt of
 * this data); with base, also the same candidates as the models' lines alone predict them
 * (no local corrections), what the process's other files can start from
 * (shared_put_candidates). */
static void candidates(hcomp_engine *e, hcomp_task_plan *plan, const hcomp_analysis_slot *a,
                       hcdp_candidate *base)
{
    hcdp_input *in = &plan->input;
    const hcomp_engine_settings *o = &e->set;
    in->ncand = 0;
    if (o->codec != NULL && o->codec->id != HCOMP_CODEC_NONE) {
        /* a fixed codec: the engine only places; pieces that do not shrink go raw */
        int level = o->level == HCOMP_LEVEL_DEFAULT ? o->codec->level_default : o->level;
        hcomp_prediction p = {plan->feat.probe_ratio, 0, 0};
        if (hcomp_predictor_predict(e->pred, &plan->feat, o->codec->id, level, &p) != HCOMP_OK)
            p.ratio = plan->feat.probe_ratio > 1 ? plan->feat.probe_ratio : 1;
        /* a codec that bit-shuffles inside does so for typed data (what it is for), unless
         * the hints name another transform (hcomp_options_check made sure it fits) */
        unsigned k = hcomp_filter_typesize(dtype_filter(plan->feat.dtype));
        int f = o->shuffle_fixed > HCOMP_SHUFFLE_NONE ? hcomp_filter_for(o->shuffle_fixed, k)
              : o->codec->compress_typed == NULL ? HCOMP_FILTER_NONE
              : hcomp_filter_for(HCOMP_SHUFFLE_BIT, k);
        if (!hcomp_filter_fits(f, o->codec))
            f = HCOMP_FILTER_NONE;
        add_candidate(in, NULL, o->codec->id, level, f, &p, NULL);
        return;
    }
    hcomp_prediction raw = {1, 0, 0};
    add_candidate(in, base, HCOMP_CODEC_NONE, 0, HCOMP_FILTER_NONE, &raw, &raw);
    if (o->codec != NULL)       /* "none" */
        return;
    int filter = dtype_filter(plan->feat.dtype);
    int bfilter = hcomp_filter_for(HCOMP_SHUFFLE_BIT, hcomp_filter_typesize(filter));
    /* SPIOC's gate: data a fast compressor cannot shrink at all, with near-random bytes,
     * is not worth trying codecs on (the models can overrate it) */
    int plain_ok = !incompressible(&plan->feat);
    int sh_ok = plan->has_sh && !incompressible(&plan->feat_sh);
    int bs_ok = plan->has_sh && bfilter != HCOMP_FILTER_NONE && !incompressible(&plan->feat_bs);
    int dfilter = hcomp_filter_for(HCOMP_SHUFFLE_BYTEDELTA, hcomp_filter_typesize(filter));
    /* c-blosc2 would apply BLOSC_* environment variables over its chunks' settings: its
     * codecs then refuse every piece, so they are no candidates (codecs/blosc2_env.h) */
    int blosc2_env = hcomp_blosc2_env_override() != NULL;
    int bd_ok = plan->has_sh && dfilter != HCOMP_FILTER_NONE && !incompressible(&plan->feat_bd);
    /* the models a chunk at a time, each chunk's predictions under one lock; a codec
     * that bit-shuffles inside is a candidate with bitshuffle only (without it, it is a
     * slower lz4 or zstd), predicted from the bitshuffle features */
    enum { CHUNK = 32 };
    hcomp_model_prediction pp[CHUNK], ps[CHUNK], pb[CHUNK], pd[CHUNK];
    size_t n = hcomp_predictor_model_count(e->pred);
    for (size_t first = 0; first < n; first += CHUNK) {
        size_t k = n - first < CHUNK ? n - first : CHUNK;
        int pok = plain_ok && hcomp_predictor_predict_range(e->pred, &plan->feat, first, k, pp) == HCOMP_OK;
        int sok = sh_ok && hcomp_predictor_predict_range(e->pred, &plan->feat_sh, first, k, ps) == HCOMP_OK;
        int bok = bs_ok && hcomp_predictor_predict_range(e->pred, &plan->feat_bs, first, k, pb) == HCOMP_OK;
        int dok = bd_ok && hcomp_predictor_predict_range(e->pred, &plan->feat_bd, first, k, pd) == HCOMP_OK;
        if (!pok && !sok && !bok && !dok)
            continue;
        for (size_t i = 0; i < k; i++) {
            const hcomp_model_prediction *m = pok ? &pp[i] : sok ? &ps[i] : bok ? &pb[i]
                                                                          : &pd[i]; /* same model */
            if (m->codec == HCOMP_CODEC_NONE || !allowed(o, m->codec, m->level) ||
                (superseded(m->codec) && o->nallowed == 0) ||
                (takes_bytedelta(m->codec) && blosc2_env))
                continue;
            if (hcomp_codec_by_id(m->codec)->compress_typed != NULL) {
                if (bok) {
                    hcomp_prediction q = borrowed(&pb[i], a, HCOMP_FORM_BITSHUFFLED);
                    add_candidate(in, base, pb[i].codec, pb[i].level, bfilter, &q, &pb[i].line);
                }
                if (dok && takes_bytedelta(pd[i].codec)) {
                    hcomp_prediction q = borrowed(&pd[i], a, HCOMP_FORM_BYTEDELTA);
                    add_candidate(in, base, pd[i].codec, pd[i].level, dfilter, &q, &pd[i].line);
                }
                continue;
            }
            if (pok) {
                hcomp_prediction q = borrowed(&pp[i], a, HCOMP_FORM_PLAIN);
                add_candidate(in, base, pp[i].codec, pp[i].level, HCOMP_FILTER_NONE, &q,
                              &pp[i].line);
            }
            if (sok) {
                hcomp_prediction q = borrowed(&ps[i], a, HCOMP_FORM_SHUFFLED);
                add_candidate(in, base, ps[i].codec, ps[i].level, filter, &q, &ps[i].line);
            }
        }
    }
}

/* Bandwidth and latency of a tier: its configuration, else the seed's measurement of
 * it, else a probe of its directory (once per node and file system, by the monitor
 * thread: until it is done), else a guess from its rank:
 * tiers are listed fastest first, so the guess falls five-fold per tier from 10 GB/s.
 * The node's writers share that figure (hcomp_node_writers): a probe's figure of several
 * streams together where it has one. Then, unless the tier is emulated or says
 * "measure": false, what this process's own reads there measured replaces the starting
 * value, and its writes may lower it (docs/ENGINE.md, "Tier speeds"). */
static void tier_speed(hcomp_engine *e, int t, hcdp_tier *out)
{
    const hcomp_tier *tier = &e->cfg->tier[t];
    out->write_Bps = out->read_Bps = tier->bandwidth;
    out->latency = tier->latency;
    if (tier->bandwidth <= 0 && e->pred) {
        size_t n = hcomp_predictor_tier_count(e->pred);
        for (size_t i = 0; i < n; i++) {
            hcomp_tier_signature sig;
            if (hcomp_predictor_tier_at(e->pred, i, &sig) == HCOMP_OK &&
                strcmp(sig.name, tier->name) == 0 && sig.write_Bps > 0) {
                out->write_Bps = sig.write_Bps;
                out->read_Bps = sig.read_Bps > 0 ? sig.read_Bps : sig.write_Bps;
                if (tier->latency <= 0)
                    out->latency = sig.latency_s;
                break;
            }
        }
    }
    int measured = tier->measure && !tier->emulate && e->tw[t].ready;
    int writers = e->set.node_writers > 1 ? e->set.node_writers : 1;
    if (out->write_Bps <= 0 && measured) {
        hcomp_probe_speeds p;
        hcomp_monitor_probe(e->tw[t].mon, &p);
        if (p.write_Bps > 0) {
            out->write_Bps = p.write_Bps;
            out->read_Bps = p.read_Bps > 0 ? p.read_Bps : p.write_Bps;
            /* several writers of the node get what several streams got together (more
             * than one on a disk that queues requests, or over several links) */
            if (writers > 1 && p.write_all_Bps > out->write_Bps)
                out->write_Bps = p.write_all_Bps;
            if (writers > 1 && p.read_all_Bps > out->read_Bps)
                out->read_Bps = p.read_all_Bps;
        }
    }
    if (out->write_Bps <= 0) {
        double guess = 10e9;
        for (int i = 0; i < t; i++)
            guess /= 5;
        out->write_Bps = out->read_Bps = guess;
    }
    /* those figures are the node's (a probe, a configuration); the processes of the node
     * that write at once share them (an emulated tier slows each process on its own) */
    if (!tier->emulate && writers > 1) {
        out->write_Bps /= writers;
        out->read_Bps /= writers;
    }
    if (measured) {
        hcomp_tier_status st;
        hcomp_monitor_status(e->tw[t].mon, &st);
        /* on storage that keeps data, the time a process waits for its writes is not the
         * storage's speed: the page cache takes them at memory speed and the storage
         * writes them behind, overlapped with the next pieces' compression. What it
         * measures may lower the tier's speed (contention), not raise it */
        if (st.write_Bps > 0 && (e->tw[t].volatile_tier || st.write_Bps < out->write_Bps))
            out->write_Bps = st.write_Bps;
        if (st.read_Bps > 0)
            out->read_Bps = st.read_Bps;
    }
    if (out->latency < 0)
        out->latency = 0;
}

/* The order-0 entropy (bits per byte) of n bytes at q. The task's bytes are seldom in
 * cache: all their lines are asked for at once, so that the misses overlap instead of
 * following one another. */
static double window_entropy(const unsigned char *q, size_t n)
{
    for (size_t i = 0; i < n; i += 64)
        __builtin_prefetch(q + i);
    uint32_t count[256] = {0};
    for (size_t i = 0; i < n; i++)
        count[q[i]]++;
    return hcomp_entropy_of_counts(count, n);
}

/* A cheap fingerprint of a buffer: the entropy of 512 bytes from its middle. Tasks that
 * fingerprint alike reuse an analysis. */
static double fingerprint(const void *buf, uint64_t len)
{
    size_t n = len < 512 ? (size_t) len : 512;
    return window_entropy((const unsigned char *) buf + (len - n) / 2, n);
}

/* A second fingerprint, taken only when an analysis of another file may be adopted: data
 * of one element type whose bytes fingerprint alike can still differ where it matters (the
 * smooth fields and the particle momenta of two files, both float64 of entropy 7 to 7.5,
 * compress 1.5x and 1.1x once shuffled). For 4- and 8-byte elements it is the entropy of
 * the two most significant bytes of 256 elements from the middle (sign, exponent and top
 * of the mantissa: how the values spread), else of 512 bytes a quarter into the buffer. */
static double fingerprint2(const void *buf, uint64_t len, int dtype_hint)
{
    const unsigned char *p = buf;
    size_t k = hcomp_filter_typesize(dtype_filter(dtype_hint));
    if (k == 0 || len < 256 * k) {
        size_t n = len < 512 ? (size_t) len : 512;
        return window_entropy(p + (len - n) / 4, n);
    }
    /* little-endian: byte k - 1 is the most significant */
    const unsigned char *q = p + (len / k / 2 - 128) * k;
    for (size_t i = 0; i < 256 * k; i += 64)
        __builtin_prefetch(q + i);
    uint32_t count[256] = {0};
    for (size_t e = 0; e < 256; e++) {
        count[q[e * k + k - 1]]++;
        count[q[e * k + k - 2]]++;
    }
    return hcomp_entropy_of_counts(count, 512);
}

#define REANALYZE_EVERY 64      /* uses of an analysis before it is made again */
#define FINGERPRINT_SLACK 0.25  /* bits per byte */
/* Tighter: the same field in two checkpoints differs by up to 0.11 here, while a smooth
 * field and particle positions (other features, other plans) were 0.25 apart. */
#define FINGERPRINT2_SLACK 0.15

/* ---- analyses shared by the files of a process ------------------------------------ */

/* A series of files (the checkpoints of a run) holds the same kinds of data: a file whose
 * own slots know no analysis for a task takes one that another file of the process made
 * for data of the same element type that fingerprints alike, with the uses it has had,
 * so that each kind is analysed once per REANALYZE_EVERY tasks of the process rather
 * than once more in every file. Features depend on the data alone; plans (options, tiers)
 * stay with each file, and so do predictions, but for the regression lines, which every
 * unrefitted copy of the embedded seed predicts alike (candidates_shareable). */
#define SHARED_ANALYSES 64
typedef struct shared_analysis {
    int valid, has_sh, dtype_hint, want_sh;
    unsigned age;
    double fp, fp2;
    uint64_t used, gen;
    hcomp_features feat, feat_sh, feat_bs, feat_bd;
    /* the candidates a copy of the embedded seed not yet refit made for these features
     * with the default codec options, as its lines predict them (no local corrections):
     * the same for every such copy, so the next file of a series only adds its own
     * corrections (shared_localise) instead of predicting again (0: none yet) */
    int cand_n;
    hcdp_candidate cand[HCDP_MAX_CANDIDATES];
} shared_analysis;

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_analysis shared[SHARED_ANALYSES];
static uint64_t shared_tick, shared_gens;

/* The entry for (dtype_hint, want_sh) whose fingerprints are both within the slack of
 * fp and fp2, the closest; -1. Under shared_lock. */
static int shared_near(int dtype_hint, int want_sh, double fp, double fp2)
{
    int near = -1;
    double best = FINGERPRINT_SLACK;
    for (int i = 0; i < SHARED_ANALYSES; i++) {
        const shared_analysis *e = &shared[i];
        if (!e->valid || e->dtype_hint != dtype_hint || e->want_sh != want_sh ||
            !(fabs(fp2 - e->fp2) <= FINGERPRINT2_SLACK))
            continue;
        double d = fabs(fp - e->fp);
        if (d <= best) {
            best = d;
            near = i;
        }
    }
    return near;
}

/* Whether the file's candidates are, but for its local corrections, those any file of the
 * process would make for the same features: its predictor an unrefitted copy of the
 * embedded seed, every codec and level allowed (weights do not enter predictions). */
static int candidates_shareable(hcomp_engine *e)
{
    return e->pred && e->set.codec == NULL && e->set.nallowed == 0 &&
           hcomp_predictor_embedded_pristine(e->pred);
}

/* Slot a takes a still young shared analysis of its kind, if there is one: 1 if it did;
 * with its candidates too when the file can use them (with_cand). */
static int shared_take(hcomp_analysis_slot *a, int dtype_hint, int want_sh, double fp,
                       double fp2, int with_cand)
{
    /* the slot keeps the task's own fingerprint: the file's later tasks are matched
     * against its data, not against the other file's */
    pthread_mutex_lock(&shared_lock);
    int i = shared_near(dtype_hint, want_sh, fp, fp2);
    int ok = i >= 0 && shared[i].age < REANALYZE_EVERY;
    if (ok) {
        shared_analysis *e = &shared[i];
        e->age++;
        e->used = ++shared_tick;
        a->feat = e->feat;
        a->feat_sh = e->feat_sh;
        a->feat_bs = e->feat_bs;
        a->feat_bd = e->feat_bd;
        a->has_sh = e->has_sh;
        a->fp = fp;
        a->age = e->age;
        a->shared_ix = i;
        a->shared_gen = e->gen;
        if (with_cand && e->cand_n > 0) {
            a->plan_cand_n = e->cand_n;
            memcpy(a->plan_cand, e->cand, sizeof(e->cand[0]) * (size_t) e->cand_n);
            a->cand_valid = 1;
        }
    }
    pthread_mutex_unlock(&shared_lock);
    return ok;
}

/* The candidates just made for slot a's shared analysis, as the lines predict them, for
 * the process's next files. */
static void shared_put_candidates(const hcomp_analysis_slot *a, const hcdp_candidate *base,
                                  int n)
{
    pthread_mutex_lock(&shared_lock);
    shared_analysis *e = &shared[a->shared_ix];
    if (e->gen == a->shared_gen && n > 0) {
        e->cand_n = n;
        memcpy(e->cand, base, sizeof(base[0]) * (size_t) n);
    }
    pthread_mutex_unlock(&shared_lock);
}

/* Slot a's candidates, taken as the shared lines predict them, with the file's own local
 * corrections: the models it has corrected for the data's element type (a few: those of
 * the codecs it chose) predict again; with more than a few, all do (0 returned). */
static int shared_localise(hcomp_engine *e, hcomp_analysis_slot *a)
{
    enum { FEW = 8 };
    unsigned codec[FEW];
    int level[FEW];
    size_t n = hcomp_predictor_corrected(e->pred, a->feat.dtype, codec, level, FEW);
    if (n > FEW || (a->has_sh && a->feat_sh.dtype != a->feat.dtype))
        return 0;
    for (int i = 1; i < a->plan_cand_n && n > 0; i++) {
        hcdp_candidate *c = &a->plan_cand[i];
        for (size_t k = 0; k < n; k++) {
            if (codec[k] != c->codec || level[k] != c->level)
                continue;
            hcomp_prediction p;     /* this file's own: line and its corrections */
            if (hcomp_predictor_predict(e->pred, features_for(c->filter, &a->feat, &a->feat_sh,
                                                              &a->feat_bs, &a->feat_bd),
                                        c->codec, c->level, &p) != HCOMP_OK)
                return 0;
            c->ratio = p.ratio;
            c->comp_Bps = p.comp_Bps;
            c->decomp_Bps = p.decomp_Bps;
        }
    }
    return 1;
}

/* A new full analysis in slot a (second fingerprint fp2) replaces the shared one of its
 * kind, else the least recently used entry. */
static void shared_put(hcomp_analysis_slot *a, double fp2)
{
    pthread_mutex_lock(&shared_lock);
    int i = shared_near(a->dtype_hint, a->want_sh, a->fp, fp2);
    for (int k = 0; k < SHARED_ANALYSES && i < 0; k++)
        if (!shared[k].valid)
            i = k;
    if (i < 0) {
        i = 0;
        for (int k = 1; k < SHARED_ANALYSES; k++)
            if (shared[k].used < shared[i].used)
                i = k;
    }
    shared_analysis *e = &shared[i];
    e->valid = 1;
    e->has_sh = a->has_sh;
    e->dtype_hint = a->dtype_hint;
    e->want_sh = a->want_sh;
    e->age = 0;
    e->fp = a->fp;
    e->fp2 = fp2;
    e->used = ++shared_tick;
    e->gen = ++shared_gens;
    e->feat = a->feat;
    e->feat_sh = a->feat_sh;
    e->feat_bs = a->feat_bs;
    e->feat_bd = a->feat_bd;
    e->cand_n = 0;
    a->shared_ix = i;
    a->shared_gen = e->gen;
    pthread_mutex_unlock(&shared_lock);
}

/* A reuse of slot a counts as a use of the shared analysis it holds (unless that was
 * replaced since), so that every file's uses age it. */
static void shared_aged_locked(const hcomp_analysis_slot *a)
{
    shared_analysis *e = &shared[a->shared_ix];
    if (e->gen == a->shared_gen) {
        if (e->age < a->age)
            e->age = a->age;
        e->used = ++shared_tick;
    }
}

static void shared_aged(const hcomp_analysis_slot *a)
{
    /* every 8th use (the age is a refresh schedule, not a count to the unit; the file's
     * close passes on the rest) spares the lock on the others */
    if (a->shared_ix < 0 || a->age % 8 != 0)
        return;
    pthread_mutex_lock(&shared_lock);
    shared_aged_locked(a);
    pthread_mutex_unlock(&shared_lock);
}

/* At close: the uses of the file's shared analyses since their last count. */
static void shared_aged_all(const hcomp_engine *e)
{
    pthread_mutex_lock(&shared_lock);
    for (int i = 0; i < HCOMP_ANALYSIS_SLOTS; i++)
        if (e->aslot[i].valid && e->aslot[i].shared_ix >= 0)
            shared_aged_locked(&e->aslot[i]);
    pthread_mutex_unlock(&shared_lock);
}

/* A new kind of data in a file starts from what the regression missed on the file's other
 * kinds of the same element type (the fields of one simulation share its biases: each of
 * VPIC's six float arrays was overrated alike in the byte-shuffled form), as one
 * observation's worth, which the kind's own observations soon outweigh. */
static void inherit_forms(hcomp_engine *e, hcomp_analysis_slot *a)
{
    for (int f = 0; f < HCOMP_FORMS; f++) {
        double sum = 0;
        unsigned n = 0;
        for (int i = 0; i < HCOMP_ANALYSIS_SLOTS; i++) {
            const hcomp_analysis_slot *o = &e->aslot[i];
            if (o == a || !o->valid || o->form_n[f] == 0 || o->feat.dtype != a->feat.dtype)
                continue;
            sum += o->form_resid[f];
            n++;
        }
        if (n > 0) {
            a->form_resid[f] = sum / n;
            a->form_n[f] = 1;
        }
    }
}

/* The task's features, and those of its byte-shuffled data when shuffle may apply, from
 * the analysis slot whose fingerprint is closest within the slack; when none is, or the
 * one found has been used REANALYZE_EVERY times, from a young enough shared analysis of
 * another file, else from a full analysis (10-35 us) that is then shared. The periodic
 * analysis catches data that change while their fingerprint does not; between two, the
 * feedback keeps the predictions near what the data actually do. Returns the slot;
 * *reused says whether it was reused. A task smaller than the analysis sample is not
 * fingerprinted: its few bytes give a noisy fingerprint that costs as much
 * as the time it would save, and a wrong guess costs little on so few bytes (a piece
 * that does not shrink is stored raw): it reuses the last task's slot. */
static int analyze_task(hcomp_engine *e, const void *buf, uint64_t len, hcomp_task_plan *plan,
                        int *reused)
{
    int auto_mode = e->set.codec == NULL;
    int want_sh = auto_mode && e->set.shuffle;
    int small = len < HCOMP_ANALYZE_MAX_SAMPLE;
    double fp = small && e->aslot_last >= 0 ? e->aslot[e->aslot_last].fp : fingerprint(buf, len);
    int near = -1;
    double best = FINGERPRINT_SLACK;
    for (int i = 0; i < HCOMP_ANALYSIS_SLOTS; i++) {
        const hcomp_analysis_slot *a = &e->aslot[i];
        if (!a->valid || a->dtype_hint != e->dtype_hint || a->want_sh != want_sh)
            continue;
        double d = small ? (i == e->aslot_last ? 0.0 : INFINITY) : fabs(fp - a->fp);
        if (d <= best) {
            best = d;
            near = i;
        }
    }
    hcomp_analysis_slot *a;
    if (near >= 0 && e->aslot[near].age < REANALYZE_EVERY) {
        a = &e->aslot[near];
        plan->feat = a->feat;
        plan->feat_sh = a->feat_sh;
        plan->feat_bs = a->feat_bs;
        plan->feat_bd = a->feat_bd;
        plan->has_sh = a->has_sh;
        a->age++;
        a->used = ++e->aslot_tick;
        e->aslot_last = near;
        shared_aged(a);
        *reused = 1;
        return near;
    }
    int s = near;           /* an analysis grown old is made again in its slot */
    for (int i = 0; i < HCOMP_ANALYSIS_SLOTS && s < 0; i++)
        if (!e->aslot[i].valid)
            s = i;
    if (s < 0) {
        s = 0;
        for (int i = 1; i < HCOMP_ANALYSIS_SLOTS; i++)
            if (e->aslot[i].used < e->aslot[s].used)
                s = i;
    }
    a = &e->aslot[s];
    a->valid = 1;
    a->dtype_hint = e->dtype_hint;
    a->want_sh = want_sh;
    a->used = ++e->aslot_tick;
    a->plan_valid = 0;
    a->cand_valid = 0;
    e->aslot_last = s;
    *reused = 0;
    int fresh = s != near;  /* another kind of data: what was learnt of the old one goes */
    if (fresh) {
        memset(a->form_resid, 0, sizeof a->form_resid);
        memset(a->form_n, 0, sizeof a->form_n);
        a->form_tried = 0;
        a->form_seen = 0;
        a->nobs = 0;
    }
    double fp2 = small ? 0.0 : fingerprint2(buf, len, e->dtype_hint);
    int with_cand = candidates_shareable(e);
    if (!small && shared_take(a, e->dtype_hint, want_sh, fp, fp2, with_cand)) {
        e->stats->analyses_shared++;
        /* the lines of an identical model, plus this file's corrections: current for it */
        a->cand_valid = a->cand_valid && shared_localise(e, a);
        if (a->cand_valid) {
            a->cand_options = e->settings_gen;
            a->cand_models = 0;
        }
    } else {
        memset(&a->feat, 0, sizeof(a->feat));
        memset(&a->feat_sh, 0, sizeof(a->feat_sh));
        memset(&a->feat_bs, 0, sizeof(a->feat_bs));
        memset(&a->feat_bd, 0, sizeof(a->feat_bd));
        hcomp_analyze(buf, (size_t) len, e->dtype_hint, &a->feat);
        e->stats->analyses++;
        a->has_sh = 0;
        unsigned k = hcomp_filter_typesize(dtype_filter(a->feat.dtype));
        if (want_sh && k != 0)
            a->has_sh = hcomp_analyze_shuffled(buf, (size_t) len, k, &a->feat, &a->feat_sh) == HCOMP_OK &&
                        hcomp_analyze_bitshuffled(buf, (size_t) len, k, &a->feat_sh,
                                                  &a->feat_bs) == HCOMP_OK &&
                        hcomp_analyze_bytedelta(buf, (size_t) len, k, &a->feat_sh,
                                                &a->feat_bd) == HCOMP_OK;
        a->fp = fp;
        a->age = 0;
        a->shared_ix = -1;
        if (!small)   /* a small task's few bytes are no fair sample of its kind */
            shared_put(a, fp2);
    }
    if (fresh)
        inherit_forms(e, a);
    plan->feat = a->feat;
    plan->feat_sh = a->feat_sh;
    plan->feat_bs = a->feat_bs;
    plan->feat_bd = a->feat_bd;
    plan->has_sh = a->has_sh;
    return s;
}

uint64_t hcomp_min_part(const hcomp_tier *tier)
{
    uint64_t q = tier->capacity / 4;
    return q < HCDP_MIN_SPLIT ? (q > HCDP_ALIGN ? q / HCDP_ALIGN * HCDP_ALIGN : HCDP_ALIGN)
                              : HCDP_MIN_SPLIT;
}

/* Which tiers could take the whole task twice over: the coarse state a cached plan
 * was made in. */
static uint32_t room_signature(const hcdp_input *in, uint64_t len)
{
    uint32_t sig = 0;
    for (int t = 0; t < in->ntiers; t++)
        if (in->tier[t].room / 2 >= len)
            sig |= 1u << t;
    return sig;
}

/* How full a tier of known capacity is, in eighths: the price of its room
 * (hcdp_room_prices) moves with it, so a plan is made again when it changes. */
static unsigned char fill_step(const hcdp_tier *t)
{
    if (t->capacity == 0 || t->room >= t->capacity)
        return 0;
    return (unsigned char) (8 - t->room * 8 / t->capacity);
}

/* Whether the rooms still suit a plan (one part, on tier t). Rooms enter HCDP only as
 * which placements fit: with no more of them fitting than when the plan was made, and
 * its own still fitting, the plan is still the best one. So: tier t could take the whole
 * task twice over (every candidate fits), or holds the plan's stored bytes twice without
 * having grown; and no faster tier that could not take every candidate then has grown
 * (space freed there may draw the task up). Slower tiers are left to the signature: their
 * free space moves with the file system's. */
/* A tier whose speed (measured: docs/ENGINE.md, "Tier speeds") moved by more than this
 * factor since the plan was made gets a new plan. */
#define SPEED_MOVED 1.5

static int speed_moved(double then, double now)
{
    return now > then * SPEED_MOVED || now * SPEED_MOVED < then;
}

static int plan_room_holds(const hcomp_analysis_slot *a, const hcdp_input *in)
{
    for (int u = 0; u < in->ntiers; u++)
        if (fill_step(&in->tier[u]) != a->plan_fill[u] ||
            speed_moved(a->plan_speed[u][0], in->tier[u].read_Bps) ||
            speed_moved(a->plan_speed[u][1], in->tier[u].write_Bps))
            return 0;       /* the price of its room, or its speed, has moved */
    int t = a->plan_hcdp.part[0].tier;
    uint64_t room = in->tier[t].room;
    if (!(room / 2 >= a->plan_size || (room <= a->plan_rooms[t] && room / 2 >= a->plan_need)))
        return 0;
    for (int u = 0; u < t; u++)
        if (in->tier[u].room > a->plan_rooms[u] && a->plan_rooms[u] / 2 < a->plan_size)
            return 0;
    return 1;
}

/* Candidate c, if it is the cheapest by the objective so far (*best: -1 for none yet):
 * the search of the trials below, each over the candidates it allows. */
static void keep_cheapest(const hcdp_input *in, uint64_t len, int t, int c, int *best,
                          double *best_cost)
{
    double kc = hcdp_place_cost(in, len, t, c);
    if (*best < 0 || kc < *best_cost) {
        *best = c;
        *best_cost = kc;
    }
}

/* A form of the data (plain, byte-shuffled, bit-shuffled) that no piece of this data has
 * been stored in is tried once, with its best candidate, when that is predicted to cost at
 * most EXPLORE_SLACK times the chosen one: the regression can underrate a whole form for
 * one kind of data, and a form never chosen is never observed, so never corrected. (VPIC
 * positions: bit-shuffled zstd predicted below lzma's corrected 1.57, made 1.7.) Only a
 * plan of one compressed part is changed; returns whether it was. */
#define EXPLORE_SLACK 2.0
static int explore_form(hcomp_analysis_slot *a, const hcdp_input *in, hcdp_plan *plan,
                        hcomp_task_plan *task)
{
    if (plan->nparts != 1 || plan->part[0].cand <= 0)
        return 0;
    int chosen = plan->part[0].cand, t = plan->part[0].tier;
    uint64_t len = plan->part[0].len;
    a->form_tried |= 1u << form_of(in->cand[chosen].filter);
    /* the best candidate of the untried forms */
    int best = -1;
    double best_cost = 0;
    for (int c = 1; c < in->ncand; c++) {
        const hcdp_candidate *k = &in->cand[c];
        int f = form_of(k->filter);
        if ((a->form_tried >> f & 1u) || a->form_n[f] > 0 || !(k->ratio > 1.0) ||
            (double) len / k->ratio + HCOMP_PIECE_HEADER_SIZE > (double) in->tier[t].room)
            continue;
        keep_cheapest(in, len, t, c, &best, &best_cost);
    }
    double cost = hcdp_place_cost(in, len, t, chosen);
    if (best < 0 || best_cost > EXPLORE_SLACK * cost)
        return 0;
    a->form_tried |= 1u << form_of(in->cand[best].filter);
    task->alt[0] = chosen;      /* encoded too: the trial costs the piece nothing */
    task->nalt = 1;
    plan->part[0].cand = best;
    plan->part[0].cost = best_cost;
    plan->cost += best_cost - cost;
    return 1;
}

/* A plan whose choice is in a form no piece of this data was observed in (its prediction
 * is the regression's line, or a residual taken from other kinds of data: lzma on z
 * positions as they are, 1.13 made where bit-shuffled zstd makes 1.39) is a trial too:
 * the best candidate of each other form (none predicted slower than the choice) is
 * encoded as well, the smallest piece kept, and every form is observed on this data at
 * once. */
static void fallback_of_untried(const hcomp_analysis_slot *a, const hcdp_input *in,
                                const hcdp_plan *plan, hcomp_task_plan *task)
{
    if (plan->nparts != 1 || plan->part[0].cand <= 0)
        return;
    /* the plan's choice: the part's, or the one a trial (explore_form) stands in for */
    int choice = task->nalt > 0 ? task->alt[0] : plan->part[0].cand, t = plan->part[0].tier;
    if (a->form_seen >> form_of(in->cand[choice].filter) & 1u)
        return;
    unsigned have = 1u << form_of(in->cand[plan->part[0].cand].filter);
    for (int i = 0; i < task->nalt; i++)
        have |= 1u << form_of(in->cand[task->alt[i]].filter);
    uint64_t len = plan->part[0].len;
    /* none predicted slower than the choice: each at most doubles the piece's time */
    double speed = in->cand[choice].comp_Bps;
    for (int f = 0; f < HCOMP_FORMS && task->nalt < HCOMP_JOB_ALTS; f++) {
        if (have >> f & 1u)
            continue;
        int best = -1;
        double best_cost = 0;
        for (int c = 1; c < in->ncand; c++) {
            const hcdp_candidate *k = &in->cand[c];
            if (form_of(k->filter) != f || !(k->ratio > 1.0) ||
                (speed > 0 && k->comp_Bps > 0 && k->comp_Bps < speed))
                continue;
            keep_cheapest(in, len, t, c, &best, &best_cost);
        }
        if (best >= 0)
            task->alt[task->nalt++] = best;
    }
}

static int observed_on(const hcomp_analysis_slot *a, const hcdp_candidate *k)
{
    return hcomp_engine_observed(a, k->codec, k->level, k->filter) >= 0;
}

/* Adds candidate c to the task's other encodings, unless it is there or they are full. */
static void add_alt(hcomp_task_plan *task, int c)
{
    for (int i = 0; i < task->nalt; i++)
        if (task->alt[i] == c)
            return;
    if (task->nalt < HCOMP_JOB_ALTS)
        task->alt[task->nalt++] = c;
}

/* The chosen codec at a faster level, never observed on this data, is encoded as well
 * (the smaller piece kept, both observed): the regression's gap between a codec's levels
 * can be far off on one kind of data, and a level never chosen is never observed, so never
 * corrected. On VPIC-IO's particles under `archival` (one 1 MiB block per piece),
 * bit-shuffled blosc2-zstd at level 5 was predicted 1.8% smaller than at level 1 and was
 * chosen for every piece; it made 0.2% smaller pieces, at a tenth of level 1's speed. The
 * trial costs at most half the choice's compression, once per kind of data. */
#define LEVEL_TRIAL_SPEEDUP 2.0
static void faster_level_of_choice(const hcomp_analysis_slot *a, const hcdp_input *in,
                                   const hcdp_plan *plan, int choice, hcomp_task_plan *task)
{
    if (plan->nparts != 1 || choice <= 0 || task->nalt >= HCOMP_JOB_ALTS)
        return;
    const hcdp_candidate *ch = &in->cand[choice];
    if (!(ch->comp_Bps > 0))
        return;
    int t = plan->part[0].tier, best = -1;
    uint64_t len = plan->part[0].len;
    double best_cost = 0;
    for (int c = 1; c < in->ncand; c++) {
        const hcdp_candidate *k = &in->cand[c];
        if (k->codec != ch->codec || k->filter != ch->filter || k->level >= ch->level ||
            !(k->ratio > 1.0) || !(k->comp_Bps >= LEVEL_TRIAL_SPEEDUP * ch->comp_Bps) ||
            observed_on(a, k))
            continue;
        keep_cheapest(in, len, t, c, &best, &best_cost);
    }
    if (best >= 0)
        add_alt(task, best);
}

/* A choice never observed on this data (its ratio borrowed from its form's residual) is
 * encoded together with the best candidate that was, and the smaller piece kept: the
 * borrowed ratio can be far off for one codec (Gray-Scott's v field under `archival`:
 * byte-shuffled zstd made 1.23 where its line said 1.55, and snappy, whose line the same
 * residual moved to 1.38, was chosen and made 1.15). A codec is thus tried at no cost to
 * the piece, as forms are (fallback_of_untried); only where the observed candidate costs
 * at most EXPLORE_SLACK times the choice by the objective. */
static void observed_fallback(const hcomp_analysis_slot *a, const hcdp_input *in,
                              const hcdp_plan *plan, int choice, hcomp_task_plan *task)
{
    if (plan->nparts != 1 || choice <= 0 || task->nalt >= HCOMP_JOB_ALTS || a->nobs == 0 ||
        observed_on(a, &in->cand[choice]))
        return;
    int t = plan->part[0].tier, best = -1;
    uint64_t len = plan->part[0].len;
    double best_cost = 0;
    for (int c = 1; c < in->ncand; c++) {
        if (c == choice || !(in->cand[c].ratio > 1.0) || !observed_on(a, &in->cand[c]))
            continue;
        keep_cheapest(in, len, t, c, &best, &best_cost);
    }
    if (best >= 0 && best_cost <= EXPLORE_SLACK * hcdp_place_cost(in, len, t, choice))
        add_alt(task, best);
}

int hcomp_engine_plan(hcomp_engine *e, const void *buf, uint64_t len, hcomp_task_plan *plan,
                      hcomp_error *err)
{
    double t0 = hcomp_now();
    int reused;
    plan->nalt = 0;
    plan->slot = analyze_task(e, buf, len, plan, &reused);
    hcomp_analysis_slot *a = &e->aslot[plan->slot];
    double t1 = hcomp_now();
    hcdp_input *in = &plan->input;
    in->ntiers = e->cfg->ntiers;
    /* with hcomp_drain=close, node-local data is moved to the first shared tier before
     * the close returns: HCDP charges that move to the node-local tiers (in the
     * background, hcomp_drain=background, it is taken to overlap the application) */
    int drain_to = 0;
    for (int t = 0; t < e->cfg->ntiers && drain_to == 0 && e->set.drain_at_close; t++)
        if (!e->cfg->tier[t].node_local)
            drain_to = t + 1;
    for (int t = 0; t < e->cfg->ntiers; t++) {
        tier_speed(e, t, &in->tier[t]);
        in->tier[t].capacity = 0;
        in->tier[t].drain_to = e->cfg->tier[t].node_local ? drain_to : 0;
        hcomp_tier_status st;
        hcomp_monitor_status(e->tw[t].mon, &st);
        if (e->tw[t].full || !st.available) {
            in->tier[t].room = 0;       /* full, vanished or failing: out of placement */
            continue;
        }
        uint64_t room = hcomp_tier_available(&e->tw[t], &e->cfg->tier[t]);
        in->tier[t].room = room < st.free_bytes ? room : st.free_bytes;
        in->tier[t].min_part = hcomp_min_part(&e->cfg->tier[t]);
        in->tier[t].capacity = e->cfg->tier[t].capacity == UINT64_MAX ? 0 : e->cfg->tier[t].capacity;
        /* what is already queued for the tier is waited for first */
        in->tier[t].latency += (double) st.queued / in->tier[t].write_Bps;
    }
    uint32_t sig = room_signature(in, len);
    double t2 = hcomp_now();
    /* a stream of like tasks (same analysis, same size, the tiers in the same state, the
     * same options) gets the same plan: prediction and HCDP are skipped */
    if (reused && a->plan_valid && a->plan_size == len && a->plan_sig == sig &&
        a->plan_options == e->settings_gen && a->plan_ntiers == in->ntiers &&
        plan_room_holds(a, in)) {
        in->ncand = a->plan_cand_n;
        memcpy(in->cand, a->plan_cand, sizeof(in->cand[0]) * (size_t) in->ncand);
        plan->hcdp = a->plan_hcdp;
        e->stats->t_placement += t2 - t1;
        e->stats->t_analysis += t1 - t0;
        return HCOMP_OK;
    }
    in->size = len;
    in->piece_size = e->set.piece_size;
    in->block_size = e->set.block_size;
    in->block_size_bs = e->set.block_size_bs;
    in->w.wc = e->set.wc;
    in->w.wd = e->set.wd;
    in->w.wr = e->set.wr;
    in->no_bound = 0;
    /* predictions change only with the features, the options and a refit */
    unsigned long models = e->pred ? hcomp_predictor_generation(e->pred) : 0;
    if (a->cand_valid && a->cand_options == e->settings_gen && a->cand_models == models) {
        in->ncand = a->plan_cand_n;
        memcpy(in->cand, a->plan_cand, sizeof(in->cand[0]) * (size_t) in->ncand);
    } else {
        hcdp_candidate base[HCDP_MAX_CANDIDATES];
        int share = a->shared_ix >= 0 && candidates_shareable(e);
        candidates(e, plan, a, share ? base : NULL);
        e->stats->predictions++;
        a->cand_valid = 1;
        a->cand_options = e->settings_gen;
        a->cand_models = models;
        a->plan_cand_n = in->ncand;
        memcpy(a->plan_cand, in->cand, sizeof(in->cand[0]) * (size_t) in->ncand);
        if (share)
            shared_put_candidates(a, base, in->ncand);
    }
    double t3 = hcomp_now();
    e->stats->plans++;
    hcdp_room_prices(in);
    if (hcdp_plan_task(in, &plan->hcdp) != 0) {
        /* nothing fits as planned (the rooms are estimates): store raw from the first
         * tier on and let the spill path find room, or report that there is none */
        plan->hcdp.nparts = 1;
        plan->hcdp.part[0].len = len;
        plan->hcdp.part[0].tier = 0;
        plan->hcdp.part[0].cand = 0;
        a->plan_valid = 0;
    } else {
        /* only a plan that no tier's room shaped is worth reusing: one part, on a tier
         * that could take it twice over (a split was made for rooms that change) */
        int part_tier = plan->hcdp.part[0].tier;
        const hcdp_candidate *c = &in->cand[plan->hcdp.part[0].cand];
        for (int t = 0; t < in->ntiers; t++) {
            a->plan_rooms[t] = in->tier[t].room;
            a->plan_fill[t] = fill_step(&in->tier[t]);
            a->plan_speed[t][0] = in->tier[t].read_Bps;
            a->plan_speed[t][1] = in->tier[t].write_Bps;
        }
        a->plan_need = (uint64_t) ((double) len / (c->ratio > 1.0 ? c->ratio : 1.0)) +
                       HCOMP_PIECE_HEADER_SIZE;
        a->plan_valid = plan->hcdp.nparts == 1 &&
                        ((sig >> part_tier & 1u) || a->plan_rooms[part_tier] / 2 >= a->plan_need);
        a->plan_size = len;
        a->plan_sig = sig;
        a->plan_options = e->settings_gen;
        a->plan_ntiers = in->ntiers;
        a->plan_hcdp = plan->hcdp;
        int trial = explore_form(a, in, &plan->hcdp, plan);
        if (trial)
            a->plan_valid = 0;      /* a trial, not a plan to repeat */
        int choice = trial ? plan->alt[0] : plan->hcdp.part[0].cand;
        fallback_of_untried(a, in, &plan->hcdp, plan);
        faster_level_of_choice(a, in, &plan->hcdp, choice, plan);
        observed_fallback(a, in, &plan->hcdp, choice, plan);
    }
    double t4 = hcomp_now();
    e->stats->t_analysis += t1 - t0;
    e->stats->t_placement += (t2 - t1) + (t4 - t3);
    e->stats->t_prediction += t3 - t2;
    (void) err;
    return HCOMP_OK;
}

void hcomp_engine_choose(hcomp_engine *e, const void *buf, uint64_t len, int t, unsigned *codec,
                         int *level, int *filter, int *dtype)
{
    static _Thread_local hcomp_task_plan plan;
    int reused;
    plan.slot = analyze_task(e, buf, len, &plan, &reused);
    hcdp_input *in = &plan.input;
    in->size = len;
    in->piece_size = e->set.piece_size;
    in->block_size = e->set.block_size;
    in->block_size_bs = e->set.block_size_bs;
    in->w.wc = e->set.wc;
    in->w.wd = e->set.wd;
    in->w.wr = e->set.wr;
    in->no_bound = 0;
    double sum = in->w.wc + in->w.wd + in->w.wr;
    if (sum > 0) {
        in->w.wc /= sum;
        in->w.wd /= sum;
        in->w.wr /= sum;
    }
    candidates(e, &plan, &e->aslot[plan.slot], NULL);
    in->ntiers = 1;
    tier_speed(e, t, &in->tier[0]);
    in->tier[0].room = UINT64_MAX / 4;
    in->tier[0].capacity = 0;
    in->tier[0].price = 0;      /* the codec for a tier already chosen: its room is not at stake */
    int best = 0;
    double best_cost = hcdp_place_cost(in, len, 0, 0);
    for (int c = 1; c < in->ncand; c++) {
        if (!(in->cand[c].ratio > 1.0))
            continue;
        double cost = hcdp_place_cost(in, len, 0, c);
        if (cost < best_cost) {
            best_cost = cost;
            best = c;
        }
    }
    *codec = in->cand[best].codec;
    *level = in->cand[best].level;
    *filter = in->cand[best].filter;
    *dtype = plan.feat.dtype;
}

/* Only floating-point data: c-blosc's bit-shuffled codecs keep their ratio in small blocks
 * there (within 0.5% at 64 KiB), not on integer counters (6% lost; docs/ENGINE.md). */
uint32_t hcomp_engine_block_size_bs(const hcomp_engine *e, int dtype)
{
    int fp = dtype == HCOMP_DTYPE_FLOAT || dtype == HCOMP_DTYPE_DOUBLE;
    return fp && e->set.block_size_bs ? e->set.block_size_bs : e->set.block_size;
}

/* The features the engine would have predicted a decoded piece with: those of its logical
 * bytes, or of its filtered form when it was stored filtered (as analyze_task computes
 * them for a write), reused between pieces that fingerprint alike. A read analyses at
 * most one piece in REANALYZE_EVERY (a read that hops between kinds of data would
 * otherwise analyse every piece, several percent of its decoding time): a piece unlike
 * the last analysed one in between is not observed (NULL). */
static const hcomp_features *read_features(hcomp_engine *e, const void *raw, int filter,
                                           uint64_t len)
{
    double fp = fingerprint(raw, len);
    int like = e->rfeat_valid && e->rfeat_dtype_hint == e->dtype_hint &&
               fabs(fp - e->rfeat_fp) <= FINGERPRINT_SLACK;
    if (!like && e->rfeat_valid && e->rfeat_age < REANALYZE_EVERY) {
        e->rfeat_age++;
        return NULL;
    }
    if (!like || e->rfeat_age >= REANALYZE_EVERY) {
        hcomp_analyze(raw, (size_t) len, e->dtype_hint, &e->rfeat);
        e->rfeat_valid = 1;
        e->rfeat_sh_filter = HCOMP_FILTER_NONE;
        e->rfeat_bs_filter = HCOMP_FILTER_NONE;
        e->rfeat_bd_filter = HCOMP_FILTER_NONE;
        e->rfeat_dtype_hint = e->dtype_hint;
        e->rfeat_fp = fp;
        e->rfeat_age = 0;
    } else
        e->rfeat_age++;
    if (filter == HCOMP_FILTER_NONE)
        return &e->rfeat;
    unsigned k = hcomp_filter_typesize(filter);
    int sh = hcomp_filter_for(HCOMP_SHUFFLE_BYTE, k);
    if (e->rfeat_sh_filter != sh) {
        if (hcomp_analyze_shuffled(raw, (size_t) len, k, &e->rfeat, &e->rfeat_sh) != HCOMP_OK)
            return NULL;
        e->rfeat_sh_filter = sh;
        e->rfeat_bs_filter = HCOMP_FILTER_NONE;
        e->rfeat_bd_filter = HCOMP_FILTER_NONE;
    }
    if (filter == sh)
        return &e->rfeat_sh;
    if (hcomp_filter_shuffle(filter) == HCOMP_SHUFFLE_BYTEDELTA) {
        if (e->rfeat_bd_filter != filter) {
            if (hcomp_analyze_bytedelta(raw, (size_t) len, k, &e->rfeat_sh, &e->rfeat_bd) != HCOMP_OK)
                return NULL;
            e->rfeat_bd_filter = filter;
        }
        return &e->rfeat_bd;
    }
    if (hcomp_filter_shuffle(filter) != HCOMP_SHUFFLE_BIT)
        return NULL;    /* a filter no candidate has (delta): no features of its form */
    if (e->rfeat_bs_filter != filter) {
        if (hcomp_analyze_bitshuffled(raw, (size_t) len, k, &e->rfeat_sh, &e->rfeat_bs) != HCOMP_OK)
            return NULL;
        e->rfeat_bs_filter = filter;
    }
    return &e->rfeat_bs;
}

void hcomp_engine_read_feedback(hcomp_engine *e, unsigned codec, int level, int filter,
                                uint32_t raw_len, uint32_t stored_len, const void *raw,
                                double seconds)
{
    if (e->pred == NULL || e->set.feedback_interval == 0 || codec == HCOMP_CODEC_NONE ||
        raw_len < 4096 || !(seconds > 0))
        return;
    double t0 = hcomp_now();
    const hcomp_features *feat = read_features(e, raw, filter, raw_len);
    if (feat != NULL)
        hcomp_predictor_observe(e->pred, feat, codec, level, raw_len, stored_len, 0.0, seconds);
    e->stats->t_read_feedback += hcomp_now() - t0;
}

/* A plan made on a prediction that missed what the piece then did by more than these
 * factors is made again for the next like task, with the local correction the observation
 * just made: otherwise a stream of like tasks keeps a mispredicted codec until its model
 * is refit (an archival file of particles kept lzma, predicted 2.4, observed 1.78, while
 * bit-shuffled zstd made 1.88). */
#define MISS_RATIO 1.1
#define MISS_SPEED 2.0
#define FORM_MEMORY 16      /* observations in a form's mean residual, at most */
#define OBSERVED_STALE 0.01 /* a prediction this far from what its pieces made is made again */

static int missed(double predicted, double observed, double factor)
{
    return predicted > 0 && observed > 0 &&
           (observed > predicted * factor || observed * factor < predicted);
}

void hcomp_engine_feedback(hcomp_engine *e, const hcomp_task_plan *plan, const hcomp_job *job)
{
    if (e->pred == NULL || e->set.feedback_interval == 0 || job->codec == HCOMP_CODEC_NONE ||
        job->len < 4096)
        return;
    double t0 = hcomp_now();
    const hcomp_features *feat = features_for(job->filter, &plan->feat, &plan->feat_sh,
                                              &plan->feat_bs, &plan->feat_bd);
    hcomp_predictor_observe(e->pred, feat, job->codec, job->level, job->len, job->coded,
                            job->seconds, 0.0);
    if (plan->slot >= 0 && plan->slot < HCOMP_ANALYSIS_SLOTS && job->coded > 0) {
        for (int c = 0; c < plan->input.ncand; c++) {
            const hcdp_candidate *k = &plan->input.cand[c];
            if (k->codec != job->codec || k->level != job->level || k->filter != job->filter)
                continue;
            double ratio = (double) job->len / (double) job->coded;
            double speed = job->seconds > 0 ? (double) job->len / job->seconds : 0;
            hcomp_analysis_slot *a = &e->aslot[plan->slot];
            int form = form_of(job->filter), seen = obs_index(a, job->codec, job->level, form);
            a->form_seen |= 1u << form;
            if (seen < 0 && a->nobs < HCOMP_SLOT_OBSERVED) {
                seen = a->nobs++;
                a->obs_codec[seen] = job->codec;
                a->obs_level[seen] = job->level;
                a->obs_form[seen] = form;
                a->obs_lratio[seen] = 0;
                a->obs_n[seen] = 0;
            }
            if (seen >= 0) {    /* a running mean over the last FORM_MEMORY pieces at most */
                if (a->obs_n[seen] < FORM_MEMORY)
                    a->obs_n[seen]++;
                a->obs_lratio[seen] += (log(ratio) - a->obs_lratio[seen]) / a->obs_n[seen];
                /* the candidates predicted before it are stale once it moved them by 1% */
                if (fabs(exp(a->obs_lratio[seen]) / k->ratio - 1.0) > OBSERVED_STALE) {
                    a->cand_valid = 0;
                    a->plan_valid = 0;
                }
            }
            /* what the regression missed on this data: against the line, not the
             * corrected prediction (which the observation itself has just moved) */
            if (k->line_ratio > 0 && a->form_n[form] < FORM_MEMORY) {   /* a running mean */
                a->form_n[form]++;
                a->form_resid[form] += (log(ratio / k->line_ratio) - a->form_resid[form]) /
                                       a->form_n[form];
            }
            if (missed(k->ratio, ratio, MISS_RATIO) || missed(k->comp_Bps, speed, MISS_SPEED)) {
                a->cand_valid = 0;
                a->plan_valid = 0;
            }
            break;
        }
    }
    e->stats->t_feedback += hcomp_now() - t0;
}
