/* HCDP, with the cost model of docs/ENGINE.md:
 *
 *   stored(len, c) = len / ratio_c + 16 bytes per piece
 *   W = len / comp_Bps + stored / write_Bps + latency x pieces   (write path)
 *   R = len / decomp_Bps + stored / read_Bps + latency x pieces  (read path)
 *   S = stored / write_Bps                                        (footprint, as I/O time)
 *   Place(len, t, c) = wc W + wd R + wr S + price_t stored        (price: of the room)
 *
 * R and S are of the tier the data is read from and kept on after the close: for a
 * node-local tier drained at close, the tier it is drained to.
 *
 *   best(a, t) = min( best(a, t+1),                                  skip the tier
 *                     Place(a, t, c)                 if it fits,     for every c
 *                     Place(a', t, c) + best(a - a', t+1)  else,     a' the largest
 *                                                                   4096-multiple that fits )
 *
 * memoised on (a, t): remainders differ from the task size by 4096-multiples, so
 * sub-problems repeat across candidates. A split is bounded first: Place(a', t, c) plus
 * the remainder's lowest possible cost must beat the best so far, or its remainder is
 * never explored. That bound fills the later tiers cheapest first, each at the lowest
 * per-byte cost of any candidate there (headers, rounding and latency left out) and with
 * as many bytes as its room takes at the best ratio of any candidate. */
#include "hcdp.h"
#include "filter.h"
#include "tiers/piece_header.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define HEADER 16u
#define MEMO_SIZE 4096

typedef struct memo_entry {
    uint64_t a;
    unsigned gen;       /* the plan it belongs to: an entry of an older one is empty */
    int t;
    double cost;
    int kind;           /* 0 skip, 1 whole, 2 split */
    int cand;
    uint64_t split;
} memo_entry;

typedef struct solver {
    const hcdp_input *in;
    memo_entry memo[MEMO_SIZE];
    unsigned gen;       /* of this plan (clearing 4096 entries per plan cost more than HCDP) */
    double lb_rate[HCDP_MAX_TIERS];     /* lowest cost per byte on tier t, any candidate */
    double lb_cap[HCDP_MAX_TIERS];      /* most logical bytes tier t can take */
    int lb_order[HCDP_MAX_TIERS];       /* tiers by lb_rate, cheapest first */
    int bound;
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
    uint64_t n = pieces(in, len), over = HEADER * n;
    if (in->block_size) {   /* each piece's block table (a bound: blocks counted per piece);
                               pieces stored as they are have blocks of HCOMP_BLOCK_AS_IS */
        uint64_t b = r <= 1.0 ? HCOMP_BLOCK_AS_IS
                     : hcomp_filter_is_bitshuffle(in->cand[c].filter) && in->block_size_bs
                         ? in->block_size_bs : in->block_size;
        over += (uint64_t) HCOMP_BLOCK_TABLE_FIXED * n + HCOMP_BLOCK_ENTRY * ((len + b - 1) / b + n);
    }
    return (uint64_t) ceil((double) len / r) + over;
}

/* The tier that tier t's data is drained to before the close returns, or NULL */
static const hcdp_tier *drain_dest(const hcdp_input *in, int t)
{
    int d = in->tier[t].drain_to - 1;
    return d >= 0 && d != t && d < in->ntiers ? &in->tier[d] : NULL;
}

double hcdp_place_cost(const hcdp_input *in, uint64_t len, int t, int c)
{
    const hcdp_candidate *k = &in->cand[c];
    const hcdp_tier *tier = &in->tier[t];
    double st = (double) stored(in, len, c), n = (double) pieces(in, len);
    double tc = k->comp_Bps > 0 ? (double) len / k->comp_Bps : 0.0;
    double td = k->decomp_Bps > 0 ? (double) len / k->decomp_Bps : 0.0;
    double W = tc + st / tier->write_Bps + tier->latency * n;
    const hcdp_tier *d = drain_dest(in, t);
    const hcdp_tier *home = d ? d : tier;   /* read from, and kept on, after the close */
    if (d)  /* moved at close before the close returns: read back, decoded, stored again
             * there (estimated with the same codec); the write is paid twice */
        W += st / tier->read_Bps + td + tc + st / d->write_Bps + (tier->latency + d->latency) * n;
    double R = td + st / home->read_Bps + home->latency * n;
    double S = st / home->write_Bps;
    return in->w.wc * W + in->w.wd * R + in->w.wr * S + tier->price * st;
}

/* The weights scaled to sum 1 (equal when none is positive), as the objective uses them. */
static hcdp_weights normalised(hcdp_weights w)
{
    double sum = w.wc + w.wd + w.wr;
    if (!(sum > 0))
        return (hcdp_weights){1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0};
    return (hcdp_weights){w.wc / sum, w.wd / sum, w.wr / sum};
}

/* Place per logical byte on tier t, weighted by w, of a candidate storing st bytes per
 * byte and encoding (decoding) at tc (td) seconds a byte; no headers, latency or price. */
static double rate_of(const hcdp_input *in, int t, hcdp_weights w, double st, double tc,
                      double td)
{
    const hcdp_tier *tier = &in->tier[t], *d = drain_dest(in, t), *home = d ? d : tier;
    double W = tc + st / tier->write_Bps;
    if (d)
        W += st / tier->read_Bps + td + tc + st / d->write_Bps;
    double R = td + st / home->read_Bps;
    double S = st / home->write_Bps;
    return w.wc * W + w.wd * R + w.wr * S;
}

/* Place(len, t, c) / len without the headers, the rounding and the latency, which
 * only add: a lower bound of the cost per byte. */
static double place_rate(const hcdp_input *in, int t, int c)
{
    const hcdp_candidate *k = &in->cand[c];
    double st = 1.0 / (k->ratio > 1.0 ? k->ratio : 1.0);
    double tc = k->comp_Bps > 0 ? 1.0 / k->comp_Bps : 0.0;
    double td = k->decomp_Bps > 0 ? 1.0 / k->decomp_Bps : 0.0;
    return rate_of(in, t, in->w, st, tc, td) + in->tier[t].price * st;
}

void hcdp_room_prices(hcdp_input *in)
{
    hcdp_weights w = normalised(in->w);     /* as hcdp_plan_task will use them */
    /* from the slowest up: a tier's alternative is the next one with room, whose own
     * price is already set */
    double below = INFINITY;    /* raw rate + price of the next tier down with room */
    for (int t = in->ntiers - 1; t >= 0; t--) {
        hcdp_tier *tier = &in->tier[t];
        tier->price = 0;
        if (tier->room == 0)
            continue;
        double rate = rate_of(in, t, w, 1.0, 0.0, 0.0);   /* a raw byte */
        if (tier->capacity > 0 && isfinite(below) && below > rate && tier->room < tier->capacity) {
            double used = 1.0 - (double) tier->room / (double) tier->capacity;
            tier->price = (below - rate) * used * used;
        }
        below = rate + tier->price;
    }
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

/* The lowest cost a remainder of a bytes on tiers t.. could have (see above). */
static double lower_bound(const solver *s, uint64_t a, int t)
{
    if (!s->bound)
        return 0.0;
    double left = (double) a, cost = 0.0;
    for (int i = 0; i < s->in->ntiers && left > 0; i++) {
        int u = s->lb_order[i];
        if (u < t)
            continue;
        double take = left < s->lb_cap[u] ? left : s->lb_cap[u];
        cost += take * s->lb_rate[u];
        left -= take;
    }
    return left > 0 ? INFINITY : cost * (1 - 1e-9); /* rounding must not overstate it */
}

/* A candidate's largest part that fits a tier, with its cost there and the bound. */
typedef struct split_option {
    double here, lb;
    uint64_t a1;
    int c;
} split_option;

static memo_entry *slot(solver *s, uint64_t a, int t)
{
    uint64_t h = (a / HCDP_ALIGN) * 0x9E3779B97F4A7C15ull + (uint64_t) t * 0xC2B2AE3D27D4EB4Full;
    for (unsigned probe = 0; probe < MEMO_SIZE; probe++) {
        memo_entry *e = &s->memo[(h + probe) & (MEMO_SIZE - 1)];
        if (e->gen != s->gen || (e->t == t && e->a == a))
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
    if (e && e->gen == s->gen)
        return e->cost;
    s->states++;
    /* the best of: skipping the tier, each candidate whole if it fits, each candidate's
     * largest part that fits plus the best for the rest; the lowest cost wins, a tie
     * goes to the lowest candidate and beats skipping (the faster tier is used) */
    double bc = best(s, a, t + 1);
    int kind = 0, cand = INT_MAX;
    uint64_t split = 0;
    uint64_t room = in->tier[t].room;
    split_option sp[HCDP_MAX_CANDIDATES];
    int nsp = 0;
    for (int c = 0; c < in->ncand; c++) {
        if (c > 0 && !(in->cand[c].ratio > 1.0))
            continue;           /* a codec is used only where it shrinks the data */
        if (stored(in, a, c) <= room) {
            double cost = hcdp_place_cost(in, a, t, c);
            if (cost < bc || (cost == bc && c < cand)) {
                bc = cost;
                kind = 1;
                cand = c;
            }
        } else if (t + 1 < in->ntiers) {
            /* a part is split off only where the room left is at least a minimum part:
             * the store path cuts a part that came out larger than predicted to what the
             * tier holds only there, and sends it whole to the next tier elsewhere (an
             * extra piece for nothing, and the same plan again for the next task) */
            uint64_t a1 = room >= in->tier[t].min_part + HEADER ? largest_fit(in, a, c, room) : 0;
            if (a1 == 0 || a1 < in->tier[t].min_part)
                continue;
            double here = hcdp_place_cost(in, a1, t, c);
            sp[nsp].here = here;
            sp[nsp].lb = here + lower_bound(s, a - a1, t + 1);
            sp[nsp].a1 = a1;
            sp[nsp].c = c;
            for (int i = nsp++; i > 0 && sp[i - 1].lb > sp[i].lb; i--) { /* by bound */
                split_option x = sp[i];
                sp[i] = sp[i - 1];
                sp[i - 1] = x;
            }
        }
    }
    /* splits, most promising first: once a bound cannot win, no later one can */
    for (int i = 0; i < nsp; i++) {
        if (s->bound && sp[i].lb > bc)
            break;
        if (s->bound && sp[i].lb >= bc && sp[i].c > cand)
            continue;
        double cost = sp[i].here + best(s, a - sp[i].a1, t + 1);
        if (cost < bc || (cost == bc && sp[i].c < cand)) {
            bc = cost;
            kind = 2;
            cand = sp[i].c;
            split = sp[i].a1;
        }
    }
    if (kind == 0)
        cand = -1;
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
    e->gen = s->gen;
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
    in.w = normalised(in.w);
    s.in = &in;
    s.states = 0;
    s.overflow = 0;
    /* the bound needs costs that only grow with the bytes: weights >= 0 */
    s.bound = !in.no_bound && in.w.wc >= 0 && in.w.wd >= 0 && in.w.wr >= 0;
    for (int t = 0; t < in.ntiers; t++) {
        double rate = INFINITY, ratio = 1.0;
        for (int c = 0; c < in.ncand; c++)
            if (c == 0 || in.cand[c].ratio > 1.0) {
                double r = place_rate(&in, t, c);
                rate = r < rate ? r : rate;
                ratio = in.cand[c].ratio > ratio ? in.cand[c].ratio : ratio;
            }
        s.lb_rate[t] = rate;
        s.lb_cap[t] = (double) in.tier[t].room * ratio;
        int i = t;              /* insertion sort by rate */
        while (i > 0 && s.lb_rate[s.lb_order[i - 1]] > rate) {
            s.lb_order[i] = s.lb_order[i - 1];
            i--;
        }
        s.lb_order[i] = t;
        if (!isfinite(rate) || !(rate >= 0))
            s.bound = 0;
    }
    if (++s.gen == 0) {     /* wrapped: entries of 2^32 plans ago would look current */
        memset(s.memo, 0, sizeof(s.memo));
        s.gen = 1;
    }
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
        if (e == NULL || e->gen != s.gen) {
            best(&s, a, t);     /* evicted by overflow: recompute this state */
            e = slot(&s, a, t);
            if (e == NULL || e->gen != s.gen)
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
