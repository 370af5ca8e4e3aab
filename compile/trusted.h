/* Which files strata trusts to read what it runs or goes on from: on a
 * shared cluster a link, a FIFO or a file another user planted or may
 * change is none of them.  The checks are made on the descriptor that is
 * then read, so that a file swapped in after the check is never the one
 * read.  The rules: a regular file (a FIFO is refused, never waited on),
 * reached without following a symbolic link, owned by the effective user,
 * and for what strata runs or trusts (sources, job files, tables, maps)
 * also writable by no one else, and owned by the user or by root (who can
 * change anything already). */
#ifndef STRATA_TRUSTED_H
#define STRATA_TRUSTED_H
#include <sys/stat.h>

/* checks: 0, or these.  NOT_WRITABLE: also writable by nobody else, and
 * root's files trusted as the user's; ANY_OWNER: any user's file (one only
 * shown). */
enum { STRATA_TRUST_NOT_WRITABLE = 1, STRATA_TRUST_ANY_OWNER = 2 };

/* A descriptor of path (open flags O_RDONLY or O_RDWR), opened without
 * following a link or waiting on a FIFO, of a regular file that passes
 * checks; its status in *sb.  Otherwise -1 and a one-line error "PATH:
 * cannot read the WHAT: ..." ("write" with O_RDWR; tail, e.g. "; the file
 * is left as it is", ends the refusals of links and owners and failed
 * opens). */
int strata_trusted_open(const char *path, int flags, const char *what, const char *tail,
                        int checks, struct stat *sb);
#endif
