/* Users' integrands: C source from a file or a job file's inline body,
 * compiled at run time — into a shared object with the system C compiler
 * for the CPU backend, and (gpu/jit.cu) with NVRTC into the sampling
 * kernels for the CUDA backend.  Both compile the same translation unit:
 * the prelude (strata/integrand.h), the table names, the user's code under
 * #line directives (so diagnostics name the user's file and lines), and a
 * small wrapper that checks the function's signature and adapts it to the
 * form the backends call. */
#ifndef STRATA_USERCODE_H
#define STRATA_USERCODE_H
#include <stddef.h>
#include <stdint.h>

#include "strata/strata.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_source {
  char origin[4200];     /* the user's file, or "JOB: integral.body": for messages */
  char function[64];
  int extended;          /* void f(x, dim, params, tables, out) rather than double f(x, dim, params) */
  int ncomp;
  int ntables;
  char table_names[STRATA_MAX_TABLES][32];
  char *code;            /* the user's text (a whole function for inline bodies) */
  uint64_t tables_hash;  /* of the tables' contents: part of the job's identity */
  uint64_t hash;         /* strata_source_hash's, made whenever the above change */
  /* CPU build */
  void *dl;
  strata_fn f;
  strata_vfn fv;
  int cpu_cached;        /* found in the cache rather than compiled */
  double cpu_build_s;
  char compiler[1024];   /* STRATA_CC and STRATA_CFLAGS where not the defaults, else "" */
} strata_source;

/* From "file:PATH" (path as the program opens it; shown as `shown`) or an
 * inline body.  Reads the file; no compiling yet. */
int strata_source_from_file(const char *path, const char *shown, const char *function,
                            int extended, int ncomp, strata_source **out);
int strata_source_from_body(const char *body, const char *shown, int extended, int ncomp,
                            strata_source **out);
/* Names the tables in order: the code reaches table k as
 * STRATA_TABLE(tables, name), through a macro STRATA_TABLE_INDEX_name;
 * contents_hash is strata_tables_hash of their contents. */
int strata_source_set_tables(strata_source *s, const char *const *names, int n,
                             uint64_t contents_hash);
void strata_source_free(strata_source *s);

enum { STRATA_UNIT_C = 0, STRATA_UNIT_CUDA = 1 };
/* The translation unit (malloc'ed): STRATA_UNIT_C defines strata_entry_f
 * (simple form) or strata_entry_fv (extended); STRATA_UNIT_CUDA defines the
 * functor struct strata_user_fn with a __device__ eval(x, dim, params,
 * tables, out), for the kernel template. */
char *strata_source_unit(const strata_source *s, int kind);
/* A program with stop signals of its own (app/stop.h) hears of every
 * compiler it should end with it: child(pid) when one starts, child(0)
 * when it is gone; requested() says a stop signal arrived (then the
 * compile is ended, and fails naming it). */
void strata_source_watch(void (*child)(int pid), int (*requested)(void));
/* The pseudo file name of the wrapper in diagnostics. */
const char *strata_source_wrapper_name(void);

/* Compiles (or finds in the cache) the shared object and loads it: sets
 * s->f (simple) or s->fv (extended).  A compile error is one line naming
 * the user's file, line and the compiler's message; the compiler's whole
 * output goes to stderr when `talk` is set. */
int strata_source_build_cpu(strata_source *s, int talk);
/* How the CPU code was built ("" for the defaults): part of the job's
 * definition, so that a checkpoint is not continued by code built
 * otherwise. */
const char *strata_source_compiler(const strata_source *s);
/* The error for a failed compile, from the compiler's output: one line
 * naming the user's file and line, or the missing function. */
int strata_source_compile_failed(const strata_source *s, const char *tool, const char *log);
/* Hash of everything that decides what the integrand computes: the unit,
 * the form, ncomp and the tables' contents.  Made when the source is made
 * and when its tables are set, not on every call: the GPU backend asks for
 * it every iteration, and writing the unit out again each time showed in
 * the iteration's time. */
uint64_t strata_source_hash(const strata_source *s);

/* The embedded headers: the prelude for authors, and what NVRTC needs. */
typedef struct {
  const char *name;      /* as included: "strata/integrand.h" */
  const char *text;
} strata_embedded_file;
const strata_embedded_file *strata_embedded_files(int *n);
#ifdef __cplusplus
}
#endif
#endif
