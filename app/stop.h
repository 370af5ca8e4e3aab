/* Stop requests from outside: SIGTERM and SIGUSR1 (what Slurm sends before
 * a time limit or a preemption) only set a flag; the driver looks at it
 * between iterations, where the state is whole and can be saved, and
 * before the run at the points where the ranks agree (doc/slurm.md).
 *
 * Also the process's other ways out that strata does not choose: a child
 * it runs (the C compiler) is ended with it, and an exit() from user code
 * is not taken for a finished run. */
#ifndef STRATA_STOP_H
#define STRATA_STOP_H

/* The exit status of a run that a signal stopped after writing its
 * checkpoint: "checkpointed, please requeue" (0 finished, 1 error, 2 usage). */
#define STRATA_EXIT_REQUEUE 3

/* Catches SIGTERM and SIGUSR1 from now on.  Returns 0, or -1 with errno.
 * The program calls it first thing, so that a signal during start-up
 * (MPI_Init, a compile) is seen rather than ending the process. */
int strata_stop_install(void);
/* Unblocks SIGTERM and SIGUSR1, which the strata command (app/launch.c)
 * blocks before this program's libraries load: one sent meanwhile is
 * pending and takes effect now, caught if strata_stop_install came first.
 * The program calls it at once, whatever the command. */
void strata_stop_unblock(void);
/* SIGTERM and SIGUSR1 get their usual effect again (a job without a
 * checkpoint has nothing to save); one that arrived meanwhile takes it now. */
void strata_stop_uninstall(void);
/* The signal that asked to stop, or 0. */
int strata_stop_requested(void);
/* Ends the process as the signal sig would have without strata's handler. */
void strata_stop_raise(int sig);

/* A child strata runs (the C compiler), started in a process group of its
 * own (posix_spawn with POSIX_SPAWN_SETPGROUP and group 0): pid from
 * spawning until it has been waited for, then 0.  A stop signal meanwhile
 * (or SIGINT or SIGHUP, passed on) ends the group, compiler and all: a
 * compile must not outlive strata and leave its output half-written.  The
 * caller removes its temporary files as after any failed command, and
 * finds the signal in strata_stop_requested. */
void strata_stop_child(int pid);
int strata_stop_installed(void);

/* From now on an exit() that strata does not make (user code that calls
 * exit, in its function or a constructor) prints msg, a whole line, and
 * ends the process with status 1 instead of its own (0 would read as a
 * finished run).  msg NULL: strata's own exit follows. */
void strata_stop_guard_exit(const char *msg);
#endif
