/* Every key of a run, spelled once: the fields of strata_params and of
 * strata_settings (strata/strata.h), with the job file's key, the Python
 * keyword, how a value is read, its range and its default.  The structs,
 * strata_params_default, strata_settings_init, the library's copies of the
 * settings' strings, the job file's keys (app/job.c) and the Python
 * binding's declarations and keywords (python/strata_mc/_build.py) are all
 * made from these lists.  A new key is one line in its list, at its end
 * (the order is the structs' layout, so a new field is a new
 * STRATA_INTERFACE), and its documentation: strata(1) (doc/strata.1) and
 * README.md, "Job file reference", for a job key, doc/python.md for a
 * keyword.
 *
 * X(type, field, kind, job key, keyword, lo, hi, default, choices)
 *   kind     how the job file and the binding read a value:
 *              COUNT   a whole number in lo..hi (1e6 and 2.5e5 too)
 *              WHOLE   0..2^64-1, decimal or 0x hex (no 1e6 form: a double
 *                      holds only 53 bits)
 *              REAL    a number in [lo, hi]
 *              SWITCH  on | off (in Python any truth value)
 *              CHOICE  one of the words of choices, as its index (any case)
 *              PATH    a file's path (a job file's, relative to its folder)
 *              TEXT    characters (Python: a str)
 *   job key  "section.key" of the job file, "" where the program sets the
 *            field itself (its options, what it knows)
 *   keyword  the keyword of strata_mc.Integrator, "" where it has none */
#ifndef STRATA_KEYS_H
#define STRATA_KEYS_H

enum {
  STRATA_KEY_COUNT = 0,
  STRATA_KEY_WHOLE = 1,
  STRATA_KEY_REAL = 2,
  STRATA_KEY_SWITCH = 3,
  STRATA_KEY_CHOICE = 4,
  STRATA_KEY_PATH = 5,
  STRATA_KEY_TEXT = 6
};

/* How a run goes: strata_params.  strata(1), "[vegas]", says more of what
 * each does. */
#define STRATA_PARAMS_KEYS(X)                                                                  \
  /* the algorithm */                                                                          \
  X(strata_mode, mode, CHOICE, "vegas.mode", "mode", 0, 0, STRATA_MODE_VEGASPLUS,              \
    "vegas+ vegas vegas1d plain qmc")                                                          \
  /* evaluations per iteration (target) */                                                     \
  X(int64_t, neval, COUNT, "vegas.neval", "neval", 2, INT64_C(1) << 50, 1000000, "")           \
  /* stop after this many evaluations in total */                                              \
  X(int64_t, maxeval, COUNT, "vegas.maxeval", "maxeval", 2, INT64_C(1) << 60,                  \
    INT64_C(10000000000), "")                                                                  \
  /* stop after this many iterations */                                                        \
  X(int, maxiter, COUNT, "vegas.maxiter", "maxiter", 1, 1000000, 30, "")                       \
  /* iterations that adapt map and stratification; from 20, more while the map improves */     \
  X(int, adapt_iters, COUNT, "vegas.adapt_iters", "adapt_iters", 0, 1000000, 20, "")           \
  /* leading iterations left out of the average */                                             \
  X(int, skip, COUNT, "vegas.skip", "skip", 0, 1000000, 5, "")                                 \
  /* the tolerances: converged when the error is below either */                               \
  X(double, epsrel, REAL, "vegas.epsrel", "epsrel", 0, 1, 1e-3, "")                            \
  X(double, epsabs, REAL, "vegas.epsabs", "epsabs", 0, INFINITY, 0.0, "")                      \
  /* map increments per axis, at most (doc/algorithm.md) */                                    \
  X(int, ninc, COUNT, "vegas.ninc", "ninc", 1, 1000000, 1000, "")                              \
  /* map damping; 0 freezes the map */                                                         \
  X(double, alpha, REAL, "vegas.alpha", "alpha", 0, 10, 0.5, "")                               \
  /* stratification exponent; 0 = classic */                                                   \
  X(double, beta, REAL, "vegas.beta", "beta", 0, 1, 0.75, "")                                  \
  X(uint64_t, seed, WHOLE, "vegas.seed", "seed", 0, 0, 1, "")                                  \
  /* cap on the number of hypercubes */                                                        \
  X(int64_t, max_nhcube, COUNT, "vegas.max_nhcube", "max_nhcube", 1, INT64_C(1) << 40,         \
    1000000, "")                                                                               \
  /* convergence needs Q >= min_q */                                                           \
  X(double, min_q, REAL, "vegas.min_q", "min_q", 0, 0.999, 0.01, "")                           \
  /* CPU threads, 0 = all available */                                                         \
  X(int, nthreads, COUNT, "run.threads", "threads", 0, STRATA_MAX_THREADS, 0, "")              \
  /* point set of mode qmc and of qmc_map */                                                   \
  X(strata_qmc_rule, qmc, CHOICE, "vegas.qmc", "qmc", 0, 0, STRATA_QMC_SOBOL, "sobol lattice") \
  /* independent randomizations per qmc iteration */                                           \
  X(int, nrand, COUNT, "vegas.nrand", "nrand", 2, 4096, 16, "")                                \
  /* vegas modes: frozen-map iterations draw qmc points */                                     \
  X(int, qmc_map, SWITCH, "vegas.qmc_map", "qmc_map", 0, 0, 0, "")                             \
  /* vegas modes: evaluations of each iteration after adapt_iters; 0 =                         \
   * neval.  Train the map on small iterations, then spend the budget on                       \
   * big ones. */                                                                              \
  X(int64_t, neval_frozen, COUNT, "vegas.neval_frozen", "neval_frozen", 0, INT64_C(1) << 50,   \
    0, "")

/* What a run keeps besides its result: strata_settings, between its size
 * and interface and its names. */
#define STRATA_SETTINGS_KEYS(X)                                                                \
  /* The convergence log (HDF5, doc/file-formats.md), written by rank 0: a                     \
   * row per iteration, flushed as it goes; `strata log` prints it and                         \
   * strata-plot draws it.  NULL: none.  A log already there is never                          \
   * overwritten (unless the run resumes, and then it is continued). */                        \
  X(const char *, log, PATH, "run.log", "log", 0, 0, NULL, "")                                 \
  /* a map snapshot every this many iterations; 0: at the end */                               \
  X(int, log_map, COUNT, "run.log_map", "log_map", 0, 1000000, 0, "")                          \
  /* The checkpoint (as strata_integrator_save writes it): after every                         \
   * checkpoint_every iterations and/or every checkpoint_every_s seconds                       \
   * (0: not by that measure), at the end, and when the run stops on a                         \
   * request.  NULL: none.  A second run on it waits for nothing: it is                        \
   * refused (a lock beside it, PATH.lock). */                                                 \
  X(const char *, checkpoint, PATH, "run.checkpoint", "checkpoint", 0, 0, NULL, "")            \
  X(int, checkpoint_every, COUNT, "run.checkpoint_every", "checkpoint_every", 0, 1000000,      \
    0, "")                                                                                     \
  X(double, checkpoint_every_s, REAL, "run.checkpoint_every_s", "checkpoint_every_s", 0,       \
    1e9, 0.0, "")                                                                              \
  /* STRATA_RESUME_NO: a checkpoint already there is an error (never                           \
   * overwritten); _YES: continue from it (it must exist, unless its lock                      \
   * PATH.lock is there and the log is not: a run stopped before it                            \
   * started, which starts); _AUTO: continue from it where it exists, else                     \
   * start. */                                                                                 \
  X(int, resume, CHOICE, "run.resume", "resume", 0, 0, STRATA_RESUME_NO, "no yes auto")        \
  /* A resumed run takes this integrator's values of the keys that only                        \
   * decide when to stop and which iterations to average (maxiter,                             \
   * maxeval, skip, epsrel, epsabs, min_q) instead of refusing a                               \
   * checkpoint that has others: the continued run equals an uninterrupted                     \
   * one run with the new values.  The program's --force. */                                   \
  X(int, new_stop_keys, SWITCH, "", "new_stop_keys", 0, 0, 0, "")                              \
  /* After every iteration, compare every rank's state (a hash) and stop                       \
   * with an error naming the first rank that differs (debugging). */                          \
  X(int, check_ranks, SWITCH, "run.check_ranks", "check_ranks", 0, 0, 0, "")                   \
  /* What the caller's data is (strata_problem.user: a width, a file's                         \
   * hash), up to 256 printable characters: recorded in the checkpoint and                     \
   * the log, and a resume whose identity differs is refused, naming it.                       \
   * NULL: none (the data's address is never compared). */                                     \
  X(const char *, identity, TEXT, "", "identity", 0, 0, NULL, "")                              \
  /* A name for the run in messages and in the log ("(libstrata)" if                           \
   * NULL); the program's is the job file. */                                                  \
  X(const char *, name, TEXT, "", "", 0, 0, NULL, "")                                          \
  /* Progress on stderr: resume, checkpoints written (rank 0); with                            \
   * strata_integrator_open also each rank's backend and exchange, and the                     \
   * problem's hypercubes.  The program's -v. */                                               \
  X(int, verbose, SWITCH, "", "verbose", 0, 0, 0, "")                                          \
  /* Added in interface 3.  Another run's checkpoint or log whose map (and                     \
   * allocation, where the hypercubes match) this run starts from; NULL:                       \
   * the uniform map.  The definition records it, so a checkpoint                              \
   * continues only from the same start. */                                                    \
  X(const char *, map, PATH, "vegas.map", "", 0, 0, NULL, "")                                  \
  /* The exact value where the caller knows it, recorded in the log; NaN                       \
   * (strata_settings_init's) where not. */                                                    \
  X(double, exact, REAL, "", "", 0, 0, NAN, "")                                                \
  /* Say on stderr what the run set right by itself (a damaged log set                         \
   * aside), also without verbose. */                                                          \
  X(int, notes, SWITCH, "", "", 0, 0, 0, "")

/* A field of a struct made from a list: X(STRATA_KEY_FIELD). */
#define STRATA_KEY_FIELD(type, field, kind, key, keyword, lo, hi, def, choices) type field;

#endif
