/* Tables for user integrands: the job file's `tables =` list, and the HDF5
 * datasets it names loaded into strata_table structs (include/strata/table.h)
 * that the integrand reads through the prelude (include/strata/integrand.h).
 * File layout and syntax: doc/integrands.md, section "Tables". */
#ifndef STRATA_IO_TABLE_H
#define STRATA_IO_TABLE_H
#include <stddef.h>
#include <stdint.h>

#include "strata/table.h"

/* A name is a C identifier: the compile step pastes it into the macro
 * STRATA_TABLE_INDEX_<name>. */
#define STRATA_TABLE_NAME_MAX 31
#define STRATA_TABLE_FILE_MAX 4096
#define STRATA_TABLE_DSET_MAX 1024

/* One entry of `tables = name=file:/dataset, ...`.  file is kept as written
 * (a relative path is not resolved here: the caller rewrites it against the
 * job file's directory before loading, if that is what it wants). */
typedef struct {
  char name[STRATA_TABLE_NAME_MAX + 1];
  char file[STRATA_TABLE_FILE_MAX];
  char dataset[STRATA_TABLE_DSET_MAX];
} strata_table_spec;

/* Parses spec (the value of `tables =`; empty or blank: no tables) into
 * out[0..*n-1], at most max entries.  Entries are separated by commas and
 * may be surrounded by blanks; the file is split from the dataset at the
 * entry's last ':'.  Messages start with where ("job.ini: integral.tables").
 * STRATA_OK or STRATA_EINVAL (strata_last_error says which entry and why). */
int strata_tables_parse(const char *spec, strata_table_spec *out, int max, int *n,
                        const char *where);

/* The loaded tables.  Opaque: everything goes through the accessors. */
typedef struct strata_table_set strata_table_set;

/* Loads spec[0..n-1] (n may be 0: an empty set), each distinct file:dataset
 * read once; values and grids become doubles.  On failure *out is NULL and
 * the code is STRATA_EIO (unreadable file or dataset), STRATA_EINVAL (a
 * dataset or grid that is not a valid table) or STRATA_ENOMEM, with a
 * one-line message naming the table, file and dataset. */
int strata_tables_load(const strata_table_spec *spec, int n, strata_table_set **out);
void strata_tables_free(strata_table_set *set);

int strata_tables_count(const strata_table_set *set);
/* The array, in the order of the spec, to pass to the integrand as
 * `tables`; valid until strata_tables_free. */
const strata_table *strata_tables_array(const strata_table_set *set);
/* The names, in the same order (for strata_source_set_tables). */
const char *const *strata_tables_names(const strata_table_set *set);
const char *strata_tables_name(const strata_table_set *set, int k);

/* What a deep copy of table k (say to GPU memory) must copy; every other
 * field of strata_table is a plain value:
 *   v: nx * ny doubles (rank 1: ny == 1), row-major, v[i * ny + j];
 *   x: nx doubles when x != NULL (non-uniform grid), else nothing;
 *   y: ny doubles when y != NULL (rank 2, non-uniform), else nothing.
 * strata_tables_doubles is the sum of the three counts. */
size_t strata_tables_doubles(const strata_table_set *set, int k);
/* The memory the set holds for values and grids, in bytes (tables that
 * name the same file:dataset share theirs, counted once). */
size_t strata_tables_bytes(const strata_table_set *set);
/* A hash of the tables' shapes, grids and values, in order (not of their
 * names or files): part of a job's identity, since a checkpoint is only
 * valid for the same data. */
uint64_t strata_tables_hash(const strata_table_set *set);
#endif
