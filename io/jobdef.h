/* A job's identity, for checkpoints and logs: the keys that decide what a
 * run computes, written out in one canonical form so that two jobs can be
 * compared key by key whatever their files looked like (defaults spelled out
 * or left implicit, 1e6 or 1000000). */
#ifndef STRATA_JOBDEF_H
#define STRATA_JOBDEF_H
#include <stddef.h>

#include "strata/strata.h"

/* Room for the longest definition: 32 bounds per side at 25 characters. */
#define STRATA_JOBDEF_MAX 8192

/* One "section.key = value" line per key in a fixed order; numbers as %.17g
 * so the text gives back the exact values.  Returns STRATA_OK. */
int strata_jobdef_text(const strata_problem *pr, const strata_params *p, char *buf,
                       size_t len);

/* Keys a resumed run may change (the program's --force): they decide when to stop and
 * which iterations to average, never which points are drawn or how the
 * state evolves, so the continued run equals an uninterrupted one with the
 * new values. */
int strata_jobdef_safe_key(const char *key);

/* FNV-1a (64 bit) of the lines whose keys are not safe, as 16 hex digits:
 * equal hashes mean the same integral sampled the same way. */
void strata_jobdef_hash(const char *text, char out[17]);

/* Compares a saved definition (from the file `saved_name`, a `kind` such
 * as "checkpoint") with the job's own (from `job_name`).  STRATA_OK if they
 * are equal, or differ only in safe keys and force is set; otherwise an
 * error naming the first key that differs, both values, and whether --force
 * would help. */
int strata_jobdef_compare(const char *saved, const char *now, int force,
                          const char *saved_name, const char *kind, const char *job_name);
/* The same, naming the caller's way to take new values of the safe keys
 * (override: "--force", "strata_settings.new_stop_keys") in its messages. */
int strata_jobdef_compare_as(const char *saved, const char *now, int force,
                             const char *override, const char *saved_name, const char *kind,
                             const char *job_name);
#endif
