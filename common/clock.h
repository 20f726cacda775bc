/* The one clock every layer times itself with. */
#ifndef HCOMP_CLOCK_H
#define HCOMP_CLOCK_H

/* Seconds on the monotonic clock (never goes back with the wall clock). */
double hcomp_now(void);

#endif
