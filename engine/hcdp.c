/* HCDP, with the cost model of docs/ENGINE.md:
 *
 *   stored(len, c) = len / ratio_c + 16 bytes per piece
 *   W = len / comp_Bps + stored / write_Bps + latency x pieces   (write path)
 *   R = len / decomp_Bps + stored / read_Bps + latency x pieces  (read path)
 *   S = stored / write_Bps                                        (footprint, as I/O time)
 *   Place(len, t, c) = wc W + wd R + wr S
 *
 *   best(a, t) = min( best(a, t+1),                                  skip the tier
 *                     Place(a, t, c)                 if it fits,     for every c
 *                     Place(a', t, c) + best(a - a', t+1)  else,     a' the largest
 *                                                                   4096-multiple that fits )
 *
 * memoised on (a, t): remainders differ from the task size by 4096-multiples, so
 * sub-problems repeat across candidates. */
#include "hcdp.h"

#include <math.h>
#include <string.h>

#define HEADER 16u
#define MEMO_SIZE 4096

typedef struct memo_entry {
    uint64_t a;
    int t;              /* -1: empty slot */
    double cost;
    int kind;           /* 0 skip, 1 whole, 2 split */
    int cand;
    uint64_t split;
} memo_entry;

typedef struct solver {
    const hcdp_input *in;
    memo_entry memo[MEMO_SIZE];
    unsigned states;
    int overflow;
} solver;

static uint64_t pieces(const hcdp_input *in, uint64_t len)
{
    uint64_t ps = in->piece_size ? in->piece_size : (1u << 20);
    return (len + ps - 1) / ps;
}

static uint64_t stored(const hcdp_input *in, uint64_t len, int c)
{
    double r = in->cand[c].ratio > 1.0 ? in->cand[c].ratio : 1.0;
    return (uint64_t) ceil((double) len / r) + HEADER * pieces(in, len);
}

double hcdp_place_cost(const hcdp_input *in, uint64_t len, int t, int c)
{
    const hcdp_candidate *k = &in->cand[c];
    const hcdp_tier *tier = &in->tier[t];
    double st = (double) stored(in, len, c), n = (double) pieces(in, len);
    double tc = k->comp_Bps > 0 ? (double) len / k->comp_Bps : 0.0;
    double td = k->decomp_Bps > 0 ? (double) len / k->decomp_Bps : 0.0;
    double W = tc + st / tier->write_Bps + tier->latency * n;
    if (tier->drain_to > 0 && tier->drain_to - 1 != t && tier->drain_to - 1 < in->ntiers) {
        /* moved at close before the close returns: read back, decoded, stored again there
         * (estimated with the same codec); the write is paid twice */
        const hcdp_tier *d = &in->tier[tier->drain_to - 1];
        W += st / tier->read_Bps + td + tc + st / d->write_Bps + (tier->latency + d->latency) * n;
    }
    double R = td + st / tier->read_Bps + tier->latency * n;
    double S = st / tier->write_Bps;
    return in->w.wc * W + in->w.wd * R + in->w.wr * S;
}

/* Largest multiple of 4096 (< a) whose stored size with c fits room; 0 if none. */
static uint64_t largest_fit(const hcdp_input *in, uint64_t a, int c, uint64_t room)
{
    double r = in->cand[c].ratio > 1.0 ? in->cand[c].ratio : 1.0;
    uint64_t ps = in->piece_size ? in->piece_size : (1u << 20);
    if (room <= HEADER)
        return 0;
    /* first guess ignoring the headers of the extra pieces, then step down */
    uint64_t guess = (uint64_t) ((double) (room - HEADER) * r);
    guess = guess / HCDP_ALIGN * HCDP_ALIGN;
    if (guess >= a)
        guess = (a - 1) / HCDP_ALIGN * HCDP_ALIGN;
    while (guess > 0 && stored(in, guess, c) > room) {
        uint64_t over = stored(in, guess, c) - room;
        uint64_t step = (uint64_t) ceil((double) over * r / HCDP_ALIGN) * HCDP_ALIGN;
        if (step < HCDP_ALIGN)
            step = HCDP_ALIGN;
        if (step < ps / 64)     /* headers shrink too as pieces go; converge quickly */
            step = HCDP_ALIGN;
        guess = guess > step ? guess - step : 0;
    }
    return guess;
}

static memo_entry *slot(solver *s, uint64_t a, int t)
{
    uint64_t h = (a / HCDP_ALIGN) * 0x9E3779B97F4A7C15ull + (uint64_t) t * 0xC2B2AE3D27D4EB4Full;
    for (unsigned probe = 0; probe < MEMO_SIZE; probe++) {
        memo_entry *e = &s->memo[(h + probe) & (MEMO_SIZE - 1)];
        if (e->t == -1 || (e->t == t && e->a == a))
            return e;
    }
    return NULL;
}

static double best(solver *s, uint64_t a, int t)
{
    const hcdp_input *in = s->in;
    if (t >= in->ntiers)
        return INFINITY;
    memo_entry *e = slot(s, a, t);
    if (e && e->t == t && e->a == a)
        return e->cost;
    s->states++;
    double bc = best(s, a, t + 1);
    int kind = 0, cand = -1;
    uint64_t split = 0;
    uint64_t room = in->tier[t].room;
    for (int c = 0; c < in->ncand; c++) {
        if (c > 0 && !(in->cand[c].ratio > 1.0))
            continue;           /* a codec is used only where it shrinks the data */
        double cost;
        if (stored(in, a, c) <= room) {
            cost = hcdp_place_cost(in, a, t, c);
            /* on a tie, the faster (earlier) tier rather than skipping it */
            if (cost < bc || (kind == 0 && cost <= bc)) {
                bc = cost;
                kind = 1;
                cand = c;
            }
        } else if (t + 1 < in->ntiers) {
            uint64_t a1 = largest_fit(in, a, c, room);
            if (a1 == 0 || a1 < in->tier[t].min_part)
                continue;
            cost = hcdp_place_cost(in, a1, t, c) + best(s, a - a1, t + 1);
            if (cost < bc || (kind == 0 && cost <= bc)) {
                bc = cost;
                kind = 2;
                cand = c;
                split = a1;
            }
        }
    }
    if (e == NULL) {
        s->overflow = 1;        /* memo full: still correct, only slower */
        return bc;
    }
    e = slot(s, a, t);          /* recursion may have filled slots */
    if (e == NULL) {
        s->overflow = 1;
        return bc;
    }
    e->a = a;
    e->t = t;
    e->cost = bc;
    e->kind = kind;
    e->cand = cand;
    e->split = split;
    return bc;
}

int hcdp_plan_task(const hcdp_input *in0, hcdp_plan *out)
{
    static _Thread_local solver s;
    hcdp_input in = *in0;
    double sum = in.w.wc + in.w.wd + in.w.wr;
    if (!(sum > 0)) {
        in.w.wc = in.w.wd = in.w.wr = 1.0 / 3.0;
    } else {
        in.w.wc /= sum;
        in.w.wd /= sum;
        in.w.wr /= sum;
    }
    s.in = &in;
    s.states = 0;
    s.overflow = 0;
    for (unsigned i = 0; i < MEMO_SIZE; i++)
        s.memo[i].t = -1;
    memset(out, 0, sizeof(*out));
    double total = in.size ? best(&s, in.size, 0) : 0.0;
    out->states = s.states;
    if (!isfinite(total))
        return -1;
    out->cost = total;
    uint64_t a = in.size;
    int t = 0;
    while (a > 0 && t < in.ntiers && out->nparts < HCDP_MAX_PARTS) {
        memo_entry *e = slot(&s, a, t);
        if (e == NULL || e->t != t || e->a != a) {
            best(&s, a, t);     /* evicted by overflow: recompute this state */
            e = slot(&s, a, t);
            if (e == NULL || e->t != t)
                return -1;
        }
        if (e->kind == 0) {
            t++;
            continue;
        }
        hcdp_part *p = &out->part[out->nparts++];
        p->tier = t;
        p->cand = e->cand;
        p->len = e->kind == 1 ? a : e->split;
        p->cost = hcdp_place_cost(&in, p->len, t, e->cand);
        a -= p->len;
        t++;
    }
    return a == 0 ? 0 : -1;
}
