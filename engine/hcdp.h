/* HCDP: hierarchical compression and data placement (HCompress, seed 000 IV-F).
 * For one task, chooses how to split it (in 4096-byte multiples) over the tiers and
 * which codec each part gets, minimising the weighted cost below. A pure function
 * of its inputs: the caller supplies predictions, tier state and weights. */
#ifndef HCOMP_HCDP_H
#define HCOMP_HCDP_H

#include <stddef.h>
#include <stdint.h>

#define HCDP_MAX_TIERS 16
#define HCDP_MAX_CANDIDATES 32
#define HCDP_MAX_PARTS 64
#define HCDP_ALIGN 4096u
/* The engine's smallest split part: smaller parts cost a piece (and its latency) for
 * next to nothing (a quarter of the tier's capacity when that is less). */
#define HCDP_MIN_SPLIT (64u * 1024u)

/* A way to store bytes: codec (and level, filter) with its predicted behaviour on
 * this task's data. Candidate 0 must be "store raw" (ratio 1, infinite speeds). */
typedef struct hcdp_candidate {
    unsigned codec;
    int level;
    int filter;          /* enum hcomp_filter (engine/filter.h) */
    double ratio;        /* predicted original / stored */
    double comp_Bps;     /* predicted compression speed, logical bytes/s (0: free) */
    double decomp_Bps;   /* predicted decompression speed (0: free) */
    double line_ratio;   /* the model's regression line alone (the engine's feedback) */
} hcdp_candidate;

typedef struct hcdp_tier {
    uint64_t room;       /* bytes this task may store there */
    double write_Bps, read_Bps; /* > 0 */
    double latency;      /* seconds per piece access */
    uint64_t min_part;   /* smallest part a split may leave there (0: 4096) */
    int drain_to;        /* 1 + the tier a part stored here is moved to at close (node-local
                            data, hcomp_drain=close); 0: it stays */
    uint64_t capacity;   /* bytes the tier holds in all (0: unbounded or not known) */
    double price;        /* of its room, objective per stored byte (hcdp_room_prices) */
} hcdp_tier;

typedef struct hcdp_weights {
    double wc, wd, wr;   /* normalised to sum 1 by hcdp_plan */
} hcdp_weights;

typedef struct hcdp_input {
    uint64_t size;            /* task bytes */
    uint32_t piece_size;      /* largest piece (latency is paid per piece) */
    uint32_t block_size;      /* pieces framed in blocks of this size: their tables' room */
    uint32_t block_size_bs;   /* those of bit-shuffled candidates (0: block_size) */
    int ntiers;
    hcdp_tier tier[HCDP_MAX_TIERS];
    int ncand;
    hcdp_candidate cand[HCDP_MAX_CANDIDATES];
    hcdp_weights w;
    int no_bound;             /* tests: explore every split (the same plan, more states) */
} hcdp_input;

typedef struct hcdp_part {
    uint64_t len;        /* logical bytes (a multiple of 4096 except the last part) */
    int tier;
    int cand;            /* index into the input's candidates */
    double cost;
} hcdp_part;

typedef struct hcdp_plan {
    int nparts;
    hcdp_part part[HCDP_MAX_PARTS];
    double cost;         /* the objective, seconds */
    unsigned states;     /* memoised sub-problems evaluated (for the overhead figure) */
} hcdp_plan;

/* Cost of storing len bytes with candidate c on tier t, seconds (weighted), with the
 * price of the room it takes. */
double hcdp_place_cost(const hcdp_input *in, uint64_t len, int t, int c);
/* Sets each tier's price: what a stored byte there costs the data that it will push to
 * a slower tier once the tier is full. A tier of known capacity is priced at the
 * difference between storing a raw byte on the next tier with room (plus that tier's own
 * price) and storing it here, times (used / capacity)^2: nothing while the tier is
 * empty, nearly that difference when it is almost full. Others: 0. */
void hcdp_room_prices(hcdp_input *in);
/* Plan the task; returns 0, or -1 if no tier has room for it (the caller spills or
 * fails with "no space"). */
int hcdp_plan_task(const hcdp_input *in, hcdp_plan *out);

#endif
