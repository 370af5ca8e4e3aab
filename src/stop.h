/* Stop requests from outside: SIGTERM and SIGUSR1 (what Slurm sends before
 * a time limit or a preemption) only set a flag; the driver looks at it
 * between iterations, where the state is whole and can be saved. */
#ifndef STRATA_STOP_H
#define STRATA_STOP_H

/* Catches SIGTERM and SIGUSR1 from now on.  Returns 0, or -1 with errno. */
int strata_stop_install(void);
/* The signal that asked to stop, or 0. */
int strata_stop_requested(void);
#endif
