/* The strata command as users run it: blocks SIGTERM and SIGUSR1, then
 * execs the program proper with the same arguments and environment.
 *
 * Why a second executable: the program proper loads some fifty shared
 * libraries (MPI, HDF5, CUDA) before any of its code runs, and a stop
 * signal in those milliseconds (a job's early warning, passed on by its
 * script) would end it by the signal's default action.  This one is linked
 * statically with nothing but libc, so that its first act comes within
 * microseconds of exec.  A blocked signal stays pending across execve; the
 * program proper catches it and unblocks (strata_stop_unblock), and the
 * signal then asks it to stop like any other (doc/slurm.md).
 *
 * Even libc's start-up (relocations, TLS) comes after the
 * kernel has returned from execve, so on x86-64 and AArch64 the entry point
 * is strata_entry below: the rt_sigprocmask system call, then libc's
 * _start as usual (configure links with -e strata_entry there).  main
 * blocks the signals again, for the other architectures.
 *
 * The program proper is found from this file's own location, never from
 * PATH or argv[0]: beside it as app/strata (the build tree), else where
 * make install put it. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef STRATA_PROGRAM
#error "STRATA_PROGRAM: the installed program proper's path"
#endif

/* The mask's bits: SIGTERM (15) and SIGUSR1 (10) are 1 << (sig - 1) on
 * both; the register that carries the dynamic loader's fini function to
 * _start (rdx, x0) is kept. */
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl strata_entry\n"
        ".type strata_entry, @function\n"
        "strata_entry:\n"
        "  mov %rdx, %r12\n"
        "  mov $14, %eax\n" /* rt_sigprocmask(SIG_BLOCK, &set, NULL, 8) */
        "  xor %edi, %edi\n"
        "  lea strata_stop_set(%rip), %rsi\n"
        "  xor %edx, %edx\n"
        "  mov $8, %r10d\n"
        "  syscall\n"
        "  mov %r12, %rdx\n"
        "  jmp _start\n"
        ".section .rodata\n"
        ".balign 8\n"
        "strata_stop_set: .quad 0x4200\n"
        ".text\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl strata_entry\n"
        ".type strata_entry, %function\n"
        "strata_entry:\n"
        "  mov x19, x0\n"
        "  mov x8, #135\n" /* rt_sigprocmask(SIG_BLOCK, &set, NULL, 8) */
        "  mov x0, #0\n"
        "  adr x1, strata_stop_set\n"
        "  mov x2, #0\n"
        "  mov x3, #8\n"
        "  svc #0\n"
        "  mov x0, x19\n"
        "  b _start\n"
        ".balign 8\n"
        "strata_stop_set: .quad 0x4200\n");
#endif

int main(int argc, char **argv, char **envp)
{
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGUSR1);
  sigprocmask(SIG_BLOCK, &stop, NULL);
  (void)argc;

  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) {
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    const char *rel = "/app/strata";
    if (slash && (size_t)(slash - path) + strlen(rel) < sizeof path) {
      strcpy(slash, rel);
      if (access(path, X_OK) == 0) execve(path, argv, envp);
    }
  }
  execve(STRATA_PROGRAM, argv, envp);
  int e = errno;
  fprintf(stderr, "strata: cannot run the program %s: %s (is strata installed?)\n",
          STRATA_PROGRAM, strerror(e));
  return 1;
}
