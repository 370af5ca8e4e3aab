#include "stop.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strata/strata.h"

static volatile sig_atomic_t requested;
static volatile sig_atomic_t child; /* process group of a child run for strata */
static int installed;
static struct sigaction saved_int, saved_hup;

static void on_signal(int sig)
{
  int e = errno;
  requested = sig;
  strata_request_stop(); /* the run in progress stops after its iteration */
  /* The child's group is not the terminal's: it hears only what we pass on. */
  if (child > 0) kill(-(pid_t)child, SIGTERM);
  errno = e;
}

static int catch(int sig, struct sigaction *old)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  /* Restarted system calls: a signal in the middle of writing a file must
   * not turn into a write error. */
  sa.sa_flags = SA_RESTART;
  return sigaction(sig, &sa, old);
}

int strata_stop_install(void)
{
  if (catch(SIGTERM, NULL) != 0 || catch(SIGUSR1, NULL) != 0) return -1;
  installed = 1;
  return 0;
}

int strata_stop_installed(void) { return installed; }

void strata_stop_unblock(void)
{
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
}

void strata_stop_raise(int sig)
{
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  _exit(128 + sig); /* a signal whose default is to be ignored */
}

void strata_stop_uninstall(void)
{
  if (!installed) return;
  signal(SIGTERM, SIG_DFL);
  signal(SIGUSR1, SIG_DFL);
  installed = 0;
  if (requested) strata_stop_raise(requested);
}

int strata_stop_requested(void) { return requested; }

static void sleep_ms(long ms)
{
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

void strata_stop_child(int pid)
{
  if (!installed) return;
  if (pid > 0) {
    /* Ctrl-C and a closed terminal reach only the terminal's process
     * group, no longer the child's: pass them on while it runs (unless
     * they are ignored, as under nohup or in a background job). */
    sigaction(SIGINT, NULL, &saved_int);
    sigaction(SIGHUP, NULL, &saved_hup);
    if (saved_int.sa_handler != SIG_IGN) catch(SIGINT, NULL);
    if (saved_hup.sa_handler != SIG_IGN) catch(SIGHUP, NULL);
    child = pid;
    /* A signal before the child was known: it must not start its work. */
    if (requested) kill(-(pid_t)pid, SIGTERM);
    return;
  }
  pid_t g = child;
  child = 0;
  /* The child is reaped, but what it started (cc1, as, ld) may not have
   * died yet and could still write its output: wait for the group (1 s at
   * most; a signal ended it, so the wait is short). */
  for (int i = 0; requested && g > 0 && i < 1000 && kill(-g, 0) == 0; i++) sleep_ms(1);
  sigaction(SIGINT, &saved_int, NULL);
  sigaction(SIGHUP, &saved_hup, NULL);
}

/* ---- exits strata does not make ------------------------------------------ */

static const char *guard_msg;
static pid_t guard_pid;

static void on_exit_unplanned(void)
{
  /* A child forked by a library exits as it likes. */
  if (!guard_msg || getpid() != guard_pid) return;
  ssize_t n = write(STDERR_FILENO, guard_msg, strlen(guard_msg));
  (void)n;
  /* _exit: the other threads may be in the middle of the integrand, and
   * the files must stay as they are (the log says "running", not done). */
  _exit(1);
}

void strata_stop_guard_exit(const char *msg)
{
  static int registered;
  if (msg && !registered) registered = atexit(on_exit_unplanned) == 0;
  guard_pid = getpid();
  guard_msg = msg;
}
