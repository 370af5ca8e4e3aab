#include "stop.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t requested;

static void on_signal(int sig) { requested = sig; }

int strata_stop_install(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  /* Restarted system calls: a signal in the middle of writing a file must
   * not turn into a write error. */
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0) return -1;
  return 0;
}

int strata_stop_requested(void) { return requested; }
